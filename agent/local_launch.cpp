#include "agent/local_launch.hpp"

#include "common/error.hpp"

namespace scalebench {

LaunchPlan plan_local_launch(const LaunchConfig& config, const Json& run_spec, const std::string& spec_file,
                             const std::vector<int>& gpu_ids) {
  const int ranks = run_spec.value("nodes", 1) * run_spec.value("ranks_per_node", 1);
  if (ranks != 1)
    throw Error("the local launcher starts one rank and this run has " + std::to_string(ranks) +
                "; start the agent with --launcher mpirun or srun for runs of several ranks");
  LaunchPlan plan;
  plan.argv = {config.run_program, "--spec", spec_file, "--emit", "records"};
  if (run_spec.contains("env"))
    for (const auto& [k, v] : run_spec["env"].items()) plan.env[k] = v.get<std::string>();
  set_visible_devices(plan, gpu_ids);
  set_cpu_binding(plan, config, run_spec, gpu_ids);
  return plan;
}

}  // namespace scalebench
