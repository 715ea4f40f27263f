#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/scheduler.hpp"

// An agent's heartbeat, in phases: heard at once; checked against the beats already handled; the
// runs it holds reconciled with those it lists; a pass over the queue when one can change
// anything; then, in one transaction, the runs taken back or lost and those it leads started.
namespace scalebench {

namespace {
std::size_t array_size(const Json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? it->size() : 0;
}

// A heartbeat's answer: the runs it assigns and cancels, and `flag` (busy, stale) when it was not
// handled in full.
ApiResult heartbeat_answer(const Json& runs, const Json& cancel, double interval_s, const char* flag = nullptr) {
  Json answer{{"runs", runs}, {"cancel", cancel}, {"heartbeat_interval_s", interval_s}};
  if (flag) answer[flag] = true;
  return {200, answer};
}

// The runs a heartbeat lists as running (`active`): its ids, anything else ignored.
std::set<long long> active_runs_of(const Json& body) {
  std::set<long long> active;
  if (body.contains("active") && body["active"].is_array())
    for (const auto& id : body["active"])
      if (id.is_number_integer()) active.insert(id.get<long long>());
  return active;
}

// Puts back the value it watches when it goes out of scope, unless keep() was called: a change
// made in memory for a transaction stands only if the transaction commits.
template <typename T>
class RestoreUnlessKept {
 public:
  RestoreUnlessKept() = default;
  RestoreUnlessKept(const RestoreUnlessKept&) = delete;
  RestoreUnlessKept& operator=(const RestoreUnlessKept&) = delete;
  ~RestoreUnlessKept() {
    if (slot_ && !kept_) *slot_ = before_;
  }
  void watch(T& slot) {
    slot_ = &slot;
    before_ = slot;
  }
  void keep() { kept_ = true; }

