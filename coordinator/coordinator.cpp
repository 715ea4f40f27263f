#include "coordinator/coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <string>
#include <tuple>

#include "analysis/prediction.hpp"
#include "common/build_info.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "coordinator/scheduler.hpp"
#include "experiment/sweep.hpp"
#include "record/record.hpp"
#include "store/store_integrity.hpp"

namespace scalebench {

namespace {
ApiResult error(int status, const std::string& message) { return ApiResult::error(status, message); }
bool is_terminal(const std::string& state) {
  return state == "ok" || state == "failed" || state == "timeout" || state == "skipped" || state == "cancelled";
}
}  // namespace

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
  long long after = 0, replayed = 0, refused = 0;
  try {
    Store store(options_.db_path, true);
    while (after < last_record && !stopping_.load()) {
      Json page = store.records(std::nullopt, after, 2000);
      if (page.empty()) break;
      for (const auto& r : page) {
        if (r["record_id"].get<long long>() > last_record) break;  // posted since the start: counted live
        // A stored record of a malformed field (written before ingest checked it) makes no gauge;
        // the records after it still do.
        try {
          metrics_.replay_record(r);
          ++replayed;
        } catch (const std::exception& e) {
          if (refused++ == 0) log::warn(std::string("result gauges: a stored record skipped: ") + e.what());
        }
      }
      after = page.back()["record_id"].get<long long>();
    }
  } catch (const std::exception& e) {
    log::warn(std::string("result gauges not rebuilt from the store: ") + e.what());
  }
  metrics_.end_replay();
  if (refused > 1) log::warn("result gauges: " + std::to_string(refused) + " stored records skipped in all");
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
  held_ends_.erase(run.id);
  if (add_status_record) {
    Json rec = status_record(record_context(run.id, run.spec, placement_of(run)), state, reason);
    store_.add_record(run.id, run.attempt, -1 - static_cast<long long>(store_.record_count(run.id)), rec);
    metrics_.record_ingested(rec);
  }
  metrics_.run_finished(state);
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
    if (attempt != run->attempt || run->state == "queued")  // queued: that attempt was lost
      return error(409, "stale attempt " + std::to_string(attempt) + " of run " + std::to_string(run_id) +
                            (run->state == "queued" ? ": " + run->reason : ""));
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
    auto lock = state_.lock(StateUse::records);
    const Store::Run* run = current();
    if (auto r = refused(run)) return *r;
    unconfirmed_.erase(run_id);  // records of this attempt: it was delivered
    if (const Experiment* ex = experiment_spec(run->experiment_id)) references = ex->references;
  }
  std::vector<std::string> rewritten(batch.records.size());  // records a reference applies to
  int passed = 0, failed = 0;
  for (std::size_t i = 0; i < batch.records.size() && !references.empty(); ++i) {
    Json full = batch.records[i].whole();  // references read params, placement and point
    Json outcomes = Json::array();
    for (const auto& ref : references) {
      Json o = evaluate_reference(ref, full);
      if (o.is_null()) continue;
      (o.value("outcome", "fail") == "pass" ? passed : failed)++;
      outcomes.push_back(o);
    }
    if (outcomes.empty()) continue;
    full["references"] = outcomes;
    rewritten[i] = full.dump();
  }
  metrics_.references_checked(passed, failed);
  std::vector<std::size_t> stored;
  {
    std::lock_guard records_lock(records_mutex_);
    {
      auto lock = state_.lock(StateUse::records);
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
  auto lock = state_.lock(StateUse::finish);
  auto run = store_.run(run_id);
  if (!run) return error(404, "no run " + std::to_string(run_id));
  const int attempt = body.value("attempt", 0);
  if (attempt != run->attempt) return error(409, "stale attempt of run " + std::to_string(run_id));
  // Queued again with this attempt's number: the attempt was lost (a node of it lost, restarted
  // or stopped) before this end came, and its retry has not started yet.
  if (run->state == "queued") return error(409, "stale attempt of run " + std::to_string(run_id) + ": " + run->reason);
  unconfirmed_.erase(run_id);                                              // its end came: it was delivered
  if (is_terminal(run->state)) return {200, Json{{"state", run->state}}};  // a resend: already done
  std::string status = body.value("status", "failed");
  if (!is_terminal(status)) return error(400, "finish: unknown status '" + status + "'");
  if (body.value("lost", false)) {
    // Its agent was stopped (SIGTERM) and ended it: the run did not fail by itself, its host went
    // away, as when a node of it is lost. The status record is made here (the agent sends none).
    const std::string why = body.value("reason", "");
    lose_run(*run, why.empty() ? "agent " + run->agent_id + " was stopped while the run was in flight" : why);
    note_store_ok();
    refresh_gauges();
    return {200, Json{{"state", run->state}}};
  }
  if (status == "failed" || status == "timeout")
    if (const std::string why = end_held_for(*run, attempt); !why.empty()) return error(503, why);
  end_run(*run, status, body.value("reason", ""), false);
  note_store_ok();
  refresh_gauges();
  log::info("run " + std::to_string(run_id) + " " + status + (run->reason.empty() ? "" : ": " + run->reason));
  if (status == "ok") score_predictions(*run);
  return {200, Json{{"state", status}}};
}

std::string Coordinator::end_held_for(const Store::Run& run, int attempt) {
  auto [held, first] = held_ends_.try_emplace(run.id, HeldEnd{attempt, now()});
  if (!first && held->second.attempt != attempt) held->second = HeldEnd{attempt, now()};
  std::string silent;
  for (const auto& h : hosts_from_json(run.hosts)) {
    if (h.agent == run.agent_id) continue;
    const auto beat = beat_handled_at_.find(h.agent);
    if (beat == beat_handled_at_.end() || beat->second <= held->second.since)
      silent += (silent.empty() ? "" : ", ") + h.agent;
  }
  if (silent.empty()) {
    held_ends_.erase(held);
    return "";
  }
  if (first)
    log::info("run " + std::to_string(run.id) + " attempt " + std::to_string(attempt) +
              ": its end waits for a heartbeat from " + silent);
  return "run " + std::to_string(run.id) + " attempt " + std::to_string(attempt) +
         ": its end waits for a heartbeat from " + silent +
         " (a node of the run: if it is lost or restarted, the attempt is lost and queued again while retries "
         "remain; else this end stands); send it again";
}

void Coordinator::score_predictions(const Store::Run& run) {
  try {
    const Json series = run_series(run.spec);
    if (series.is_null()) return;
    std::vector<Store::StoredPrediction> found = store_.predictions_for(run.spec.value("nodes", 1), series.dump());
    // Predicted, then measured: a run that started before the prediction was made does not check it.
    std::erase_if(found, [&](const Store::StoredPrediction& p) { return p.created_at > run.started_at; });
    if (found.empty()) return;
    const BusbwBySize measured = busbw_by_size(store_.run_records(run.id));
    if (measured.empty()) return;
    const double t = now();
    for (const Store::StoredPrediction& p : found) {
      const Json previous = store_.prediction_score(p.id, run.experiment_id);
      Json runs = previous.is_null() ? Json::array() : previous.value("runs", Json::array());
      if (std::find(runs.begin(), runs.end(), Json(run.id)) != runs.end()) continue;
      // The experiment's earlier runs' values and this one's: medians are not added up.
      BusbwBySize values = score_values(previous);
      for (const auto& [size, v] : measured) values[size].insert(values[size].end(), v.begin(), v.end());
      runs.push_back(run.id);
      const PredictionScore score = score_prediction(p.body.value("predicted", Json::array()), values);
      Json stored{{"experiment_id", run.experiment_id},
                  {"experiment", run.spec.value("experiment", "")},
                  {"runs", runs},
                  {"scored_at", t}};
      const Json fields = to_json(score);
      for (const auto& [key, value] : fields.items()) stored[key] = value;
      store_.save_prediction_score(p.id, run.experiment_id, t, stored);
      log::info("prediction " + std::to_string(p.id) + " scored by run " + std::to_string(run.id) + ": " +
                std::to_string(score.sizes.size()) + " sizes, max |error| from 1 MiB " +
                (score.max_abs_error_pct ? std::to_string(*score.max_abs_error_pct) + "%" : "n/a"));
    }
  } catch (const std::exception& e) {
    log::warn("run " + std::to_string(run.id) + ": predictions not scored: " + e.what());
  }
}

ApiResult Coordinator::add_prediction(const Json& body) {
  const auto experiment_ids = body["experiments"].get<std::vector<long long>>();
  Json sources = Json::array();
  {
    // Checked on the reading connection: 100,000 record ids take a while, and no heartbeat waits.
    std::lock_guard lock(read_mutex_);
    std::string listed;
    for (long long id : experiment_ids) {
      const Json e = read_store_.experiment_summary(id);
      if (e.is_null()) return error(400, "prediction: experiments: no experiment " + std::to_string(id));
      sources.push_back({{"id", id}, {"name", e["name"]}});
      listed += (listed.empty() ? "" : ", ") + std::to_string(id);
    }
    if (auto outside = read_store_.record_outside(body["record_ids"].get<std::vector<long long>>(), experiment_ids))
      return error(400,
                   "prediction: record_ids: " + std::to_string(*outside) + " is no record of experiment " + listed);
  }
  Json stored = body;
  stored["experiments"] = sources;
  auto lock = state_.lock(StateUse::prediction);
  const double t = now();
  const long long id = store_.add_prediction(stored, body["nodes"].get<int>(), prediction_series(body).dump(), t);
  note_store_ok();
  log::info("prediction " + std::to_string(id) + ": " + describe_series(prediction_series(body)) + " at " +
            body["nodes"].dump() + " nodes, from nodes " + body["fit_nodes"].dump());
  return {201, Json{{"prediction_id", id}, {"created_at", t}}};
}

ApiResult Coordinator::predictions(std::optional<long long> id) {
  std::lock_guard lock(read_mutex_);
  Json found = read_store_.predictions(id);
  if (id && found.is_null()) return error(404, "no prediction " + std::to_string(*id));
  return {200, id ? found : Json{{"predictions", found}}};
}

std::string Coordinator::metrics_text() {
  try {
    auto lock = state_.lock(StateUse::metrics);
    refresh_progress();  // elapsed time moves between scrapes
  } catch (const std::exception& e) {
    // The scrape still answers, with the progress of the last one that read the store, and says
    // the store failed: scalebench_store_healthy is what an alert watches.
    if (note_store_error(e.what())) log::error(std::string("/metrics: ") + e.what());
  }
  const std::string problem = store_problem();
  return build_info_metrics_text("scalebench-coordinator") +
         metrics_.text() +  // serialised without the lock: Metrics guards itself
         "# HELP scalebench_store_healthy 1 while the coordinator's store works, 0 after a store error until a "
         "change commits again (see /healthz for the error)\n"
         "# TYPE scalebench_store_healthy gauge\n"
         "scalebench_store_healthy " +
         (problem.empty() ? "1" : "0") + "\n" + node_health_->metrics_text();
}

bool Coordinator::note_store_error(const std::string& what) {
  std::lock_guard lock(health_mutex_);
  // A damaged file does not mend when another change commits (that change touched other pages).
  std::string& problem = store_damaged(what) ? store_damage_ : store_problem_;
  const bool changed = problem != what;
  problem = what;
  return changed;
}

void Coordinator::note_store_ok() {
  std::lock_guard lock(health_mutex_);
  store_problem_.clear();
}

std::string Coordinator::store_problem() {
  std::lock_guard lock(health_mutex_);
  return store_damage_.empty() ? store_problem_ : store_damage_;
}

}  // namespace scalebench
