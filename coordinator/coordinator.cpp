#include "coordinator/coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <string>
#include <tuple>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/record.hpp"
#include "common/sweep.hpp"
#include "coordinator/scheduler.hpp"

namespace scalebench {

namespace {
ApiResult error(int status, const std::string& message) { return {status, Json{{"error", message}}}; }
bool is_terminal(const std::string& state) {
  return state == "ok" || state == "failed" || state == "timeout" || state == "skipped" || state == "cancelled";
}
std::size_t array_size(const Json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? it->size() : 0;
}
Json placement_of(const Store::Run& run) {
  const Json& s = run.spec;
  int nodes = s.value("nodes", 1), per = s.value("ranks_per_node", 1);
  Json p{{"nodes", nodes}, {"ranks_per_node", per}, {"ranks", nodes * per}, {"gpus", nodes * gpus_per_node_of(s)}};
  if (!run.hosts.empty()) {
    Json hosts = Json::array();
    for (const auto& h : run.hosts) hosts.push_back(h.value("host", ""));
    p["hosts"] = hosts;
  }
  return p;
}
}  // namespace

Coordinator::Coordinator(Options options)
    : options_(std::move(options)),
      store_(options_.db_path),
      read_store_(options_.db_path),
      records_store_(options_.db_path) {
  // After a restart, agents get a full timeout to reappear before their runs are declared lost,
  // and the result gauges are rebuilt from what was stored.
  // Checkpoints run beside the API, not in the commit that fills the WAL; 16,384 pages (64 MiB)
  // stays a bound should they fall behind.
  checkpointer_ = std::make_unique<WalCheckpointer>(options_.db_path, std::chrono::milliseconds(500));
  store_.set_wal_autocheckpoint(16384);
  node_health_ = std::make_unique<NodeHealth>(options_.db_path);
  records_store_.set_wal_autocheckpoint(16384);
  agents_ = store_.agents();  // in id order
  for (const auto& [id, name] : store_.experiment_names()) track_progress(name, id);
  // The stored records are counted now; the result gauges are rebuilt from them beside the API
  // (reading 661,000 records took 27 s before the coordinator listened).
  const auto [stored, last_record] = store_.record_extent();
  std::vector<std::string> names;
  for (const auto& [name, id] : progress_experiments_) names.push_back(name);
  metrics_.begin_replay(static_cast<double>(stored), names);
  refresh_gauges();
  // The grace period starts now that the store is read (on a large store that took seconds; agents
  // were declared lost soon after the coordinator listened when it started before).
  const double t = now();
  {
    Store::Transaction tx(store_);
    for (auto& a : agents_)
      if (a.state == "alive") {
        a.last_seen = t;
        store_.touch_agent(a.id, a.state, t);
      }
    tx.commit();
  }
  saved_at_ = t;
  for (const auto& a : agents_)
    if (a.state != "gone") heard_[a.id] = a.last_seen;
  // Assignments handed out before the restart and never confirmed: their leaders get the same
  // full timeout to confirm them (a heartbeat listing them) before they are queued again.
  for (const Store::Run& r : store_.runs_in_flight())
    if (!r.delivered) unconfirmed_[r.id] = t + options_.heartbeat_timeout_s;
  replay_ = std::thread([this, last = last_record] { replay_results(last); });  // last: nothing throws after it
}

void Coordinator::replay_results(long long last_record) {
  const auto start = std::chrono::steady_clock::now();
  long long after = 0, replayed = 0;
  try {
    Store store(options_.db_path, true);
    while (after < last_record && !stopping_.load()) {
      Json page = store.records(std::nullopt, after, 2000);
      if (page.empty()) break;
      for (const auto& r : page) {
        if (r["record_id"].get<long long>() > last_record) break;  // posted since the start: counted live
        metrics_.replay_record(r);
        ++replayed;
      }
      after = page.back()["record_id"].get<long long>();
    }
  } catch (const std::exception& e) {
    log::warn(std::string("result gauges not rebuilt from the store: ") + e.what());
  }
  metrics_.end_replay();
  if (replayed > 0)
    log::info("result gauges rebuilt from " + std::to_string(replayed) + " stored records in " +
              std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) + " s");
}

Coordinator::~Coordinator() {
  stopping_.store(true);
  if (replay_.joinable()) replay_.join();
  try {
    save_last_seen();
  } catch (const std::exception& e) {
    log::warn(std::string("could not save the agents' last heartbeat times: ") + e.what());
  }
}

