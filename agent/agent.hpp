#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "agent/active_runs.hpp"
#include "agent/launcher.hpp"
#include "agent/outbox.hpp"
#include "common/json.hpp"
#include "http/http_client.hpp"

namespace scalebench {

// A node's agent: registers with the coordinator, heartbeats, takes runs, supervises them and
// streams their records back through the outbox.
class Agent {
 public:
  struct Options {
    std::string coordinator_url;
    std::string name;
    // The name other nodes' mpirun reaches this node by, written into the hostfiles of runs
    // over several nodes ("" = the hostname).
    std::string address;
    std::string work_dir;
    int slots = 1;
    LaunchConfig launch;
    std::string token;    // bearer token for the coordinator ("" = none)
    std::string ca_file;  // https:// coordinator: the CA its certificate must chain to ("" = default)
    // Told when a run starts and ends (scalebench_run_info, dcgm-exporter's job mapping); none
    // when null.
    ActiveRuns* active_runs = nullptr;
  };
  explicit Agent(Options options);
  ~Agent();
  // Until `stop` becomes true (SIGTERM): then tells the coordinator it is stopping (a last
  // heartbeat), ends its running runs as lost (their host went away; the coordinator retries them
  // while their retries allow) and delivers what is queued.
  void run(const std::atomic<bool>& stop);

 private:
  void register_self();
  void heartbeat();
  void start_run(const Json& assignment);
  // What ActiveRuns is told of a run on these GPUs of this node.
  ActiveRuns::Run active_run(long long run_id, const Json& spec, const std::vector<int>& gpus) const;

  Options options_;
  HttpClient client_;
  Json info_;
  std::unique_ptr<Outbox> outbox_;
  double interval_s_ = 1.0;
  // Numbers this process's heartbeats: the coordinator ignores one older than a heartbeat it has
  // already handled (an answer this agent gave up on, handled late).
  const long long boot_;
  long long beat_ = 0;

  std::mutex mutex_;
  std::set<long long> active_;  // assigned runs whose end the coordinator has not acknowledged
  std::map<long long, std::shared_ptr<std::atomic<bool>>> cancel_flags_;
  // One thread per run in flight: an agent runs as many runs at once as the coordinator places
  // on its GPUs. A finished run's thread is joined at the next start or at stop.
  std::map<long long, std::thread> workers_;
  std::set<long long> finished_workers_;
  void join_finished();
  std::atomic<bool> stopping_{false};
};

}  // namespace scalebench
