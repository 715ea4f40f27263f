#include "agent/launcher.hpp"

#include "agent/local_launch.hpp"
#include "agent/srun_launch.hpp"

namespace scalebench {

void set_visible_devices(LaunchPlan& plan, const std::vector<int>& gpu_ids) {
  if (gpu_ids.empty()) return;
  std::string visible;
  for (int id : gpu_ids) visible += (visible.empty() ? "" : ",") + std::to_string(id);
  plan.env["CUDA_VISIBLE_DEVICES"] = visible;
  // The ids are the inventory's (NVML, PCI bus order); CUDA numbers by speed unless told.
  plan.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
}

LaunchPlan plan_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                       const std::vector<int>& gpu_ids) {
  // A command workload's scalebench-run starts its program itself, whichever the launcher.
  if (config.launcher == Launcher::local && run_spec.value("workload", "") != "command")
    return plan_local_launch(config, run_spec, spec_file, gpu_ids);
  if (config.launcher == Launcher::srun && run_spec.value("workload", "") != "command")
    return plan_srun_launch(config, run_spec, spec_file, gpu_ids, {config.slurm_node});
  LaunchPlan plan;
  if (run_spec.value("workload", "") == "command") {
    // scalebench-run starts the program itself (under mpirun, or as ranks with torchrun's
    // variables, or once) and reads its figures; it is told how this node runs mpirun.
    plan.argv = {config.run_program, "--spec", spec_file, "--emit", "records", "--mpirun", config.mpirun};
    for (const auto& a : config.extra_args) {
      plan.argv.push_back("--mpirun-arg");
      plan.argv.push_back(a);
    }
    if (config.as_root) plan.argv.push_back("--allow-run-as-root");
    if (run_spec.contains("env"))
      for (const auto& [k, v] : run_spec["env"].items()) plan.env[k] = v.get<std::string>();
    set_visible_devices(plan, gpu_ids);
    return plan;
  }
  const int ranks = run_spec.value("nodes", 1) * run_spec.value("ranks_per_node", 1);
  plan.argv = {config.mpirun, "-np", std::to_string(ranks)};
  if (config.as_root) plan.argv.push_back("--allow-run-as-root");
  // Placement is ours to decide: no core binding, and more ranks than cores is allowed on hosts.
  for (const char* a : {"--oversubscribe", "--bind-to", "none"}) plan.argv.push_back(a);
  for (const auto& a : config.extra_args) plan.argv.push_back(a);
  if (run_spec.contains("env"))
    for (const auto& [k, v] : run_spec["env"].items()) plan.env[k] = v.get<std::string>();
  set_visible_devices(plan, gpu_ids);
  for (const auto& [k, v] : plan.env) {
    plan.argv.push_back("-x");
    plan.argv.push_back(k);
  }
  for (const std::string& a :
       {config.run_program, std::string("--spec"), spec_file, std::string("--emit"), std::string("records")})
    plan.argv.push_back(a);
  return plan;
}

}  // namespace scalebench
