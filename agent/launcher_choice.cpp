#include "agent/launcher_choice.hpp"

#include "common/error.hpp"

namespace scalebench {

Launcher choose_launcher(const std::string& name, const char* slurm_job_id) {
  if (name == "mpirun") return Launcher::mpirun;
  if (name == "srun") return Launcher::srun;
  if (name == "local") return Launcher::local;
  if (name == "auto") return slurm_job_id && *slurm_job_id ? Launcher::srun : Launcher::mpirun;
  throw Error("--launcher '" + name + "': use mpirun, srun, local or auto");
}

const char* launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::mpirun:
      return "mpirun";
    case Launcher::srun:
      return "srun";
    case Launcher::local:
      return "local";
  }
  return "?";
}

}  // namespace scalebench
