#pragma once
#include <string>

#include "agent/launcher.hpp"

namespace scalebench {

// The agent's --launcher: "mpirun", "srun", "local", or "auto": srun inside a SLURM allocation
// (`slurm_job_id`, the SLURM_JOB_ID of the agent's environment, set and not empty), else mpirun.
// Throws Error naming the accepted values for anything else.
Launcher choose_launcher(const std::string& name, const char* slurm_job_id);

const char* launcher_name(Launcher launcher);

}  // namespace scalebench
