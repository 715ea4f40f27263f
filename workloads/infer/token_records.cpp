#include "workloads/infer/token_records.hpp"

#include "record/point_record.hpp"
#include "record/table_printer.hpp"
#include "workloads/infer/infer_records.hpp"

namespace scalebench::infer {

Json token_record(const Json& context, const InferConfig& cfg, const TokenOutcome& o, int rank, const Json& engine) {
  const bool server = cfg.scenario == Scenario::server;
  const bool no_valid_rate = o.search && o.search->best_valid_qps == 0;
  const TokenRules rules = cfg.token_rules();
  PointRecord r;
  r.point = Json{{"model", cfg.model},
                 {"precision", cfg.precision},
                 {"scenario", scenario_name(cfg.scenario)},
                 {"max_batch", cfg.max_batch},
                 {"prompt_tokens", cfg.prompt_tokens},
                 {"output_tokens", cfg.output_tokens},
                 {"max_prefill_tokens", cfg.max_prefill_tokens},
                 {"gpu", rank}};
  if (server) {
    r.point["target_qps"] = cfg.target_qps;
    r.point["latency_class"] = cfg.latency_class;
  }
  r.metric = "tokens_per_second";
  r.unit = "tokens/s";
  r.better = "higher";
  if (!no_valid_rate) r.samples = {o.result.tokens_per_second};
  r.stop = o.search ? "search" : "scenario";
  r.correctness =
      cfg.check && o.check_rows > 0 ? Correctness::counted(o.check_wrong, o.check_rows) : Correctness::unchecked();
  if (no_valid_rate) {
    r.status = "failed";
    r.reason = "no arrival rate tried was valid";
    for (const auto& why : o.result.reasons) r.reason += "; " + why;
  } else if (cfg.check && o.check_wrong > 0) {
    r.status = "failed";
    r.reason = std::to_string(o.check_wrong) + " of " + std::to_string(o.check_rows) +
               " greedy choices made with the KV cache differ from the same prefix run afresh";
  }
  Json rec = r.to_json(context);
  const TokenTally& t = o.tally;
  const TokenLoopSettings loop = cfg.token_loop(o.expected_queries_per_s, o.target_qps);
  Json d{{"verdict", o.result.valid ? "VALID" : "INVALID"},
         {"reasons", o.result.reasons},
         {"ttft_ms", latency_json(o.result.ttft)},
         {"tpot_ms", latency_json(o.result.tpot)},
         {"latency_ms", latency_json(o.result.latency)},
         {"ttft_cdf", cdf_json(o.result.ttft)},
         {"tpot_cdf", cdf_json(o.result.tpot)},
         {"ttft_p99_ms", o.result.ttft_at_percentile_ms},
         {"tpot_p99_ms", o.result.tpot_at_percentile_ms},
         {"tokens_per_second", o.result.tokens_per_second},
         {"queries_per_second", o.result.queries_per_second},
         {"queries", t.queries},
         {"output_tokens", t.output_tokens},
         {"prompt_tokens", t.prompt_tokens},
         {"duration_s", t.duration_s},
         {"iterations", t.iterations},
         {"mean_decode_batch",
          t.iterations ? static_cast<double>(t.decode_rows) / static_cast<double>(t.iterations) : 0.0},
         {"rules", Json{{"min_duration_s", rules.min_duration_s},
                        {"min_queries", rules.min_queries},
                        {"percentile", rules.percentile},
                        {"ttft_bound_ms", rules.ttft_bound_ms},
                        {"tpot_bound_ms", rules.tpot_bound_ms},
                        {"latency_class", cfg.latency_class}}},
         {"run_minimums", Json{{"min_duration_s", loop.min_duration_s}, {"min_queries", loop.min_queries}}},
         {"expected_queries_per_s", o.expected_queries_per_s},
         {"engine", engine},
         {"check", o.check}};
  if (cfg.scenario == Scenario::offline) d["offline_queries"] = loop.offline_queries;
  if (server) d["scheduled_qps"] = t.scheduled_qps;
  if (o.search)
    d["search"] = search_json(*o.search, cfg.search_tolerance, [&](std::size_t i) {
      if (i >= o.trial_results.size()) return Json::object();
      const TokenResult& t = o.trial_results[i];
      return Json{{"ttft_p99_ms", t.ttft_at_percentile_ms},
                  {"tpot_p99_ms", t.tpot_at_percentile_ms},
                  {"tokens_per_second", t.tokens_per_second},
                  {"reasons", t.reasons}};
    });
  rec["details"] = d;
  return rec;
}

std::string token_summary(const Json& record) {
  const Json& p = record.at("point");
  const Json& d = record.at("details");
  auto ms = [&](const char* what) {
    const Json& l = d.at(what);
    return "p50 " + fixed_number(l.at("p50").get<double>(), 2) + " p90 " + fixed_number(l.at("p90").get<double>(), 2) +
           " p99 " + fixed_number(l.at("p99").get<double>(), 2);
  };
  std::string line =
      "infer " + p.at("model").get<std::string>() + " " + p.at("precision").get<std::string>() + " " +
      p.at("scenario").get<std::string>() + " gpu " + std::to_string(p.at("gpu").get<int>()) + ": " +
      d.at("verdict").get<std::string>() + " " +
      (record.at("value").is_null() ? std::string("-") : fixed_number(record.at("value").get<double>(), 1)) +
      " tokens/s | TTFT ms " + ms("ttft_ms") + " | TPOT ms " + ms("tpot_ms") + " | " +
      std::to_string(d.at("queries").get<std::uint64_t>()) + " queries (" +
      fixed_number(d.at("queries_per_second").get<double>(), 2) + "/s), " +
      std::to_string(d.at("output_tokens").get<std::uint64_t>()) + " tokens in " +
      fixed_number(d.at("duration_s").get<double>(), 2) + " s, mean decode batch " +
      fixed_number(d.at("mean_decode_batch").get<double>(), 1) + "\n";
  for (const Json& why : d.at("reasons")) line += "  INVALID: " + why.get<std::string>() + "\n";
  if (d.contains("search"))
    for (const Json& t : d.at("search").at("trials"))
      line +=
          "  search: " + fixed_number(t.at("qps").get<double>(), 2) + " queries/s " +
          (t.at("within_bound").get<bool>() ? "within the bounds" : "over a bound") +
          (t.contains("ttft_p99_ms") ? ", p99 TTFT " + fixed_number(t.at("ttft_p99_ms").get<double>(), 1) +
                                           " ms, p99 TPOT " + fixed_number(t.at("tpot_p99_ms").get<double>(), 2) + " ms"
                                     : "") +
          "\n";
  if (record.at("status") != "ok")
    line += "  " + record.at("status").get<std::string>() + ": " + record.at("reason").get<std::string>() + "\n";
  return line;
}

}  // namespace scalebench::infer