Store::Agent* Coordinator::find_agent(const std::string& id) {
  auto it = std::lower_bound(agents_.begin(), agents_.end(), id,
                             [](const Store::Agent& a, const std::string& key) { return a.id < key; });
  return it != agents_.end() && it->id == id ? &*it : nullptr;
}

void Coordinator::save_last_seen() {
  std::lock_guard lock(mutex_);
  merge_heard();
  save_last_seen_locked();
}

void Coordinator::save_last_seen_locked() {
  saved_at_ = now();
  if (unsaved_seen_.empty()) return;
  Store::Transaction tx(store_);
  for (const auto& id : unsaved_seen_)
    if (const Store::Agent* a = find_agent(id)) store_.touch_agent(a->id, a->state, a->last_seen);
  tx.commit();
  unsaved_seen_.clear();
}

double Coordinator::now() const {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

const Experiment* Coordinator::experiment_spec(long long experiment_id) {
  auto it = spec_cache_.find(experiment_id);
  if (it != spec_cache_.end()) return &it->second;
  std::string source;
  auto yaml = store_.experiment_yaml(experiment_id, &source);
  if (!yaml) return nullptr;
  try {
    return &spec_cache_.emplace(experiment_id, parse_experiment(*yaml, source)).first->second;
  } catch (const Error& e) {
    log::warn("stored experiment " + std::to_string(experiment_id) + " no longer parses: " + e.what());
    return nullptr;
  }
}

void Coordinator::refresh_gauges() {
  if (counted_agents_ != agents_generation_) {  // a pass over the agents only when one changed
    int alive = 0, lost = 0;
    for (const auto& a : agents_) {
      alive += a.state == "alive";
      lost += a.state == "lost";
    }
    metrics_.set_agents(alive, lost);
    counted_agents_ = agents_generation_;
  }
  metrics_.set_runs(store_.count_runs("queued"), store_.count_runs("running") + store_.count_runs("cancelling"));
}

void Coordinator::track_progress(const std::string& name, long long experiment_id) {
  std::erase_if(progress_experiments_, [&](const auto& e) { return e.first == name; });
  progress_experiments_.emplace_back(name, experiment_id);
  while (progress_experiments_.size() > Metrics::kMaxExperiments) {
    ended_at_.erase(progress_experiments_.front().second);
    progress_experiments_.pop_front();
  }
}

void Coordinator::refresh_progress() {
  const double t = now();
  std::vector<Metrics::ExperimentProgress> progress;
  for (const auto& [name, id] : progress_experiments_) {
    Json summary = store_.experiment_summary(id);
    if (summary.is_null()) continue;
    Metrics::ExperimentProgress p;
    p.name = name;
    for (const auto& [state, n] : summary["states"].items()) p.runs_by_state[state] = n.get<int>();
    const double submitted = summary["submitted_at"].get<double>();
    double end = t;
    if (summary["finished"].get<bool>()) {
      // A finished experiment stays finished (a new submission gets a new id): read its end once.
      auto it = ended_at_.find(id);
      if (it == ended_at_.end()) {
        double last = submitted;
        for (const auto& r : store_.runs(id)) last = std::max(last, r.finished_at);
        it = ended_at_.emplace(id, last).first;
      }
      end = it->second;
    }
    p.elapsed_s = std::max(0.0, end - submitted);
    progress.push_back(std::move(p));
  }
  metrics_.set_progress(progress);
}

void Coordinator::end_run(Store::Run& run, const std::string& state, const std::string& reason,
                          bool add_status_record) {
  run.state = state;
  run.reason = reason;
  run.finished_at = now();
  store_.update_run(run);
  if (add_status_record) {
    Json rec = status_record(record_context(run.id, run.spec, placement_of(run)), state, reason);
    store_.add_record(run.id, run.attempt, -1 - static_cast<long long>(store_.record_count(run.id)), rec);
    metrics_.record_ingested(rec);
  }
  metrics_.run_finished(state);
}

ApiResult Coordinator::submit(const std::string& yaml, const std::string& source) {
  // Parsed (bounded: check_yaml_bounds) and expanded before the state is taken, so that neither a
  // hostile file nor a large sweep holds up the heartbeats.
  Experiment ex;
  try {
    ex = parse_experiment(yaml, source);
  } catch (const SpecError& e) {
    Json issues = Json::array();
    for (const auto& i : e.issues())
      issues.push_back(
          {{"file", i.file}, {"line", i.line}, {"column", i.column}, {"field", i.field}, {"message", i.message}});
    return {400, Json{{"error", e.what()}, {"issues", issues}}};
  }
  ClusterShape shape;
  {
    std::lock_guard lock(mutex_);
    shape = cluster_shape(agents_);
  }
  if (!shape.gpu && shape.ranks_per_node == 0)
    return error(409, "no agent is registered; start scalebench-agent --coordinator URL on a node first");
  const std::vector<Store::NewRun> prepared = Store::prepare_runs(expand(ex, shape));
  // The cluster may have changed shape meanwhile: the runs were expanded for the one it had a
  // moment ago, as they would have been had the submission come then. Runs that no longer fit
  // are failed below, as always.
  std::lock_guard lock(mutex_);
  double t = now();
  std::vector<long long> run_ids;
  long long id = store_.add_prepared_experiment(ex.name, source, yaml, prepared, t, &run_ids);
  metrics_.experiment_submitted(ex.name);
  track_progress(ex.name, id);
  spec_cache_[id] = ex;
  // Runs that were settled at expansion (skipped, unplaceable) get their record now, and so do
  // those that need more nodes than the cluster has. Whether a run fits depends on its shape
  // only (nodes, GPUs or not, GPUs per node): asked once per shape, not once per run and agent.
  std::map<std::tuple<int, bool, int>, std::string> fits;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    const Store::NewRun& n = prepared[i];
    std::string why;
    if (n.state == "queued") {
      const std::tuple<int, bool, int> key{n.spec.value("nodes", 1), n.spec.value("gpu", false),
                                           gpus_per_node_of(n.spec)};
      auto it = fits.find(key);
      if (it == fits.end()) it = fits.emplace(key, never_fits(n.spec, agents_)).first;
      why = it->second;
    }
    if (n.state == "queued" && why.empty()) continue;
    auto run = store_.run(run_ids[i]);
    if (!run) continue;
    if (n.state != "queued")
      end_run(*run, n.state, n.reason, true);
    else
      end_run(*run, "failed", why, true);
  }
  refresh_gauges();
  note_store_ok();
  log::info("experiment " + std::to_string(id) + " '" + ex.name + "' submitted from " + source + ": " +
            std::to_string(prepared.size()) + " runs");
  return {201, Json{{"experiment_id", id}, {"name", ex.name}, {"runs", prepared.size()}, {"gpu", shape.gpu}}};
}

