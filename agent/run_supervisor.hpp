#pragma once
#include <atomic>
#include <functional>
#include <string>

#include "agent/launcher.hpp"
#include "common/json.hpp"

namespace scalebench {

// Runs one assigned run to its end: launches the ranks, passes each record line on as it
// arrives, kills the whole process group at the timeout or on cancel, and turns every way of
// failing into an outcome with a reason.
class RunSupervisor {
 public:
  struct Outcome {
    std::string status;  // ok, failed, timeout, cancelled
    std::string reason;
    int records = 0;
    bool outcome_recorded = false;  // the run itself sent a record saying why it failed or timed out
  };
  using RecordSink = std::function<void(Json record)>;

  RunSupervisor(LaunchConfig launch, std::string work_dir)
      : launch_(std::move(launch)), work_dir_(std::move(work_dir)) {}

  // `hosts`: the run's nodes, this one first, when the coordinator placed it (over several
  // nodes: mpirun gets a hostfile of them, or inside SLURM one srun step spans them); empty for a
  // run started without placement.
  Outcome execute(long long run_id, int attempt, const Json& spec, const std::vector<int>& gpu_ids,
                  const std::vector<LaunchHost>& hosts, const std::atomic<bool>& cancel, const RecordSink& sink);

 private:
  LaunchConfig launch_;
  std::string work_dir_;
};

}  // namespace scalebench
