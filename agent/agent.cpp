#include "agent/agent.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "agent/inventory.hpp"
#include "agent/run_supervisor.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "experiment/sweep.hpp"
#include "record/record.hpp"

namespace scalebench {

namespace {
bool is_finish(const std::string& path) { return path.size() > 7 && path.compare(path.size() - 7, 7, "/finish") == 0; }
}  // namespace

namespace {
// A number no earlier process of this agent is likely to have used (62 random bits).
long long boot_id() {
  std::random_device rd;
  return static_cast<long long>(((static_cast<unsigned long long>(rd()) << 32) | rd()) >> 2);
}
}  // namespace

Agent::Agent(Options options)
    : options_(std::move(options)), client_(options_.coordinator_url, std::chrono::seconds(5)), boot_(boot_id()) {
  if (!options_.token.empty()) client_.set_bearer_token(options_.token);
  if (!options_.ca_file.empty()) client_.set_ca_file(options_.ca_file);
  std::filesystem::create_directories(options_.work_dir);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  Json caps = read_capabilities(options_.launch.run_program);
  Json node = read_node_gpus();
  // An agent started with CUDA_VISIBLE_DEVICES offers those GPUs only (its runs then name them by
  // their NVML index, in PCI bus order).
  std::string ignored;
  const Json all_gpus = node["gpus"];
  node["gpus"] = visible_gpus(all_gpus, std::getenv("CUDA_VISIBLE_DEVICES"), &ignored);
  if (node["gpus"].size() != all_gpus.size())
    log::info("CUDA_VISIBLE_DEVICES=" + std::string(std::getenv("CUDA_VISIBLE_DEVICES")) + ": offering " +
              std::to_string(node["gpus"].size()) + " of this node's " + std::to_string(all_gpus.size()) + " GPUs");
  if (!ignored.empty()) log::warn("CUDA_VISIBLE_DEVICES: '" + ignored + "' names no GPU here; ignored, as CUDA does");
  info_ = Json{{"name", options_.name},
               {"hostname", host},
               {"address", options_.address.empty() ? std::string(host) : options_.address},
               {"gpus", node["gpus"]},
               {"topology", node["topology"]},
               {"slots", options_.slots},
               {"capabilities", caps.value("backends", Json::array())},
               {"workloads", caps.value("workloads", Json::array())},
               {"version", kVersion}};
  // Inside SLURM, the node's SLURM name: the leader of a run over several nodes lists them in its
  // srun step (the coordinator passes it in the run's hosts).
  if (!options_.launch.slurm_node.empty()) info_["slurm_node"] = options_.launch.slurm_node;
  // Ranks bind to their GPU's NUMA node: which node each GPU hangs off (as registered).
  for (const auto& g : info_["gpus"]) options_.launch.gpu_numa[g.value("index", -1)] = g.value("numa_node", -1);
  auto journal = std::make_unique<OutboxJournal>(options_.work_dir + "/outbox.jsonl");
  outbox_ = std::make_unique<Outbox>(
      client_,
      [this](const std::string& path, const Json& body) {
        // A delivered run end: the coordinator knows, so the run leaves the active set.
        if (is_finish(path)) {
          std::lock_guard lock(mutex_);
          active_.erase(body.value("run_id", 0LL));
        }
      },
      std::move(journal));
  // Results a previous process of this agent could not deliver go out first. A run whose end is
  // among them stays claimed in heartbeats until that end is delivered, so the coordinator
  // does not take it for lost meanwhile.
  const auto left = outbox_->queued();
  if (!left.empty()) {
    std::lock_guard lock(mutex_);
    for (const auto& [path, body] : left)
      if (is_finish(path)) active_.insert(body.value("run_id", 0LL));
    log::info("delivering " + std::to_string(left.size()) + " messages left undelivered in " +
              outbox_->journal()->path() + " by the agent's previous run");
  }
}

Agent::~Agent() {
  for (auto& [id, t] : workers_)
    if (t.joinable()) t.join();
}

void Agent::join_finished() {
  std::set<long long> done;
  {
    std::lock_guard lock(mutex_);
    done.swap(finished_workers_);
  }
  for (long long id : done) {
    auto it = workers_.find(id);
    if (it == workers_.end()) continue;
    if (it->second.joinable()) it->second.join();
    workers_.erase(it);
  }
}

void Agent::register_self() {
  Json answer = client_.post_json("/api/v1/agents/register", info_);
  interval_s_ = answer.value("heartbeat_interval_s", 1.0);
  log::info("registered with " + client_.base_url() + " as " + answer.value("agent_id", std::string()) + " (" +
            std::to_string(info_["gpus"].size()) + " GPUs, backends " + info_["capabilities"].dump() + ")");
}

void Agent::heartbeat() {
  Json active = Json::array();
  {
    std::lock_guard lock(mutex_);
    for (long long id : active_) active.push_back(id);
  }
  HttpResponse r = client_.request("POST", "/api/v1/agents/" + options_.name + "/heartbeat",
                                   Json{{"active", active}, {"boot", boot_}, {"beat", ++beat_}}.dump());
  if (r.status == 404) {
    log::info("coordinator does not know this agent (it restarted with a new store?); registering again");
    register_self();
    return;
  }
  if (r.status != 200) throw Error("heartbeat: HTTP " + std::to_string(r.status) + ": " + r.body);
  Json answer = Json::parse(r.body);
  interval_s_ = answer.value("heartbeat_interval_s", interval_s_);
  for (const auto& id : answer.value("cancel", Json::array())) {
    std::lock_guard lock(mutex_);
    auto it = cancel_flags_.find(id.get<long long>());
    if (it != cancel_flags_.end()) it->second->store(true);
  }
  // A run read here is in active_ from now on, so the next heartbeat (sent only after this one's
  // answer or timeout) confirms its assignment. One in an answer this agent gave up on is not
  // listed, and the coordinator takes it back without using an attempt (docs/api.md).
  for (const auto& assignment : answer.value("runs", Json::array())) start_run(assignment);
}

ActiveRuns::Run Agent::active_run(long long run_id, const Json& spec, const std::vector<int>& gpus) const {
  ActiveRuns::Run run{run_id, spec.value("experiment", ""), spec.value("workload", ""), gpus, {}};
  for (int index : gpus) {
    std::string uuid;
    for (const auto& g : info_["gpus"])
      if (g.value("index", -1) == index) uuid = g.value("uuid", "");
    run.uuids.push_back(uuid);
  }
  return run;
}

void Agent::start_run(const Json& a) {
  const long long run_id = a.at("run_id").get<long long>();
  const int attempt = a.at("attempt").get<int>();
  const Json spec = a.at("spec");
  // Where the run goes: this node first (it starts mpirun or srun), then the others, each with its
  // GPUs and, inside SLURM, its SLURM node name.
  std::vector<LaunchHost> hosts;
  for (const auto& h : a.value("hosts", Json::array()))
    hosts.push_back({h.value("host", std::string()), h.value("gpus", std::vector<int>{}),
                     h.value("numa", std::vector<int>{}), h.value("slurm_node", std::string())});
  join_finished();
  if (workers_.count(run_id)) {
    log::warn("run " + std::to_string(run_id) + " is assigned again while its previous attempt is ending; waiting");
    if (workers_[run_id].joinable()) workers_[run_id].join();
    workers_.erase(run_id);
  }
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard lock(mutex_);
    active_.insert(run_id);
    cancel_flags_[run_id] = cancel;
  }
  workers_[run_id] = std::thread([this, run_id, attempt, spec, hosts, cancel] {
    std::vector<int> gpus;
    if (spec.value("gpu", false)) {
      if (!hosts.empty()) {
        gpus = hosts.front().gpus;  // the GPUs the coordinator gave this run here
      } else {
        for (int i = 0; i < gpus_per_node_of(spec); ++i)
          gpus.push_back(info_["gpus"][static_cast<std::size_t>(i)].value("index", i));
      }
    }
    const std::string records_path = "/api/v1/runs/" + std::to_string(run_id) + "/records";
    long long seq = 0;
    auto sink = [&](Json record) {
      record["run_id"] = run_id;
      outbox_->post(records_path,
                    Json{{"attempt", attempt}, {"records", Json::array({{{"seq", seq++}, {"record", record}}})}});
    };
    if (options_.active_runs) options_.active_runs->start(active_run(run_id, spec, gpus));
    RunSupervisor supervisor(options_.launch, options_.work_dir);
    RunSupervisor::Outcome outcome;
    try {
      outcome = supervisor.execute(run_id, attempt, spec, gpus, hosts, *cancel, sink);
    } catch (const std::exception& e) {
      outcome = {"failed", std::string("agent could not launch the run: ") + e.what(), 0, false};
    }
    // Ended because this agent is stopping: the run did not fail by itself, its host went away.
    // Its end says so (`lost`), and the coordinator treats the attempt as lost, as when a node of
    // it is lost: it makes the status record (none is sent from here) and queues the run again
    // while its retries allow.
    const bool lost = outcome.status == "cancelled" && stopping_.load();
    if (lost) {
      outcome.status = "failed";
      outcome.reason = "agent " + options_.name + " was stopped (SIGTERM) while the run was in flight";
    }
    if (outcome.status != "ok" && outcome.status != "skipped" && !outcome.outcome_recorded && !lost) {
      Json host_names = Json::array();
      for (const auto& h : hosts) host_names.push_back(h.host);
      if (hosts.empty()) host_names.push_back(info_["hostname"]);
      Json placement{{"nodes", spec.value("nodes", 1)},
                     {"ranks_per_node", spec.value("ranks_per_node", 1)},
                     {"ranks", spec.value("nodes", 1) * spec.value("ranks_per_node", 1)},
                     {"gpus", static_cast<int>(gpus.size())},
                     {"hosts", host_names}};
      sink(status_record(record_context(run_id, spec, placement), outcome.status, outcome.reason));
    }
    if (options_.active_runs) options_.active_runs->end(run_id);
    log::info("run " + std::to_string(run_id) + " " + outcome.status + " (" + std::to_string(outcome.records) +
              " records)" + (outcome.reason.empty() ? "" : ": " + outcome.reason));
    Json finish{{"run_id", run_id}, {"attempt", attempt}, {"status", outcome.status}, {"reason", outcome.reason}};
    if (lost) finish["lost"] = true;
    outbox_->post("/api/v1/runs/" + std::to_string(run_id) + "/finish", std::move(finish));
    std::lock_guard lock(mutex_);
    cancel_flags_.erase(run_id);
    finished_workers_.insert(run_id);
  });
}