ApiResult Coordinator::list_experiments() {
  std::lock_guard lock(read_mutex_);
  return {200, Json{{"experiments", read_store_.list_experiments()}}};
}

ApiResult Coordinator::experiment(const std::string& id_or_name, long long after, long long limit) {
  // From the reading connection: what was committed, without the state's mutex.
  std::lock_guard lock(read_mutex_);
  auto id = read_store_.find_experiment(id_or_name);
  if (!id) return error(404, "no experiment '" + id_or_name + "'");
  Json e = read_store_.experiment_summary(*id);
  const std::map<long long, std::size_t> counts = read_store_.record_counts(*id);
  Json runs = Json::array();
  long long last = after;
  bool complete = true;
  for (const auto& r : read_store_.runs(*id, std::nullopt, after, limit > 0 ? limit + 1 : 0)) {
    if (limit > 0 && static_cast<long long>(runs.size()) == limit) {
      complete = false;
      break;
    }
    last = r.id;
    const auto n = counts.find(r.id);
    runs.push_back({{"run_id", r.id},
                    {"index", r.index},
                    {"state", r.state},
                    {"reason", r.reason},
                    {"agent", r.agent_id},
                    {"attempt", r.attempt},
                    {"variant", r.spec.value("variant", "")},
                    {"placement", placement_of(r)},
                    {"hosts", r.hosts},
                    {"params", r.spec.value("params", Json::object())},
                    {"started_at", r.started_at},
                    {"finished_at", r.finished_at},
                    {"records", n == counts.end() ? 0 : n->second}});
  }
  e["run_list"] = std::move(runs);
  if (limit > 0) {
    e["next_after"] = last;
    e["complete"] = complete;
  }
  return {200, e};
}

