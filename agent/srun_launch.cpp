#include "agent/srun_launch.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/rank_binding.hpp"

namespace scalebench {

LaunchPlan plan_srun_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                            const std::vector<int>& gpu_ids, const std::vector<std::string>& nodes,
                            const std::string& run_file_text) {
  const int node_count = run_spec.value("nodes", 1);
  const int ranks_per_node = run_spec.value("ranks_per_node", 1);
  if (node_count < 1 || ranks_per_node < 1)
    throw Error("srun launch: placement needs nodes >= 1 and ranks_per_node >= 1");
  if (static_cast<int>(nodes.size()) != node_count)
    throw Error("srun launch: the placement has " + std::to_string(node_count) + " node(s) but " +
                std::to_string(nodes.size()) + " SLURM node name(s) were given");
  std::string nodelist;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string& n = nodes[i];
    if (n.empty())
      throw Error(i == 0 ? "srun launch: no SLURM node name for this agent (is SLURMD_NODENAME set?)"
                         : "srun launch: node " + std::to_string(i) + " of the run has no SLURM node name");
    // One task block per node: a name twice would be one node with two nodes' ranks.
    if (std::find(nodes.begin(), nodes.begin() + static_cast<long>(i), n) != nodes.begin() + static_cast<long>(i))
      throw Error("srun launch: SLURM node " + n + " is twice in the run's nodes");
    nodelist += (nodelist.empty() ? "" : ",") + n;
  }
  const bool multi_node = node_count > 1;
  if (multi_node && run_file_text.empty())
    throw Error("srun launch: a run over several nodes needs its run file in the environment");

  // Each task on its GPU's NUMA node. srun's map is one list for every node, right only for this
  // node's GPUs: over several nodes srun binds nothing and each rank binds itself from its host's
  // NUMA nodes in the run file (workloads/runtime/host_binding.hpp).
  const std::vector<int> numa = config.bind_ranks && node_count == 1
                                    ? rank_numa_nodes(ranks_per_node, gpu_ids, config.gpu_numa)
                                    : std::vector<int>{};
  std::string cpu_bind = "--cpu-bind=none";
  std::string mem_bind;
  if (!numa.empty()) {
    std::string domains;
    for (int n : numa) domains += (domains.empty() ? "" : ",") + std::to_string(n);
    cpu_bind = "--cpu-bind=map_ldom:" + domains;
    mem_bind = "--mem-bind=map_ldom:" + domains;
  }

  LaunchPlan plan;
  plan.argv = {config.srun, "--mpi=" + config.srun_mpi, "--nodes=" + std::to_string(node_count),
               "--ntasks=" + std::to_string(node_count * ranks_per_node),
               "--ntasks-per-node=" + std::to_string(ranks_per_node), "--nodelist=" + nodelist,
               // The step shares the allocation with the agents' own step, which holds CPUs too.
               "--overlap",
               // Placement is ours to decide: more ranks than allocated cores is allowed, and a
               // GPU run's tasks are bound to their GPU's NUMA node (else to nothing).
               "--overcommit", cpu_bind,
               // One rank failing ends the step, as mpirun ends the job.
               "--kill-on-bad-exit=1",
               // srun's whole environment, the variant's variables included, goes to every rank,
               // whatever SLURM_EXPORT_ENV the job was submitted with. Values with commas survive,
               // which --export=NAME=VALUE lists would split.
               "--export=ALL"};
  if (!mem_bind.empty()) plan.argv.push_back(mem_bind);
  // Over several nodes each node's ranks are consecutive, as mpirun's by-slot mapping has them, the
  // nodes in SLURM's order. SLURM's default can be cyclic (it is with fewer allocated CPUs on a node
  // than tasks, as in the testbed's job), which spreads neighbouring ranks over the nodes.
  if (multi_node) plan.argv.push_back("--distribution=block");
  for (const auto& a : config.srun_extra_args) plan.argv.push_back(a);
  if (run_spec.contains("env"))
    for (const auto& [k, v] : run_spec["env"].items()) plan.env[k] = v.get<std::string>();
  // SLURM's PMIx plugin by default collects MPI_Init's modex with its ring algorithm and the
  // barrier after it with its tree: the two ran out of order, a rank left MPI_Init and sent to one
  // still in the modex, and Open MPI 4.1 crashed there (a TCP message before its handler was
  // registered). One algorithm for both keeps them in order over several nodes; a variant's choice
  // stands.
  if (multi_node && config.srun_mpi.rfind("pmix", 0) == 0 && !config.srun_pmix_fence.empty() &&
      !plan.env.count("SLURM_PMIX_FENCE"))
    plan.env["SLURM_PMIX_FENCE"] = config.srun_pmix_fence;
  if (multi_node) {
    // Each rank sets its own host's GPUs (one list cannot be right on every node); the numbering
    // goes along. The run file travels in srun's environment (--export=ALL).
    if (!gpu_ids.empty()) plan.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    plan.env["SCALEBENCH_RUN_FILE"] = run_file_text;
    plan.argv.insert(plan.argv.end(), {config.run_program, "--spec-env", "SCALEBENCH_RUN_FILE", "--emit", "records"});
    return plan;
  }
  set_visible_devices(plan, gpu_ids);
  if (!gpu_ids.empty()) {
    // slurmd's GPU plugin rewrites CUDA_VISIBLE_DEVICES in each task (to the step's GPUs, or to
    // nothing when the step asked for none), so each rank sets the placement's devices itself.
    plan.argv.push_back("env");
    for (const char* var : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"})
      plan.argv.push_back(std::string(var) + "=" + plan.env.at(var));
  }
  for (const std::string& a :
       {config.run_program, std::string("--spec"), spec_file, std::string("--emit"), std::string("records")})
    plan.argv.push_back(a);
  return plan;
}

}  // namespace scalebench
