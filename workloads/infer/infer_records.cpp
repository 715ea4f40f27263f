#include "workloads/infer/infer_records.hpp"

#include "record/point_record.hpp"
#include "record/table_printer.hpp"

namespace scalebench::infer {

namespace {
struct Figure {
  std::string metric, unit, better;
};

Figure figure_of(Scenario s) {
  switch (s) {
    case Scenario::offline:
      return {"samples_per_second", "samples/s", "higher"};
    case Scenario::server:
      return {"queries_per_second", "queries/s", "higher"};
    case Scenario::single_stream:
      return {"latency_p90", "ms", "lower"};
    case Scenario::multi_stream:
      return {"latency_p99", "ms", "lower"};
  }
  return {};
}

Json rules_json(const ScenarioRules& r) {
  return Json{{"min_duration_s", r.min_duration_s},
              {"min_queries", r.min_queries},
              {"samples_per_query", r.samples_per_query},
              {"latency_percentile", r.latency_percentile},
              {"latency_bound_ms", r.latency_bound_ms}};
}
}  // namespace

Json latency_json(const LatencySummary& l) {
  return Json{{"n", l.n}, {"p50", l.p50}, {"p90", l.p90}, {"p99", l.p99}, {"p99_9", l.p999}, {"max", l.max}};
}

Json cdf_json(const LatencySummary& l) {
  Json percent = Json::array(), ms = Json::array();
  for (const CdfPoint& c : l.cdf) {
    percent.push_back(c.percent);
    ms.push_back(c.ms);
  }
  return Json{{"percent", percent}, {"ms", ms}};
}

Json search_json(const QpsSearch& search, double tolerance, const std::function<Json(std::size_t)>& trial_figures) {
  Json trials = Json::array();
  for (std::size_t i = 0; i < search.trials.size(); ++i) {
    Json t{{"qps", search.trials[i].qps}, {"within_bound", search.trials[i].valid}};
    t.update(trial_figures(i));
    trials.push_back(t);
  }
  return Json{{"best_valid_qps", search.best_valid_qps},
              {"bracketed", search.bracketed},
              {"tolerance", tolerance},
              {"trials", trials}};
}

Json infer_record(const Json& context, const InferConfig& cfg, const InferOutcome& o, int rank, const Json& engine,
                  const Json& check, long long check_wrong, long long check_rows) {
  const Figure f = figure_of(cfg.scenario);
  const bool server = cfg.scenario == Scenario::server;
  const bool no_valid_rate = o.search && o.search->best_valid_qps == 0;
  PointRecord r;
  r.point = Json{{"model", cfg.model},
                 {"precision", cfg.precision},
                 {"scenario", scenario_name(cfg.scenario)},
                 {"max_batch", cfg.max_batch},
                 {"streams", cfg.streams},
                 {"batch_timeout_ms", cfg.batch_timeout_ms},
                 {"gpu", rank}};
  if (server) {
    r.point["target_qps"] = cfg.target_qps;
    r.point["dispatch"] = cfg.dispatch_when_idle ? "when_idle" : "on_timeout";
  }
  r.metric = f.metric;
  r.unit = f.unit;
  r.better = f.better;
  if (!no_valid_rate) r.samples = {o.result.figure};
  r.stop = o.search ? "search" : "scenario";
  // A check that found nothing to compare (one batch size of one sample) is no check.
  r.correctness =
      cfg.check && check_rows > 0 ? Correctness::counted(check_wrong, check_rows) : Correctness::unchecked();
  if (no_valid_rate) {
    r.status = "failed";
    r.reason = "no arrival rate tried was valid";
    for (const auto& why : o.result.reasons) r.reason += "; " + why;
  } else if (cfg.check && check_wrong > 0) {
    r.status = "failed";
    r.reason = std::to_string(check_wrong) + " of " + std::to_string(check_rows) +
               " samples run one by one differ from the same samples run in one batch";
  }
  Json rec = r.to_json(context);
  const LoopSettings loop = cfg.loop(o.expected_samples_per_s, o.target_qps);
  Json d{{"verdict", o.result.valid ? "VALID" : "INVALID"},
         {"reasons", o.result.reasons},
         {"latency_ms", latency_json(o.result.latency)},
         {"latency_cdf", cdf_json(o.result.latency)},
         {"reported_latency_ms", o.result.reported_latency_ms},
         {"queries_per_second", o.result.queries_per_second},
         {"samples_per_second", o.result.samples_per_second},
         {"queries", o.run.tally.queries},
         {"samples", o.run.tally.samples},
         {"duration_s", o.run.tally.duration_s},
         {"batches", o.run.batches},
         {"mean_batch",
          o.run.batches ? static_cast<double>(o.run.batched_samples) / static_cast<double>(o.run.batches) : 0.0},
         {"rules", rules_json(cfg.rules())},
         {"run_minimums", Json{{"min_duration_s", loop.min_duration_s}, {"min_queries", loop.min_queries}}},
         {"expected_samples_per_s", o.expected_samples_per_s},
         {"engine", engine},
         {"check", check}};
  if (cfg.scenario == Scenario::offline) d["offline_samples"] = loop.offline_samples;
  if (server) {
    d["scheduled_qps"] = o.target_qps;
    d["scheduled_queries"] = o.run.scheduled_queries;
  }
  if (o.search)
    d["search"] = search_json(*o.search, cfg.search_tolerance, [&](std::size_t i) {
      return i < o.trial_results.size()
                 ? Json{{"p99_ms", o.trial_results[i].reported_latency_ms}, {"reasons", o.trial_results[i].reasons}}
                 : Json::object();
    });
  rec["details"] = d;
  return rec;
}

std::string infer_summary(const Json& record) {
  const Json& p = record.at("point");
  const Json& d = record.at("details");
  const Json& l = d.at("latency_ms");
  std::string line =
      "infer " + p.at("model").get<std::string>() + " " + p.at("precision").get<std::string>() + " " +
      p.at("scenario").get<std::string>() + " gpu " + std::to_string(p.at("gpu").get<int>()) + ": " +
      d.at("verdict").get<std::string>() + " " +
      (record.at("value").is_null() ? std::string("-") : fixed_number(record.at("value").get<double>(), 2)) + " " +
      record.at("unit").get<std::string>() + " | latency ms p50 " + fixed_number(l.at("p50").get<double>(), 3) +
      " p90 " + fixed_number(l.at("p90").get<double>(), 3) + " p99 " + fixed_number(l.at("p99").get<double>(), 3) +
      " p99.9 " + fixed_number(l.at("p99_9").get<double>(), 3) + " | " +
      fixed_number(d.at("queries_per_second").get<double>(), 1) + " queries/s, " +
      fixed_number(d.at("samples_per_second").get<double>(), 1) + " samples/s | " +
      std::to_string(d.at("queries").get<std::uint64_t>()) + " queries, " +
      std::to_string(d.at("samples").get<std::uint64_t>()) + " samples in " +
      fixed_number(d.at("duration_s").get<double>(), 2) + " s, mean batch " +
      fixed_number(d.at("mean_batch").get<double>(), 1) + "\n";
  for (const Json& why : d.at("reasons")) line += "  INVALID: " + why.get<std::string>() + "\n";
  if (d.contains("search"))
    for (const Json& t : d.at("search").at("trials"))
      line += "  search: " + fixed_number(t.at("qps").get<double>(), 1) + " queries/s " +
              (t.at("within_bound").get<bool>() ? "within the bound" : "over the bound") +
              (t.contains("p99_ms") ? ", p99 " + fixed_number(t.at("p99_ms").get<double>(), 3) + " ms" : "") + "\n";
  const Json& c = record.at("correctness");
  if (c.at("checked").get<bool>())
    line += std::string("  check: batched against one by one ") + (c.at("passed").get<bool>() ? "passed" : "FAILED") +
            " (" + std::to_string(c.at("wrong").get<long long>()) + " of " + std::to_string(c.value("elements", 0LL)) +
            " samples wrong)\n";
  if (record.at("status") != "ok")
    line += "  " + record.at("status").get<std::string>() + ": " + record.at("reason").get<std::string>() + "\n";
  return line;
}

}  // namespace scalebench::infer