ApiResult Coordinator::cancel(const std::string& id_or_name) {
  std::optional<long long> id;
  std::vector<long long> open;
  {
    std::lock_guard lock(mutex_);
    id = store_.find_experiment(id_or_name);
    if (!id) return error(404, "no experiment '" + id_or_name + "'");
    open = store_.open_run_ids(*id);
  }
  // In slices, each one transaction under the lock, so that heartbeats are answered between them
  // (20,000 runs at once held the state for seconds). A run that a heartbeat starts meanwhile is
  // still in `open`, and becomes cancelling when its slice comes.
  int queued = 0, running = 0;
  for (std::size_t first = 0; first < open.size(); first += kCancelSlice) {
    std::lock_guard lock(mutex_);
    Store::Transaction tx(store_);
    for (std::size_t i = first; i < std::min(open.size(), first + kCancelSlice); ++i) {
      const Store::Run* current = store_.open_run(open[i]);
      if (!current) continue;  // it ended meanwhile
      Store::Run r = *current;
      if (r.state == "queued") {
        end_run(r, "cancelled", "cancelled by user before it started", true);
        ++queued;
      } else if (r.state == "running") {
        r.state = "cancelling";  // the agent kills it at its next heartbeat and reports back
        store_.update_run(r);
        ++running;
      }
    }
    tx.commit();
    note_store_ok();
    refresh_gauges();
  }
  return {200, Json{{"experiment_id", *id}, {"cancelled_queued", queued}, {"cancelling_running", running}}};
}

ApiResult Coordinator::results(const std::string& experiment, long long after, int limit) {
  std::lock_guard lock(read_mutex_);
  std::optional<long long> id;
  if (!experiment.empty()) {
    id = read_store_.find_experiment(experiment);
    if (!id) return error(404, "no experiment '" + experiment + "'");
  }
  Json recs = read_store_.records(id, after, limit);
  long long next = recs.empty() ? after : recs.back()["record_id"].get<long long>();
  return {200, Json{{"records", recs}, {"next_after", next}, {"complete", static_cast<int>(recs.size()) < limit}}};
}

ApiResult Coordinator::register_agent(const Json& info) {
  std::lock_guard lock(mutex_);
  if (!info.is_object() || !info.contains("name") || !info["name"].is_string() ||
      info["name"].get<std::string>().empty())
    return error(400, "register: body needs a non-empty string 'name'");
  static const std::regex name_re("[A-Za-z0-9_.:-]{1,128}");
  if (!std::regex_match(info["name"].get<std::string>(), name_re))
    return error(400,
                 "register: agent name '" + info["name"].get<std::string>() + "' must be 1-128 of A-Z a-z 0-9 _ . : -");
  if (!info.contains("gpus") || !info["gpus"].is_array()) return error(400, "register: body needs 'gpus' (an array)");
  Store::Agent a;
  a.id = info["name"];
  a.hostname = info.value("hostname", a.id);
  a.info = info;
  a.state = "alive";
  a.registered_at = a.last_seen = now();
  store_.upsert_agent(a);
  if (Store::Agent* known = find_agent(a.id))
    *known = a;
  else
    agents_.insert(std::upper_bound(agents_.begin(), agents_.end(), a,
                                    [](const Store::Agent& x, const Store::Agent& y) { return x.id < y.id; }),
                   a);
  unsaved_seen_.erase(a.id);
  {
    std::lock_guard seen(seen_mutex_);
    heard_[a.id] = a.last_seen;
  }
  ++agents_generation_;
  refresh_gauges();
  log::info("agent " + a.id + " registered (" + a.hostname + ", " + std::to_string(info["gpus"].size()) + " GPUs)");
  return {200, Json{{"agent_id", a.id}, {"heartbeat_interval_s", options_.heartbeat_interval_s}}};
}

