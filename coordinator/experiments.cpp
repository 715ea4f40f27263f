#include "coordinator/coordinator.hpp"

#include <map>
#include <string>
#include <tuple>

#include "common/error.hpp"
#include "common/log.hpp"
#include "coordinator/scheduler.hpp"

// The experiments' side of the coordinator: submission, listing, one experiment and its pages of
// runs, cancelling, and the results.
namespace scalebench {

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
    auto lock = state_.lock(StateUse::cluster_shape);
    shape = cluster_shape(agents_);
  }
  if (!shape.gpu && shape.ranks_per_node == 0)
    return ApiResult::error(409, "no agent is registered; start scalebench-agent --coordinator URL on a node first");
  // Its memory is counted before it is spent: running out half way may end the process.
  const SubmissionCost cost = submission_cost(ex, shape);
  std::uint64_t held = 0;
  if (std::string why = submission_memory_.take(cost, &held); !why.empty()) {
    const std::string field = widest_axis(ex);
    return {cost.bytes > kMaxSubmissionBytes ? 413 : 503,
            Json{{"error", ex.source + ": " + field + ": " + why},
                 {"issues", Json::array({{{"file", ex.source}, {"field", field}, {"message", why}}})}}};
  }
  struct GiveBack {
    SubmissionMemory& memory;
    std::uint64_t held;
    ~GiveBack() { memory.give_back(held); }
  } give_back{submission_memory_, held};  // after `prepared` is freed (declared before it)
  const std::vector<Store::NewRun> prepared = Store::prepare_runs(expand(ex, shape));
  // The cluster may have changed shape meanwhile: the runs were expanded for the one it had a
  // moment ago, as they would have been had the submission come then. Runs that no longer fit
  // are failed below, as always.
  auto lock = state_.lock(StateUse::submit);
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
  auto head = experiment_head(id_or_name);
  if (!head) return ApiResult::error(404, "no experiment '" + id_or_name + "'");
  Json e = std::move(head->second);
  Json runs = run_page(head->first, after, limit > 0 ? limit + 1 : 0);
  const bool complete = limit <= 0 || static_cast<long long>(runs.size()) <= limit;
  if (!complete) runs.erase(runs.end() - 1);
  if (limit > 0) {
    e["next_after"] = runs.empty() ? after : runs.back()["run_id"].get<long long>();
    e["complete"] = complete;
  }
  e["run_list"] = std::move(runs);
  return {200, e};
}

std::optional<std::pair<long long, Json>> Coordinator::experiment_head(const std::string& id_or_name) {
  // From the reading connection: what was committed, without the state's mutex.
  std::lock_guard lock(read_mutex_);
  auto id = read_store_.find_experiment(id_or_name);
  if (!id) return std::nullopt;
  return std::pair{*id, read_store_.experiment_summary(*id)};
}

Json Coordinator::run_page(long long experiment_id, long long after, long long limit) {
  std::lock_guard lock(read_mutex_);
  const std::vector<Store::Run> page = read_store_.runs(experiment_id, std::nullopt, after, limit);
  if (page.empty()) return Json::array();
  // Only the page's runs are counted (counting all of 100,000 runs' records for each page of a
  // stream made it quadratic).
  const std::map<long long, std::size_t> counts = read_store_.record_counts(experiment_id, after, page.back().id);
  Json runs = Json::array();
  for (const auto& r : page) {
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
  return runs;
}

ApiResult Coordinator::cancel(const std::string& id_or_name) {
  std::optional<long long> id;
  std::vector<long long> open;
  {
    auto lock = state_.lock(StateUse::cancel);
    id = store_.find_experiment(id_or_name);
    if (!id) return ApiResult::error(404, "no experiment '" + id_or_name + "'");
    open = store_.open_run_ids(*id);
  }
  // In slices, each one transaction under the lock, so that heartbeats are answered between them
  // (20,000 runs at once held the state for seconds). A run that a heartbeat starts meanwhile is
  // still in `open`, and becomes cancelling when its slice comes.
  int queued = 0, running = 0;
  for (std::size_t first = 0; first < open.size(); first += kCancelSlice) {
    auto lock = state_.lock(StateUse::cancel);
    Store::Transaction tx(store_);
    for (std::size_t i = first; i < std::min(open.size(), first + kCancelSlice); ++i) {
      const Store::Run* current = store_.open_run(open[i]);
      if (!current) continue;  // it ended meanwhile
      // A queued run's status record names its spec, which memory holds only in part.
      Store::Run r = current->state == "queued" ? store_.run(open[i]).value_or(*current) : *current;
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
    if (!id) return ApiResult::error(404, "no experiment '" + experiment + "'");
  }
  Json recs = read_store_.records(id, after, limit);
  long long next = recs.empty() ? after : recs.back()["record_id"].get<long long>();
  return {200, Json{{"records", recs}, {"next_after", next}, {"complete", static_cast<int>(recs.size()) < limit}}};
}

}  // namespace scalebench
