#include "agent/launcher.hpp"

#include <algorithm>

#include "agent/local_launch.hpp"
#include "agent/srun_launch.hpp"
#include "common/cpu_binding.hpp"
#include "common/rank_binding.hpp"

namespace scalebench {

Json run_file_json(long long run_id, int attempt, const Json& spec, const std::vector<LaunchHost>& hosts,
                   bool bind_ranks) {
  Json run_file{{"run_id", run_id}, {"attempt", attempt}, {"spec", spec}};
  if (hosts.size() < 2) return run_file;
  Json list = Json::array();
  for (const auto& h : hosts) {
    Json entry{{"host", h.host}, {"gpus", h.gpus}};
    if (bind_ranks && !h.numa.empty()) entry["numa"] = h.numa;
    if (!h.slurm_node.empty()) entry["slurm_node"] = h.slurm_node;
    list.push_back(std::move(entry));
  }
  run_file["hosts"] = list;
  return run_file;
}

void set_visible_devices(LaunchPlan& plan, const std::vector<int>& gpu_ids) {
  if (gpu_ids.empty()) return;
  std::string visible;
  for (int id : gpu_ids) visible += (visible.empty() ? "" : ",") + std::to_string(id);
  plan.env["CUDA_VISIBLE_DEVICES"] = visible;
  // The ids are the inventory's (NVML, PCI bus order); CUDA numbers by speed unless told.
  plan.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
}

void set_cpu_binding(LaunchPlan& plan, const LaunchConfig& config, const Json& run_spec,
                     const std::vector<int>& gpu_ids) {
  if (!config.bind_ranks) return;
  const std::string spec = cpu_binding_spec(
      rank_numa_nodes(run_spec.value("ranks_per_node", 1), gpu_ids, config.gpu_numa), config.sysfs_root);
  if (!spec.empty()) plan.env[kCpuBindingVariable] = spec;
}

namespace {
std::string hostfile_text(const std::vector<LaunchHost>& hosts, int ranks_per_node) {
  std::string text;
  for (const auto& h : hosts) text += h.host + " slots=" + std::to_string(ranks_per_node) + "\n";
  return text;
}

// The SLURM node names of `hosts`, in their order, when each has one and no two share one (one
// job step across them); empty otherwise.
std::vector<std::string> slurm_nodes_of(const std::vector<LaunchHost>& hosts) {
  std::vector<std::string> names;
  for (const auto& h : hosts) {
    if (h.slurm_node.empty() || std::find(names.begin(), names.end(), h.slurm_node) != names.end()) return {};
    names.push_back(h.slurm_node);
  }
  return names;
}
}  // namespace

LaunchPlan plan_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                       const std::vector<int>& gpu_ids, const std::vector<LaunchHost>& hosts,
                       const std::string& hostfile, const std::string& run_file_text) {
  // A command workload's scalebench-run starts its program itself, whichever the launcher. Inside
  // SLURM a run over several nodes is one srun step across them when each node's agent gave its
  // SLURM node name; otherwise it goes through mpirun's hostfile (inside a SLURM allocation Open
  // MPI then starts its daemons through SLURM). Each rank binds its own host's GPUs from the run
  // file either way.
  const bool own_program = run_spec.value("workload", "") == "command";
  if (hosts.size() <= 1 && !own_program) {
    if (config.launcher == Launcher::local) return plan_local_launch(config, run_spec, spec_file, gpu_ids);
    if (config.launcher == Launcher::srun)
      return plan_srun_launch(config, run_spec, spec_file, gpu_ids, {config.slurm_node});
  }
  if (hosts.size() > 1 && !own_program && config.launcher == Launcher::srun)
    if (const auto nodes = slurm_nodes_of(hosts); !nodes.empty())
      return plan_srun_launch(config, run_spec, spec_file, gpu_ids, nodes, run_file_text);
  LaunchPlan plan;
  const bool multi_node = hosts.size() > 1;
  std::vector<std::string> placement_args;  // mpirun's, for runs over several nodes
  if (multi_node) {
    plan.hostfile_text = hostfile_text(hosts, run_spec.value("ranks_per_node", 1));
    // Open MPI 4.1's daemons share the topology through shared memory mapped into a "hole" of
    // their address space, and crash there at random (orted: hwloc_shmem_topology_write,
    // SIGSEGV), leaving mpirun waiting for ever: ranks discover the topology themselves instead.
    placement_args = {"--hostfile", hostfile, "--map-by", "slot", "--mca", "rtc_hwloc_vmhole", "none"};
  }
  // Over several nodes each rank picks its host's GPUs itself: only the numbering goes along,
  // and ranks are not bound (this agent knows the NUMA nodes of its own GPUs only).
  auto visible = [&](LaunchPlan& p) {
    if (!multi_node) {
      set_visible_devices(p, gpu_ids);
      // A command workload's program starts (and binds) its own ranks.
      if (!own_program) set_cpu_binding(p, config, run_spec, gpu_ids);
    } else if (!gpu_ids.empty()) {
      p.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    }
  };
  if (run_spec.value("workload", "") == "command") {
    // scalebench-run starts the program itself (under mpirun, or as ranks with torchrun's
    // variables, or once) and reads its figures; it is told how this node runs mpirun.
    plan.argv = {config.run_program, "--spec", spec_file, "--emit", "records", "--mpirun", config.mpirun};
    for (const auto& a : config.extra_args) {
      plan.argv.push_back("--mpirun-arg");
      plan.argv.push_back(a);
    }
    for (const auto& a : placement_args) {
      plan.argv.push_back("--mpirun-arg");
      plan.argv.push_back(a);
    }
    if (config.as_root) plan.argv.push_back("--allow-run-as-root");
    if (run_spec.contains("env"))
      for (const auto& [k, v] : run_spec["env"].items()) plan.env[k] = v.get<std::string>();
    visible(plan);
    return plan;
  }
  const int ranks = run_spec.value("nodes", 1) * run_spec.value("ranks_per_node", 1);
  plan.argv = {config.mpirun, "-np", std::to_string(ranks)};
  if (config.as_root) plan.argv.push_back("--allow-run-as-root");
  // Placement is ours to decide: more ranks than cores is allowed on hosts, and mpirun binds
  // nothing itself: a GPU run's ranks bind to their GPU's NUMA node from SCALEBENCH_CPU_BINDING.
  for (const char* a : {"--oversubscribe", "--bind-to", "none"}) plan.argv.push_back(a);
  for (const auto& a : config.extra_args) plan.argv.push_back(a);
  for (const auto& a : placement_args) plan.argv.push_back(a);
  if (run_spec.contains("env"))
    for (const auto& [k, v] : run_spec["env"].items()) plan.env[k] = v.get<std::string>();
  visible(plan);
  if (multi_node) plan.env["SCALEBENCH_RUN_FILE"] = run_file_text;
  for (const auto& [k, v] : plan.env) {
    plan.argv.push_back("-x");
    plan.argv.push_back(k);
  }
  plan.argv.push_back(config.run_program);
  if (multi_node)
    plan.argv.insert(plan.argv.end(), {"--spec-env", "SCALEBENCH_RUN_FILE"});
  else
    plan.argv.insert(plan.argv.end(), {"--spec", spec_file});
  plan.argv.insert(plan.argv.end(), {"--emit", "records"});
  return plan;
}

}  // namespace scalebench