ApiResult Coordinator::heartbeat(const std::string& agent_id, const Json& body) {
  // The fast path: the agent is heard at once, whatever holds the state. check_liveness reads
  // these times, so that an agent is never lost for want of the mutex.
  {
    std::lock_guard seen(seen_mutex_);
    auto it = heard_.find(agent_id);
    if (it == heard_.end()) return error(404, "unknown agent '" + agent_id + "'; register again");
    it->second = now();
  }
  std::unique_lock lock(mutex_, std::defer_lock);
  if (!lock.try_lock_for(kHeartbeatWait))
    // Nothing is assigned or cancelled in this answer; the next heartbeat that finds the state
    // free reconciles the agent's runs as usual.
    return {200, Json{{"runs", Json::array()},
                      {"cancel", Json::array()},
                      {"heartbeat_interval_s", options_.heartbeat_interval_s},
                      {"busy", true}}};
  Store::Agent* agent = find_agent(agent_id);
  if (!agent || agent->state == "gone") return error(404, "unknown agent '" + agent_id + "'; register again");
  // A heartbeat older than one already handled (its agent gave up on the answer, and it was
  // handled late): reconciling it would take back a run that the later answer delivered.
  if (body.contains("boot") && body.contains("beat")) {
    const std::pair<long long, long long> beat{body["boot"].get<long long>(), body["beat"].get<long long>()};
    auto [last, first] = last_beat_.try_emplace(agent_id, beat);
    if (!first && last->second.first == beat.first && beat.second <= last->second.second)
      return {200, Json{{"runs", Json::array()},
                        {"cancel", Json::array()},
                        {"heartbeat_interval_s", options_.heartbeat_interval_s},
                        {"stale", true}}};
    last->second = beat;
  }
  // Alive from now on, whatever the store can record: last_seen is kept here and saved later.
  agent->last_seen = now();
  unsaved_seen_.insert(agent_id);
  const bool was_lost = agent->state != "alive";

  std::set<long long> active;
  if (body.contains("active") && body["active"].is_array())
    for (const auto& id : body["active"])
      if (id.is_number_integer()) active.insert(id.get<long long>());

  std::vector<Store::Run> restarted;  // held here, unknown to the agent: it restarted
  // Handed to the agent but absent from this heartbeat, which it sent after reading any answer
  // (heartbeats go one at a time): that answer never reached it.
  std::vector<Store::Run> undelivered;
  Json cancel = Json::array();
  std::set<long long> held;
  std::vector<Store::Run> delivered;  // confirmed by this heartbeat: the store learns it below
  for (const Store::Run* r : store_.runs_held_by(agent_id)) {
    const bool confirmed = !unconfirmed_.count(r->id);
    if (!active.count(r->id)) {
      (confirmed ? restarted : undelivered).push_back(*r);
      continue;
    }
    if (!confirmed) unconfirmed_.erase(r->id);  // delivered: the agent runs it
    if (!r->delivered) delivered.push_back(*r);
    held.insert(r->id);
    if (r->state == "cancelling") cancel.push_back(r->id);
  }
  // A run the agent still runs whose attempt has ended here (the agent was lost and came back,
  // or a node of the run was lost): stop it. Until it is gone the agent is given nothing, as a
  // leader or as a node of another run, since what that run holds is no longer known here.
  bool draining = false;
  for (long long id : active)
    if (!held.count(id)) {
      draining = true;
      cancel.push_back(id);
    }
  if (draining)
    draining_.insert(agent_id);
  else
    draining_.erase(agent_id);

  // Whether a pass over the queue can change anything: with no queued run it cannot, nor when
  // this agent can lead nothing now and the agents did not change since the last sweep. Runs that
  // can never fit are looked for (a sweep) only when the agents changed since the last one (a
  // submission looks at its own runs): only a sweep goes over the whole queue.
  bool plan = false;
  const bool sweep = was_lost || agents_generation_ != swept_agents_;
  // Runs taken back below (undelivered, or lost to a restart) free room this pass can use.
  const bool freed = !undelivered.empty() || !restarted.empty();
  if (!draining_.count(agent_id) && (store_.any_queued() || freed))
    plan = sweep || freed || may_lead(*agent, store_.occupancy());
  Json assign = Json::array();
  if (!was_lost && restarted.empty() && undelivered.empty() && delivered.empty() && !plan)
    return {200, Json{{"runs", assign}, {"cancel", cancel}, {"heartbeat_interval_s", options_.heartbeat_interval_s}}};

  // All or nothing: a store error (locked, full) leaves no run half-assigned; the agent retries.
  Store::Transaction tx(store_);
  bool changed = was_lost;  // the gauges are refreshed only when a count moved
  if (was_lost) store_.touch_agent(agent_id, "alive", agent->last_seen);
  for (auto& r : restarted) {
    lose_run(r, "agent " + agent_id + " restarted while the run was in flight");
    changed = true;
  }
  for (auto& r : undelivered) {
    return_undelivered(r, "not in " + agent_id + "'s next heartbeat");
    changed = true;
  }
  for (auto& r : delivered) {
    r.delivered = true;
    store_.update_run(r);
  }
  // Alive for this pass; it stays so only if the transaction commits.
  struct StateGuard {
    Store::Agent* agent;
    std::string before;
    bool keep = false;
    ~StateGuard() {
      if (!keep) agent->state = before;
    }
  } guard{agent, agent->state};
  agent->state = "alive";
  if (plan) {
    // Without a sweep a pass starts at most one run per GPU of the agent, and reads one run more
    // (the first that waits) from the queue's index.
    const std::size_t look = sweep ? 0 : std::max<std::size_t>(1, array_size(agent->info, "gpus")) + 1;
    PassOptions pass;
    pass.check_fits = sweep;
    pass.leader_agent = agent;
    pass.closed = &draining_;
    Schedule plan_now = schedule(store_.queued_runs(look), agents_, store_.occupancy(), agent_id, pass);
    for (const auto& [id, why] : plan_now.fail)
      if (auto r = store_.run(id)) {
        end_run(*r, "failed", why, true);
        changed = true;
      }
    for (const auto& [id, hosts] : plan_now.start) {
      const Store::Run* open = store_.open_run(id);
      if (!open) continue;
      std::optional<Store::Run> run(*open);
      run->state = "running";
      run->agent_id = agent_id;
      run->attempt += 1;
      run->started_at = now();
      run->reason.clear();
      run->hosts = to_json(hosts);
      run->delivered = false;   // until its leader confirms it
      store_.update_run(*run);  // the store's occupancy takes its GPUs (or nodes) now
      assign.push_back({{"run_id", run->id}, {"attempt", run->attempt}, {"spec", run->spec}, {"hosts", run->hosts}});
      changed = true;
      std::string where;
      for (const auto& h : hosts) where += (where.empty() ? "" : ", ") + h.agent;
      log::info("run " + std::to_string(run->id) + " attempt " + std::to_string(run->attempt) + " -> " + where);
    }
  }
  tx.commit();
  note_store_ok();
  guard.keep = true;
  for (const auto& r : undelivered) unconfirmed_.erase(r.id);
  const double deadline = now() + options_.heartbeat_timeout_s;
  for (const auto& a : assign) unconfirmed_[a["run_id"].get<long long>()] = deadline;
  if (was_lost) ++agents_generation_;
  if (plan && sweep) swept_agents_ = agents_generation_;
  if (was_lost) {
    log::info("agent " + agent_id + " is back");
  }
  if (changed) refresh_gauges();
  return {200, Json{{"runs", assign}, {"cancel", cancel}, {"heartbeat_interval_s", options_.heartbeat_interval_s}}};
}