 private:
  T* slot_ = nullptr;
  T before_{};
  bool kept_ = false;
};
}  // namespace

bool Coordinator::mark_heard(const std::string& agent_id) {
  std::lock_guard seen(seen_mutex_);
  auto it = heard_.find(agent_id);
  if (it == heard_.end()) return false;
  it->second = now();
  return true;
}

Coordinator::HeldRuns Coordinator::reconcile_held_runs(const std::string& agent_id, const std::set<long long>& active,
                                                       bool stopping) {
  HeldRuns h;
  std::set<long long> held;
  for (const Store::Run* r : store_.runs_held_by(agent_id)) {
    const bool confirmed = !unconfirmed_.count(r->id);
    if (!active.count(r->id)) {
      (confirmed ? h.restarted : h.undelivered).push_back(*r);
      continue;
    }
    if (!confirmed) unconfirmed_.erase(r->id);  // delivered: the agent runs it
    if (!r->delivered) h.delivered.push_back(*r);
    held.insert(r->id);
    if (r->state == "cancelling") h.cancel.push_back(r->id);
  }
  // A run the agent still runs whose attempt has ended here (the agent was lost and came back,
  // or a node of the run was lost): stop it. Until it is gone the agent is given nothing, as a
  // leader or as a node of another run, since what that run holds is no longer known here.
  bool draining = false;
  for (long long id : active)
    if (!held.count(id)) {
      draining = true;
      h.cancel.push_back(id);
    }
  if (draining || stopping)
    draining_.insert(agent_id);
  else
    draining_.erase(agent_id);
  return h;
}

bool Coordinator::is_node_of_others_runs(const std::string& agent_id) {
  for (const auto& r : store_.runs_in_flight())
    for (const auto& h : hosts_from_json(r.hosts))
      if (h.agent == agent_id && r.agent_id != agent_id) return true;
  return false;
}

bool Coordinator::apply_held_runs(const std::string& agent_id, std::vector<Store::Run>& restarted,
                                  std::vector<Store::Run>& undelivered, std::vector<Store::Run>& delivered) {
  bool changed = false;
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
  return changed;
}

Json Coordinator::start_runs_led_by(Store::Agent& agent, bool sweep, bool& changed) {
  Json assign = Json::array();
  // Without a sweep a pass starts at most one run per GPU of the agent, and reads one run more
  // (the first that waits) from the queue's index.
  const std::size_t look = sweep ? 0 : std::max<std::size_t>(1, array_size(agent.info, "gpus")) + 1;
  PassOptions pass;
  pass.check_fits = sweep;
  pass.leader_agent = &agent;
  pass.closed = &draining_;
  Schedule plan_now = schedule(store_.queued_runs(look), agents_, store_.occupancy(), agent.id, pass);
  for (const auto& [id, why] : plan_now.fail)
    if (auto r = store_.run(id)) {
      end_run(*r, "failed", why, true);
      changed = true;
    }
  for (const auto& [id, hosts] : plan_now.start) {
    // From the file: a queued run in memory keeps only what scheduling reads of its spec.
    if (!store_.open_run(id)) continue;
    std::optional<Store::Run> run = store_.run(id);
    if (!run) continue;
    run->state = "running";
    run->agent_id = agent.id;
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
  return assign;
}

// A heartbeat in phases: heard at once (the fast path); checked against the beats already handled
// (stale, or a new process); the runs the agent holds reconciled with those it lists; whether a
// pass over the queue can change anything; then, in one transaction, the runs taken back or lost
// and the runs it leads started; after the commit, what memory keeps of it.
ApiResult Coordinator::heartbeat(const std::string& agent_id, const Json& body) {
  // The fast path: the agent is heard at once, whatever holds the state. check_liveness reads
  // these times, so that an agent is never lost for want of the mutex.
  if (!mark_heard(agent_id)) return ApiResult::error(404, "unknown agent '" + agent_id + "'; register again");
  // An agent that says it is stopping (SIGTERM) sends that once: it is not answered busy.
  const bool stopping = body.value("stopping", false);
  const auto lock = stopping ? std::optional(state_.lock(StateUse::heartbeat))
                             : state_.try_lock_for(StateUse::heartbeat, kHeartbeatWait);
  if (!lock)
    // Nothing is assigned or cancelled in this answer; the next heartbeat that finds the state
    // free reconciles the agent's runs as usual.
    return heartbeat_answer(Json::array(), Json::array(), options_.heartbeat_interval_s, "busy");
  Store::Agent* agent = find_agent(agent_id);
  if (!agent || agent->state == "gone")
    return ApiResult::error(404, "unknown agent '" + agent_id + "'; register again");
  // A heartbeat older than one already handled (its agent gave up on the answer, and it was
  // handled late): reconciling it would take back a run that the later answer delivered. One of
  // another boot than the last since the agent registered comes from a new process of it that did
  // not register (a restart is normally seen at its registration): it restarted.
  RestoreUnlessKept<std::pair<long long, long long>> beat_guard;  // the previous beat, unless this one commits
  bool new_boot = false;
  if (body.contains("boot") && body.contains("beat")) {
    const std::pair<long long, long long> beat{body["boot"].get<long long>(), body["beat"].get<long long>()};
    auto [last, first] = last_beat_.try_emplace(agent_id, beat);
    if (!first && last->second.first == beat.first && beat.second <= last->second.second)
      return heartbeat_answer(Json::array(), Json::array(), options_.heartbeat_interval_s, "stale");
    new_boot = !first && last->second.first != beat.first;
    beat_guard.watch(last->second);  // references to a map's values outlive its rehashes
    last->second = beat;
  }
  // Alive from now on, whatever the store can record: last_seen is kept here and saved later.
  agent->last_seen = now();
  unsaved_seen_.insert(agent_id);
  const bool was_lost = agent->state != "alive";

  // Held here, unknown to the agent (it restarted); handed to it but absent from this heartbeat,
  // which it sent after reading any answer (heartbeats go one at a time: that answer never
  // reached it); confirmed by this heartbeat (the store learns it below).
  HeldRuns held = reconcile_held_runs(agent_id, active_runs_of(body), stopping);

  // The agent restarted, or is stopping: its host is lost to the runs it is a node of, as when it
  // is found silent (check_liveness). The runs it leads are reconciled above (a new process lists
  // no run it did not journal), or end by its finish (`lost`: it was stopped).
  std::string leaving;
  if (new_boot) leaving = "agent " + agent_id + " restarted while the run was in flight";
  if (stopping) leaving = "agent " + agent_id + " was stopped (SIGTERM) while the run was in flight";
  bool hosts_runs = false;
  if (!leaving.empty()) {
    log::info(new_boot ? "agent " + agent_id + " restarted (a heartbeat of a new process)"
                       : "agent " + agent_id + " is stopping: it gets no more work");
    hosts_runs = is_node_of_others_runs(agent_id);
  }

  // Whether a pass over the queue can change anything: with no queued run it cannot, nor when
  // this agent can lead nothing now and the agents did not change since the last sweep. Runs that
  // can never fit are looked for (a sweep) only when the agents changed since the last one (a
  // submission looks at its own runs): only a sweep goes over the whole queue.
  bool plan = false;
  const bool sweep = was_lost || agents_generation_ != swept_agents_;
  // Runs taken back below (undelivered, or lost to a restart) free room this pass can use.
  const bool freed = !held.undelivered.empty() || !held.restarted.empty() || hosts_runs;
  if (!draining_.count(agent_id) && (store_.any_queued() || freed))
    plan = sweep || freed || may_lead(*agent, store_.occupancy());
  if (!was_lost && held.restarted.empty() && held.undelivered.empty() && held.delivered.empty() && !hosts_runs &&
      !plan) {
    beat_guard.keep();
    beat_handled_at_[agent_id] = now();
    return heartbeat_answer(Json::array(), held.cancel, options_.heartbeat_interval_s);
  }

  // All or nothing: a store error (locked, full) leaves no run half-assigned; the agent retries.
  Store::Transaction tx(store_);
  bool changed = was_lost;  // the gauges are refreshed only when a count moved
  if (was_lost) store_.touch_agent(agent_id, "alive", agent->last_seen);
  if (apply_held_runs(agent_id, held.restarted, held.undelivered, held.delivered)) changed = true;
  std::vector<long long> lost_hosted;
  if (hosts_runs) {
    lost_hosted = lose_attempts_on({{agent_id, leaving}}, false);
    changed = true;
  }
  // Alive for this pass; it stays so only if the transaction commits.
  RestoreUnlessKept<std::string> state_guard;
  state_guard.watch(agent->state);
  agent->state = "alive";
  const Json assign = plan ? start_runs_led_by(*agent, sweep, changed) : Json::array();
  tx.commit();

  // Committed: what memory keeps of this heartbeat.
  note_store_ok();
  state_guard.keep();
  beat_guard.keep();
  beat_handled_at_[agent_id] = now();
  for (const auto& r : held.undelivered) unconfirmed_.erase(r.id);
  for (long long id : lost_hosted) unconfirmed_.erase(id);
  const double deadline = now() + options_.heartbeat_timeout_s;
  for (const auto& a : assign) unconfirmed_[a["run_id"].get<long long>()] = deadline;
  if (was_lost) ++agents_generation_;
  if (plan && sweep) swept_agents_ = agents_generation_;
  if (was_lost) {
    log::info("agent " + agent_id + " is back");
  }
  if (changed) refresh_gauges();
  return heartbeat_answer(assign, held.cancel, options_.heartbeat_interval_s);
}

}  // namespace scalebench
