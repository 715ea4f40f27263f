#include "coordinator/metrics.hpp"

#include <prometheus/text_serializer.h>

#include <algorithm>

#include "common/units.hpp"
#include "record/record_reader.hpp"

namespace scalebench {

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      agents_(
          prometheus::BuildGauge().Name("scalebench_agents").Help("Registered agents by state").Register(*registry_)),
      runs_(prometheus::BuildGauge().Name("scalebench_runs").Help("Runs queued or running now").Register(*registry_)),
      runs_finished_(prometheus::BuildCounter()
                         .Name("scalebench_runs_finished_total")
                         .Help("Runs that ended, by status")
                         .Register(*registry_)),
      records_total_(prometheus::BuildCounter()
                         .Name("scalebench_records_ingested_total")
                         .Help("Result records stored")
                         .Register(*registry_)
                         .Add({})),
      experiments_total_(prometheus::BuildCounter()
                             .Name("scalebench_experiments_submitted_total")
                             .Help("Experiments submitted")
                             .Register(*registry_)
                             .Add({})),
      reference_checks_(prometheus::BuildCounter()
                            .Name("scalebench_reference_checks_total")
                            .Help("Records checked against an experiment's references, by outcome (pass, fail)")
                            .Register(*registry_)),
      // Both outcomes from the start, so that increase() sees the first failure.
      references_passed_(reference_checks_.Add({{"outcome", "pass"}})),
      references_failed_(reference_checks_.Add({{"outcome", "fail"}})),
      experiment_runs_(prometheus::BuildGauge()
                           .Name("scalebench_experiment_runs")
                           .Help("Runs of an experiment by state")
                           .Register(*registry_)),
      experiment_progress_(prometheus::BuildGauge()
                               .Name("scalebench_experiment_progress_ratio")
                               .Help("Share of an experiment's runs that have ended (0..1)")
                               .Register(*registry_)),
      experiment_elapsed_(prometheus::BuildGauge()
                              .Name("scalebench_experiment_elapsed_seconds")
                              .Help("Seconds since the experiment was submitted, until its last run ended")
                              .Register(*registry_)),
      experiment_remaining_(prometheus::BuildGauge()
                                .Name("scalebench_experiment_remaining_seconds")
                                .Help("Estimated seconds until the experiment's last run ends: elapsed / done x left")
                                .Register(*registry_)),
      placement_gpus_(prometheus::BuildGauge()
                          .Name("scalebench_placement_gpus")
                          .Help("GPUs of a placement that results were measured at (its gpus label as a value)")
                          .Register(*registry_)),
      placement_ranks_(prometheus::BuildGauge()
                           .Name("scalebench_placement_ranks")
                           .Help("Ranks of a placement that results were measured at (its ranks label as a value)")
                           .Register(*registry_)) {
  for (const char* s : {"ok", "failed", "timeout", "skipped", "cancelled"}) runs_finished_.Add({{"status", s}});
}

void Metrics::references_checked(int passed, int failed) {
  if (passed) references_passed_.Increment(passed);
  if (failed) references_failed_.Increment(failed);
}

void Metrics::set_agents(int alive, int lost) {
  std::lock_guard lock(mutex_);
  agents_.Add({{"state", "alive"}}).Set(alive);
  agents_.Add({{"state", "lost"}}).Set(lost);
}

void Metrics::set_runs(int queued, int running) {
  std::lock_guard lock(mutex_);
  runs_.Add({{"state", "queued"}}).Set(queued);
  runs_.Add({{"state", "running"}}).Set(running);
}

const std::vector<std::string>& Metrics::run_states() {
  static const std::vector<std::string> states{"queued", "running", "cancelling", "ok",
                                               "failed", "timeout", "skipped",    "cancelled"};
  return states;
}

std::optional<double> Metrics::remaining_seconds(int total, int done, double elapsed_s) {
  if (done >= total) return 0.0;
  if (done <= 0) return std::nullopt;
  return elapsed_s / done * (total - done);
}

void Metrics::set_progress(const std::vector<ExperimentProgress>& experiments) {
  std::lock_guard lock(mutex_);
  for (const Series& s : progress_series_) s.family->Remove(s.gauge);
  progress_series_.clear();
  auto set = [&](prometheus::Family<prometheus::Gauge>& family, const std::map<std::string, std::string>& labels,
                 double value) {
    prometheus::Gauge& g = family.Add(labels);
    g.Set(value);
    progress_series_.push_back({&family, &g});
  };
  for (const ExperimentProgress& e : experiments) {
    int total = 0, done = 0;
    for (const std::string& state : run_states()) {
      auto it = e.runs_by_state.find(state);
      const int n = it == e.runs_by_state.end() ? 0 : it->second;
      set(experiment_runs_, {{"experiment", e.name}, {"state", state}}, n);
      total += n;
      if (state != "queued" && state != "running" && state != "cancelling") done += n;
    }
    set(experiment_progress_, {{"experiment", e.name}}, total > 0 ? static_cast<double>(done) / total : 1.0);
    set(experiment_elapsed_, {{"experiment", e.name}}, e.elapsed_s);
    if (auto left = remaining_seconds(total, done, e.elapsed_s))
      set(experiment_remaining_, {{"experiment", e.name}}, *left);
  }
}

void Metrics::run_finished(const std::string& status) {
  std::lock_guard lock(mutex_);
  runs_finished_.Add({{"status", status}}).Increment();
}

void Metrics::experiment_submitted(const std::string& name) {
  std::lock_guard lock(mutex_);
  experiments_total_.Increment();
  forget_experiment(name);  // a new run of the same name replaces the old series
  if (replaying_) not_replayed_.insert(name);
}

void Metrics::begin_replay(double stored_records, const std::vector<std::string>& names) {
  std::lock_guard lock(mutex_);
  records_total_.Increment(stored_records);
  replaying_ = true;
  experiment_order_.assign(names.begin(), names.end());
}

void Metrics::replay_record(const Json& r) {
  const RecordView stored(r);
  std::lock_guard lock(mutex_);
  if (!replaying_) return;
  if (!stored.ok() || !stored.value) return;
  const std::string& experiment = stored.experiment;
  // Only the names kept (begin_replay's), so that a replay evicts nothing.
  if (not_replayed_.count(experiment) ||
      std::find(experiment_order_.begin(), experiment_order_.end(), experiment) == experiment_order_.end())
    return;
  add_series(experiment, *stored.value, {}, r, true);
}

void Metrics::end_replay() {
  std::lock_guard lock(mutex_);
  replaying_ = false;
  live_.clear();
  not_replayed_.clear();
}

std::string Metrics::result_metric_name(const std::string& workload, const std::string& metric,
                                        const std::string& unit) {
  auto clean = [](std::string s) {
    for (char& c : s)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
  };
  auto base = base_unit(unit);
  std::string name = "scalebench_" + clean(workload) + "_" + clean(metric);
  if (base && base->name != "ratio") name += "_" + base->name;
  return name;
}

prometheus::Family<prometheus::Gauge>& Metrics::result_family(const std::string& name, const std::string& help) {
  auto it = result_families_.find(name);
  if (it != result_families_.end()) return *it->second;
  auto& f = prometheus::BuildGauge().Name(name).Help(help).Register(*registry_);
  result_families_[name] = &f;
  return f;
}

void Metrics::forget_experiment(const std::string& name) {
  auto it = series_by_experiment_.find(name);
  if (it != series_by_experiment_.end()) {
    for (auto& s : it->second.list) s.family->Remove(s.gauge);
    series_by_experiment_.erase(it);
  }
  experiment_order_.erase(std::remove(experiment_order_.begin(), experiment_order_.end(), name),
                          experiment_order_.end());
}

void Metrics::record_ingested(const Json& fields, std::string_view series_text, const std::function<Json()>& whole) {
  auto status = fields.find("status");
  auto value_it = fields.find("value");
  std::optional<double> ok_value;
  if (status != fields.end() && *status == "ok" && value_it != fields.end() && value_it->is_number())
    ok_value = value_it->get<double>();
  const std::string experiment = ok_value ? fields.value("experiment", "") : std::string();
  record_ingested(
      experiment, ok_value, series_text, whole ? whole : [&fields] { return fields; });
}

void Metrics::record_ingested(std::string_view experiment_name, std::optional<double> ok_value,
                              std::string_view series_text, const std::function<Json()>& whole) {
  std::lock_guard lock(mutex_);
  records_total_.Increment();
  if (!ok_value) return;
  const double raw_value = *ok_value;
  if (experiment_order_.empty() || experiment_order_.back() != experiment_name) {
    if (std::find(experiment_order_.begin(), experiment_order_.end(), experiment_name) == experiment_order_.end()) {
      experiment_order_.emplace_back(experiment_name);
      while (experiment_order_.size() > kMaxExperiments) forget_experiment(experiment_order_.front());
    }
  }
  auto found = series_by_experiment_.find(experiment_name);
  if (found == series_by_experiment_.end())
    found = series_by_experiment_.emplace(std::string(experiment_name), ExperimentSeries{}).first;
  auto& series = found->second;
  if (!series_text.empty()) {
    if (auto hit = series.by_text.find(series_text); hit != series.by_text.end()) {
      const ResultGauges& g = hit->second;
      g.value->Set(raw_value * g.factor);
      g.gpus->Set(g.gpu_count);
      g.ranks->Set(g.rank_count);
      if (replaying_) live_.insert({g.value, g.gpus, g.ranks});
      return;
    }
  }
  add_series(std::string(experiment_name), raw_value, series_text, whole(), false);
}

void Metrics::add_series(const std::string& experiment, double raw_value, std::string_view series_text, const Json& r,
                         bool replayed) {
  auto found = series_by_experiment_.find(experiment);
  if (found == series_by_experiment_.end()) found = series_by_experiment_.emplace(experiment, ExperimentSeries{}).first;
  auto& series = found->second;
  const std::string unit = r.value("unit", "");
  auto base = base_unit(unit);
  const double factor = base ? base->factor : 1.0;
  const Json params = r.value("params", Json::object());
  const Json placement = r.value("placement", Json::object());
  std::map<std::string, std::string> labels{
      {"experiment", experiment},
      {"workload", r.value("workload", "")},
      {"variant", r.value("variant", "")},
      {"nodes", std::to_string(placement.value("nodes", 1))},
      {"gpus", std::to_string(placement.value("gpus", 0))},
      {"ranks", std::to_string(placement.value("ranks", 0))},
      // What the ranks ran on: "gpu", or "host" for a host-memory run (gpus="0" then).
      {"device", placement.value("gpus", 0) > 0 ? "gpu" : "host"},
  };
  for (const char* key : {"op", "dtype", "reduce_op", "precision", "backend"})
    if (params.contains(key) && params[key].is_string()) labels[key] = params[key].get<std::string>();
  if (r.contains("point") && r["point"].contains("size")) labels["size"] = r["point"]["size"].dump();
  if (params.contains("in_place") && params["in_place"].is_boolean())
    labels["in_place"] = params["in_place"].get<bool>() ? "1" : "0";
  // The gauge is in the base unit its name ends with; the record's own unit is said beside it.
  std::string help = "Latest median of " + r.value("metric", std::string());
  if (base && base->name != unit)
    help += ", in " + base->name + " (records give " + unit + ")";
  else if (!unit.empty())
    help += ", in " + unit;
  auto& family = result_family(result_metric_name(r.value("workload", ""), r.value("metric", ""), unit), help);
  auto keep = [&](prometheus::Family<prometheus::Gauge>& f, const std::map<std::string, std::string>& l,
                  double v) -> prometheus::Gauge& {
    auto& gauge = f.Add(l);
    // A replayed (older) record does not overwrite what a record posted since the start set.
    if (!replayed || !live_.count(&gauge)) gauge.Set(v);
    if (replaying_ && !replayed) live_.insert(&gauge);
    if (series.listed.insert(&gauge).second) series.list.push_back({&f, &gauge});
    return gauge;
  };
  ResultGauges g{};
  g.factor = factor;
  g.gpu_count = placement.value("gpus", 0);
  g.rank_count = placement.value("ranks", 0);
  g.value = &keep(family, labels, raw_value * factor);
  // The placement's GPU and rank counts as values, so that PromQL can divide by them (labels
  // cannot be turned into numbers): deploy/prometheus/rules.yml's speedup and efficiency.
  const std::map<std::string, std::string> placement_labels{{"experiment", experiment},
                                                            {"nodes", labels["nodes"]},
                                                            {"gpus", labels["gpus"]},
                                                            {"ranks", labels["ranks"]},
                                                            {"device", labels["device"]}};
  g.gpus = &keep(placement_gpus_, placement_labels, g.gpu_count);
  g.ranks = &keep(placement_ranks_, placement_labels, g.rank_count);
  if (!series_text.empty()) {
    // Texts that differ only in spelling name the same gauges: the map is bounded all the same.
    if (series.by_text.size() >= 4 * series.list.size() + 1024) series.by_text.clear();
    series.by_text.emplace(std::string(series_text), g);
  }
}

std::string Metrics::text() const {
  std::lock_guard lock(mutex_);
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace scalebench