void Coordinator::return_undelivered(Store::Run& run, const std::string& why) {
  const std::string agent = run.agent_id;
  run.attempt -= 1;  // that attempt never started
  run.agent_id.clear();
  run.hosts = Json::array();
  run.started_at = 0;
  std::string what;
  if (run.state == "cancelling") {
    end_run(run, "cancelled", "cancelled by user before it started", true);
    what = "cancelled";
  } else {
    run.state = "queued";
    run.reason = "its assignment to " + agent + " was not confirmed (" + why + "); queued again";
    store_.update_run(run);
    what = "queued again";
  }
  log::warn("run " + std::to_string(run.id) + ": assignment to " + agent + " not confirmed (" + why + "); " + what +
            ", no attempt used");
}

void Coordinator::expire_unconfirmed(double t) {
  auto in_flight = [](const Store::Run* r) { return r && (r->state == "running" || r->state == "cancelling"); };
  std::erase_if(unconfirmed_, [&](const auto& u) { return !in_flight(store_.open_run(u.first)); });
  std::vector<Store::Run> late;
  for (const auto& [id, deadline] : unconfirmed_)
    if (deadline < t) late.push_back(*store_.open_run(id));
  if (late.empty()) return;
  const std::string why =
      "no confirmation within " + std::to_string(static_cast<int>(options_.heartbeat_timeout_s)) + " s";
  Store::Transaction tx(store_);
  for (auto& r : late) return_undelivered(r, why);
  tx.commit();
  for (const auto& r : late) unconfirmed_.erase(r.id);
  refresh_gauges();
}

void Coordinator::lose_run(Store::Run& run, const std::string& why) {
  const int attempt = run.attempt;
  end_run(run, "failed", why, true);  // the lost attempt's record says why, and stays
  const int retries = run.spec.value("retries", 0);
  if (attempt <= retries) {
    run.state = "queued";
    run.reason = "attempt " + std::to_string(attempt) + " lost (" + why + "); queued again";
    run.agent_id.clear();
    run.hosts = Json::array();
    run.finished_at = 0;
    store_.update_run(run);
    log::warn("run " + std::to_string(run.id) + ": " + run.reason);
  }
}

