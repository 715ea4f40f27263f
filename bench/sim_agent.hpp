#pragma once
// A simulated agent of the coordinator benchmarks: what a real agent sends (register, heartbeat,
// records), without the runs behind it.
#include <memory>
#include <string>
#include <vector>

#include "http/http_client.hpp"

namespace scalebench::load {

struct SimAgent {
  std::string name;
  std::string heartbeat_path;  // made once: the heartbeats are the most frequent call
  // Its own client, and so its own kept-alive connections, as an agent process has.
  std::unique_ptr<HttpClient> client;
  long long run_id = 0;  // the run it was given (0: none)
  int attempt = 0;
  long long next_seq = 0;  // how far its record stream has come: the next seq to send
};

// "load-00042": names sort in the order agents were made.
std::string sim_agent_name(const std::string& prefix, int index);
// Registers an agent of `gpus` GPUs under `name`, as scalebench-agent does; throws on refusal.
SimAgent register_sim_agent(const std::string& url, const std::string& name, int gpus);
// Takes the first run a heartbeat's answer assigns, when the agent holds none: true if it took one.
bool take_run(SimAgent& agent, const Json& answer);
// Heartbeats until the coordinator hands the agent a run, as the first heartbeats of a cluster
// take the queue: each heartbeat's milliseconds into `ms`. A busy answer (the coordinator's state
// held past the heartbeat's wait) gives nothing: it is counted in `busy` and the agent tries
// again 10 ms later, 100 times at most. Throws Error when no run comes.
void take_first_run(SimAgent& agent, std::vector<double>* ms, int* busy);
// The body of a heartbeat listing the agent's run ({"active":[]} without one).
std::string heartbeat_body(const SimAgent& agent);
// POST /api/v1/experiments of `runs` runs of `gpus` GPUs each (one agent's worth), named `name`;
// returns the experiment's id. The user's call, with its own connection.
long long submit_runs(const std::string& url, const std::string& name, long long runs, int gpus);

}  // namespace scalebench::load
