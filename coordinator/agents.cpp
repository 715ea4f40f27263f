#include "coordinator/coordinator.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "coordinator/scheduler.hpp"

// The coordinator's side of the agents: registration, runs taken back or lost, and the liveness
// sweep. Heartbeats and the assignments their answers carry (docs/api.md) are in heartbeat.cpp.
namespace scalebench {

Store::Agent* Coordinator::find_agent(const std::string& id) {
  auto it = std::lower_bound(agents_.begin(), agents_.end(), id,
                             [](const Store::Agent& a, const std::string& key) { return a.id < key; });
  return it != agents_.end() && it->id == id ? &*it : nullptr;
}

void Coordinator::save_last_seen() {
  std::vector<std::pair<std::string, double>> seen;
  {
    auto lock = state_.lock(StateUse::save_last_seen);
    merge_heard();
    seen = take_unsaved_seen_locked();
  }
  write_last_seen(seen);
}

std::vector<std::pair<std::string, double>> Coordinator::take_unsaved_seen_locked() {
  saved_at_ = now();
  std::vector<std::pair<std::string, double>> seen;
  seen.reserve(unsaved_seen_.size());
  for (const auto& id : unsaved_seen_)
    if (const Store::Agent* a = find_agent(id)) seen.emplace_back(a->id, a->last_seen);
  unsaved_seen_.clear();
  return seen;
}

// The soak found heartbeat p99 creeping up (1.4 to 2.6 ms over 30 minutes at 2,000 agents) while
// this transaction of 2,000 updates ran under the state lock every 5 s, waiting for the records
// connection's inserts, which slow as the store grows.
void Coordinator::write_last_seen(const std::vector<std::pair<std::string, double>>& seen) {
  if (seen.empty()) return;
  try {
    std::lock_guard records_lock(records_mutex_);
    Store::Transaction tx(records_store_);
    for (const auto& [id, t] : seen) records_store_.save_last_seen(id, t);
    tx.commit();
  } catch (...) {
    auto lock = state_.lock(StateUse::save_last_seen);
    for (const auto& [id, t] : seen) unsaved_seen_.insert(id);
    throw;
  }
}

ApiResult Coordinator::register_agent(const Json& info) {
  auto lock = state_.lock(StateUse::register_agent);
  if (!info.is_object() || !info.contains("name") || !info["name"].is_string() ||
      info["name"].get<std::string>().empty())
    return ApiResult::error(400, "register: body needs a non-empty string 'name'");
  static const std::regex name_re("[A-Za-z0-9_.:-]{1,128}");
  if (!std::regex_match(info["name"].get<std::string>(), name_re))
    return ApiResult::error(
        400, "register: agent name '" + info["name"].get<std::string>() + "' must be 1-128 of A-Z a-z 0-9 _ . : -");
  if (!info.contains("gpus") || !info["gpus"].is_array())
    return ApiResult::error(400, "register: body needs 'gpus' (an array)");
  Store::Agent a;
  a.id = info["name"];
  a.hostname = info.value("hostname", a.id);
  a.info = info;
  a.state = "alive";
  a.registered_at = a.last_seen = now();
  // A registration is a new process of the agent (an agent registers when it starts, and again
  // only when the coordinator does not know it): one that was a node of runs in flight restarted,
  // and those attempts are lost, as when it is found silent. The runs it leads are reconciled by
  // its next heartbeat (it lists those whose end it still holds). Its heartbeats count from here.
  const bool seen_before = find_agent(a.id) != nullptr;  // a new name is a node of nothing
  Store::Transaction tx(store_);
  store_.upsert_agent(a);
  std::vector<long long> lost_hosted;
  if (seen_before)
    lost_hosted = lose_attempts_on({{a.id, "agent " + a.id + " restarted while the run was in flight"}}, false);
  tx.commit();
  for (long long id : lost_hosted) unconfirmed_.erase(id);
  last_beat_.erase(a.id);
  draining_.erase(a.id);  // a new process: what it still runs, its heartbeat says
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
  if (run.state == "cancelling") {  // cancelled by its user: not run again
    end_run(run, "cancelled", "cancelled by user while running; " + why, true);
    log::warn("run " + std::to_string(run.id) + ": " + run.reason);
    return;
  }
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
  } else {
    log::warn("run " + std::to_string(run.id) + " failed: attempt " + std::to_string(attempt) + " lost (" + why +
              "), no retry left");
  }
}

std::vector<long long> Coordinator::lose_attempts_on(const std::map<std::string, std::string>& why_by_agent,
                                                     bool leading) {
  std::vector<long long> changed;
  for (const Store::Run& in_flight : store_.runs_in_flight()) {
    // The leader first (as such it may never have started the run), then the other nodes.
    auto found = why_by_agent.end();
    if (leading) found = why_by_agent.find(in_flight.agent_id);
    for (const auto& h : hosts_from_json(in_flight.hosts)) {
      if (found != why_by_agent.end()) break;
      if (h.agent != in_flight.agent_id) found = why_by_agent.find(h.agent);
    }
    if (found == why_by_agent.end()) continue;
    Store::Run r = in_flight;
    // A leader lost before it confirmed the run never started it; a node lost is the whole MPI
    // job lost, whether or not its leader started it.
    if (found->first == r.agent_id && unconfirmed_.count(r.id))
      return_undelivered(r, found->second);
    else
      lose_run(r, found->second);
    // Its leader, when it was another node that went, still runs it: no work for it, as a node
    // of the retry or of anything else, until its heartbeat shows it stopped (it finds the run in
    // `cancel` at that heartbeat).
    if (found->first != in_flight.agent_id) draining_.insert(in_flight.agent_id);
    changed.push_back(r.id);
  }
  return changed;
}

ApiResult Coordinator::list_agents() {
  auto lock = state_.lock(StateUse::list_agents);
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
                   {"topology", a.info.value("topology", Json::object())},
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
  auto lock = state_.try_lock(StateUse::liveness);
  if (!lock) return;
  merge_heard();
  const double t = now();
  const double cutoff = t - options_.heartbeat_timeout_s;
  std::vector<Store::Agent*> lost;
  for (auto& a : agents_)
    if (a.state == "alive" && a.last_seen < cutoff) lost.push_back(&a);
  if (!lost.empty()) {
    std::map<std::string, std::string> why_by_agent;
    for (const Store::Agent* a : lost) {
      std::string why = "agent lost: no heartbeat from " + a->id + " for " +
                        std::to_string(static_cast<int>(t - a->last_seen)) + " s";
      log::warn(why);
      why_by_agent.emplace(a->id, std::move(why));
    }
    Store::Transaction tx(store_);
    for (const Store::Agent* a : lost) store_.touch_agent(a->id, "lost", a->last_seen);
    // Every run in flight that a lost agent leads or is a node of, in one pass over them.
    const std::vector<long long> returned = lose_attempts_on(why_by_agent, true);
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
  // heartbeat times go to the store every few seconds, written once the lock is released.
  if (t - saved_at_ < options_.last_seen_save_interval_s) return;
  const auto seen = take_unsaved_seen_locked();
  lock->unlock();
  try {
    write_last_seen(seen);
  } catch (const std::exception& e) {
    log::warn(std::string("could not save the agents' last heartbeat times (retried): ") + e.what());
  }
}

}  // namespace scalebench
