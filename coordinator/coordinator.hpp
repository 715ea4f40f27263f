#pragma once
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "common/json.hpp"
#include "common/spec.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/record_batch.hpp"
#include "coordinator/store.hpp"

namespace scalebench {

// An answer to an API call: HTTP status and JSON body ({"error": ...} when not 2xx).
struct ApiResult {
  int status = 200;
  Json body;
};

// The coordinator's state machine: experiments in, runs out to agents, records back. Every
// method is one API call; a mutex serialises them, the store persists each change at once.
class Coordinator {
 public:
  struct Options {
    std::string db_path;
    double heartbeat_interval_s = 1.0;
    double heartbeat_timeout_s = 10.0;
  };
  explicit Coordinator(Options options);

  ApiResult submit(const std::string& yaml, const std::string& source);
  ApiResult list_experiments();
  ApiResult experiment(const std::string& id_or_name);
  ApiResult cancel(const std::string& id_or_name);
  ApiResult results(const std::string& experiment, long long after, int limit);

  ApiResult register_agent(const Json& info);
  ApiResult heartbeat(const std::string& agent_id, const Json& body);
  ApiResult add_records(long long run_id, const RecordBatch& batch);
  ApiResult finish_run(long long run_id, const Json& body);
  ApiResult list_agents();

  // Agents silent for longer than the heartbeat timeout are lost, and so are their runs.
  void check_liveness();
  std::string metrics_text();

 private:
  double now() const;
  const Experiment* experiment_spec(long long experiment_id);
  void end_run(Store::Run& run, const std::string& state, const std::string& reason, bool add_status_record);
  // The run's attempt ended because an agent of it was lost: failed, and queued again while the
  // experiment's `retries` allow.
  void lose_run(Store::Run& run, const std::string& why);
  void refresh_gauges();
  void track_progress(const std::string& name, long long experiment_id);
  void refresh_progress();

  Options options_;
  std::mutex mutex_;
  Store store_;
  Metrics metrics_;
  std::map<long long, Experiment> spec_cache_;
  // The newest Metrics::kMaxExperiments experiment names with the id of each one's newest
  // submission, oldest first: the experiments /metrics shows progress for.
  std::deque<std::pair<std::string, long long>> progress_experiments_;
  std::map<long long, double> ended_at_;
  std::set<std::string> draining_;
  // When each agent's last heartbeat arrived, kept here too: a heartbeat the store could not
  // record (locked, full) still proves the agent alive.
  std::map<std::string, double> heard_from_;  // agents still stopping a run whose attempt ended here  // when each
                                              // finished experiment's last run ended
};

}  // namespace scalebench