ApiResult Coordinator::add_records(long long run_id, const RecordBatch& batch) {
  // A batch is checked outside the lock, its run under it, and stored in one transaction on the
  // records connection, without the lock: heartbeats and other calls do not wait for its inserts.
  // A run that ends between that check and the commit keeps the batch, as it would have kept
  // one that came a moment earlier. Records are stored as the text they came in
  // (read_record_batch checked it is JSON), unless a reference adds its outcome.
  const int attempt = batch.attempt;
  for (const auto& item : batch.records) {
    std::string problem = item.problem();
    if (!problem.empty())
      return error(400, "record " + std::to_string(item.seq) + " of run " + std::to_string(run_id) + ": " + problem);
    if (item.run_id_value() != run_id) return error(400, "record names run " + item.run_id_text());
  }
  // Why the run takes no records (empty when it does).
  auto refused = [&](const Store::Run* run) -> std::optional<ApiResult> {
    if (!run) return error(404, "no run " + std::to_string(run_id));
    if (attempt != run->attempt)
      return error(409, "stale attempt " + std::to_string(attempt) + " of run " + std::to_string(run_id));
    if (is_terminal(run->state))
      return error(409, "run " + std::to_string(run_id) + " already ended as " + run->state +
                            (run->reason.empty() ? "" : ": " + run->reason));
    return std::nullopt;
  };
  // The run as it is now: from memory while it is open (the usual case), else from the file.
  std::optional<Store::Run> ended;
  auto current = [&]() -> const Store::Run* {
    if (const Store::Run* open = store_.open_run(run_id)) return open;
    ended = store_.run(run_id);
    return ended ? &*ended : nullptr;
  };
  std::vector<Reference> references;
  {
    std::lock_guard lock(mutex_);
    const Store::Run* run = current();
    if (auto r = refused(run)) return *r;
    unconfirmed_.erase(run_id);  // records of this attempt: it was delivered
    if (const Experiment* ex = experiment_spec(run->experiment_id)) references = ex->references;
  }
  std::vector<std::string> rewritten(batch.records.size());  // records a reference applies to
  for (std::size_t i = 0; i < batch.records.size() && !references.empty(); ++i) {
    Json full = batch.records[i].whole();  // references read params, placement and point
    Json outcomes = Json::array();
    for (const auto& ref : references) {
      Json o = evaluate_reference(ref, full);
      if (!o.is_null()) outcomes.push_back(o);
    }
    if (outcomes.empty()) continue;
    full["references"] = outcomes;
    rewritten[i] = full.dump();
  }
  std::vector<std::size_t> stored;
  {
    std::lock_guard records_lock(records_mutex_);
    {
      std::lock_guard lock(mutex_);
      if (auto r = refused(current())) return *r;  // it may have ended meanwhile
    }
    Store::Transaction tx(records_store_);
    for (std::size_t i = 0; i < batch.records.size(); ++i) {
      const auto& item = batch.records[i];
      const std::string_view text = rewritten[i].empty() ? item.text : std::string_view(rewritten[i]);
      if (records_store_.add_record_text(run_id, attempt, item.seq, text)) stored.push_back(i);
    }
    tx.commit();
  }
  for (std::size_t i : stored) {
    const RawRecord& r = batch.records[i];
    if (r.vouched)
      metrics_.record_ingested(r.experiment, r.ok_value, r.series_text, [&r] { return r.whole(); });
    else
      metrics_.record_ingested(r.fields, r.series_text, [&r] { return r.whole(); });
  }
  return {200, Json{{"stored", stored.size()}}};
}

ApiResult Coordinator::finish_run(long long run_id, const Json& body) {
  std::lock_guard lock(mutex_);
  auto run = store_.run(run_id);
  if (!run) return error(404, "no run " + std::to_string(run_id));
  if (body.value("attempt", 0) != run->attempt) return error(409, "stale attempt of run " + std::to_string(run_id));
  unconfirmed_.erase(run_id);                                              // its end came: it was delivered
  if (is_terminal(run->state)) return {200, Json{{"state", run->state}}};  // a resend: already done
  std::string status = body.value("status", "failed");
  if (!is_terminal(status)) return error(400, "finish: unknown status '" + status + "'");
  end_run(*run, status, body.value("reason", ""), false);
  note_store_ok();
  refresh_gauges();
  log::info("run " + std::to_string(run_id) + " " + status + (run->reason.empty() ? "" : ": " + run->reason));
  return {200, Json{{"state", status}}};
}

ApiResult Coordinator::list_agents() {
  std::lock_guard lock(mutex_);
  Json out = Json::array();
  double t = now();
  // What each agent's node is busy with: runs it leads or is a node of, and their GPUs there
  // (one pass over the runs in flight, not one per agent).
  std::unordered_map<std::string, std::pair<Json, Json>> busy_on;  // agent -> runs, GPUs
  for (const auto& r : store_.runs_in_flight())
    for (const auto& h : hosts_from_json(r.hosts)) {
      auto& [runs, gpus] = busy_on[h.agent];
      if (runs.is_null()) runs = gpus = Json::array();
      runs.push_back(r.id);
      for (int g : h.gpus) gpus.push_back(g);
    }
  for (const auto& a : agents_) {
    auto found = busy_on.find(a.id);
    const Json none = Json::array();
    const Json& runs = found == busy_on.end() ? none : found->second.first;
    const Json& busy = found == busy_on.end() ? none : found->second.second;
    out.push_back({{"id", a.id},
                   {"hostname", a.hostname},
                   {"address", a.info.value("address", a.hostname)},
                   {"state", a.state},
                   {"gpus", a.info.value("gpus", Json::array())},
                   {"busy_gpus", busy},
                   {"runs", runs},
                   {"capabilities", a.info.value("capabilities", Json::array())},
                   {"seconds_since_heartbeat", t - a.last_seen}});
  }
  return {200, Json{{"agents", out}}};
}

