#pragma once
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace scalebench {

// The runs an agent is running now, told to those who join on them instead of labelling every
// telemetry series with a run (which would make new series for every run):
// - scalebench_run_info on the agent's /metrics, one series per GPU of each run, to join GPU
//   series on by (Hostname, gpu);
// - with a job-mapping folder, dcgm-exporter's HPC job mapping (its --hpc-job-mapping-dir): a
//   file per GPU, named after the GPU's index and holding the run's id, so that DCGM's own series
//   carry the run as their hpc_job label. Files are written when a run starts and removed when it
//   ends. Thread-safe: each run's thread calls start and end.
class ActiveRuns {
 public:
  struct Run {
    long long run_id = 0;
    std::string experiment, workload;
    std::vector<int> gpus;           // NVML indices on this node; empty for a host-memory run
    std::vector<std::string> uuids;  // the same GPUs' UUIDs ("" where unknown)
  };
  // `hostname`: the Hostname label. `job_mapping_dir`: "" writes no files; else it is created
  // when missing, and an Error names it when it cannot be.
  ActiveRuns(std::string hostname, std::string job_mapping_dir);

  // A failure to write a mapping file is logged, not thrown: the run itself goes on.
  void start(const Run& run);
  void end(long long run_id);
  std::string metrics_text() const;

 private:
  void write_mapping(int gpu, long long run_id) const;
  void remove_mapping(int gpu, long long run_id) const;

  const std::string hostname_, job_mapping_dir_;
  mutable std::mutex mutex_;
  std::map<long long, Run> runs_;
};

}  // namespace scalebench