void Agent::run(const std::atomic<bool>& stop) {
  bool registered = false, warned = false;
  while (!stop.load()) {
    try {
      if (!registered) {
        register_self();
        registered = true;
      } else {
        heartbeat();
      }
      if (warned) log::info("coordinator reachable again");
      warned = false;
    } catch (const std::exception& e) {
      if (!warned) log::warn(std::string("coordinator unreachable, retrying: ") + e.what());
      warned = true;
    }
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval_s_);
    while (!stop.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  log::info("stopping: ending the current run, delivering queued results");
  stopping_.store(true);
  // Said first, so that the coordinator gives this node no more work and counts it lost to the
  // runs it is a node of; the runs it leads end below, their records delivered before their end.
  if (registered) {
    try {
      Json active = Json::array();
      {
        std::lock_guard lock(mutex_);
        for (long long id : active_) active.push_back(id);
      }
      HttpResponse r =
          client_.request("POST", "/api/v1/agents/" + options_.name + "/heartbeat",
                          Json{{"active", active}, {"boot", boot_}, {"beat", ++beat_}, {"stopping", true}}.dump());
      if (r.status != 200) throw Error("HTTP " + std::to_string(r.status) + ": " + r.body);
    } catch (const std::exception& e) {
      log::warn(std::string("could not tell the coordinator this agent is stopping: ") + e.what());
    }
  }
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, flag] : cancel_flags_) flag->store(true);
  }
  for (auto& [id, t] : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
  if (!outbox_->drain(std::chrono::seconds(10)))
    log::warn(std::to_string(outbox_->pending()) + " messages not delivered yet: they are kept in " +
              (outbox_->journal() ? outbox_->journal()->path() : std::string("memory (lost)")) +
              " and go out when this agent starts again with the same --work-dir");
}

}  // namespace scalebench