void Coordinator::merge_heard() {
  std::lock_guard seen(seen_mutex_);
  for (auto& a : agents_) {
    const auto it = heard_.find(a.id);
    if (it != heard_.end() && it->second > a.last_seen && a.state == "alive") {
      a.last_seen = it->second;
      unsaved_seen_.insert(a.id);
    }
  }
}

void Coordinator::check_liveness() {
  // Runs on the thread that accepts connections: it waits for no one. While another call holds
  // the state this pass is skipped; agents heard meanwhile are merged at the next one.
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  merge_heard();
  const double t = now();
  const double cutoff = t - options_.heartbeat_timeout_s;
  std::vector<Store::Agent*> lost;
  for (auto& a : agents_)
    if (a.state == "alive" && a.last_seen < cutoff) lost.push_back(&a);
  if (!lost.empty()) {
    std::vector<long long> returned;
    // The nodes of each run in flight, read once for all the agents lost in this pass.
    std::vector<std::pair<long long, std::set<std::string>>> nodes_of;
    for (const auto& r : store_.runs_in_flight()) {
      std::set<std::string> agents{r.agent_id};
      for (const auto& h : hosts_from_json(r.hosts)) agents.insert(h.agent);
      nodes_of.emplace_back(r.id, std::move(agents));
    }
    Store::Transaction tx(store_);
    for (const Store::Agent* a : lost) {
      store_.touch_agent(a->id, "lost", a->last_seen);
      std::string why = "agent lost: no heartbeat from " + a->id + " for " +
                        std::to_string(static_cast<int>(t - a->last_seen)) + " s";
      log::warn(why);
      for (const auto& [id, agents] : nodes_of) {
        if (!agents.count(a->id)) continue;
        const Store::Run* open = store_.open_run(id);
        if (!open || (open->state != "running" && open->state != "cancelling")) continue;  // lost already
        Store::Run r = *open;
        // A leader lost before it confirmed the run never started it; a follower lost is the
        // whole MPI job lost, whether or not its leader started it.
        if (r.agent_id == a->id && unconfirmed_.count(r.id)) {
          return_undelivered(r, why);
        } else {
          lose_run(r, why);
        }
        returned.push_back(r.id);
      }
    }
    tx.commit();
    for (long long id : returned) unconfirmed_.erase(id);
    for (Store::Agent* a : lost) {
      a->state = "lost";
      unsaved_seen_.erase(a->id);
    }
    ++agents_generation_;
    refresh_gauges();
  }
  if (!unconfirmed_.empty()) {
    try {
      expire_unconfirmed(t);
    } catch (const std::exception& e) {
      log::warn(std::string("could not queue unconfirmed runs again (retried): ") + e.what());
    }
  }
  // The usual case writes nothing here, so that a locked store does not stall the API; the
  // heartbeat times go to the store every few seconds.
  if (t - saved_at_ >= options_.last_seen_save_interval_s) {
    try {
      save_last_seen_locked();
    } catch (const std::exception& e) {
      log::warn(std::string("could not save the agents' last heartbeat times (retried): ") + e.what());
    }
  }
}

std::string Coordinator::metrics_text() {
  {
    std::lock_guard lock(mutex_);
    refresh_progress();  // elapsed time moves between scrapes
  }
  const std::string problem = store_problem();
  return metrics_.text() +  // serialised without the lock: Metrics guards itself
         "# HELP scalebench_store_healthy 1 while the coordinator's store works, 0 after a store error until a "
         "change commits again (see /healthz for the error)\n"
         "# TYPE scalebench_store_healthy gauge\n"
         "scalebench_store_healthy " +
         (problem.empty() ? "1" : "0") + "\n" + node_health_->metrics_text();
}

void Coordinator::note_store_error(const std::string& what) {
  std::lock_guard lock(health_mutex_);
  store_problem_ = what;
}

void Coordinator::note_store_ok() {
  std::lock_guard lock(health_mutex_);
  store_problem_.clear();
}

std::string Coordinator::store_problem() {
  std::lock_guard lock(health_mutex_);
  return store_problem_;
}

}  // namespace scalebench
