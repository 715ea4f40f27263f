#include "workloads/infer/token_verdict.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "record/table_printer.hpp"

namespace scalebench::infer {

namespace {
double at_percentile(std::vector<double> v, double pct) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return percentile(v, pct);
}
}  // namespace

TokenRules token_rules(const std::string& latency_class) {
  TokenRules r;
  if (latency_class == "server") return r;
  if (latency_class == "interactive") {
    r.ttft_bound_ms = 450;
    r.tpot_bound_ms = 40;
    return r;
  }
  throw Error("latency_class '" + latency_class + "': expected server (TTFT 2000 ms, TPOT 200 ms) or interactive " +
              "(TTFT 450 ms, TPOT 40 ms)");
}

TokenResult judge_tokens(Scenario scenario, const TokenRules& rules, const TokenTally& run) {
  TokenResult out;
  out.ttft = summarize_latencies(run.ttft_ms);
  out.tpot = summarize_latencies(run.tpot_ms);
  out.latency = summarize_latencies(run.latency_ms);
  out.ttft_at_percentile_ms = at_percentile(run.ttft_ms, rules.percentile);
  out.tpot_at_percentile_ms = at_percentile(run.tpot_ms, rules.percentile);
  if (run.duration_s > 0) {
    out.tokens_per_second = static_cast<double>(run.output_tokens) / run.duration_s;
    out.queries_per_second = static_cast<double>(run.queries) / run.duration_s;
  }
  if (run.duration_s < rules.min_duration_s)
    out.reasons.push_back("ran " + fixed_number(run.duration_s, 1) + " s, under the " +
                          fixed_number(rules.min_duration_s, 0) + " s minimum");
  if (run.queries < rules.min_queries)
    out.reasons.push_back("completed " + std::to_string(run.queries) + " queries, under the " +
                          std::to_string(rules.min_queries) + " minimum");
  out.within_bound = run.queries > 0 && run.gave_up.empty();
  if (!run.gave_up.empty()) out.reasons.push_back(run.gave_up);
  if (run.queries == 0) out.reasons.push_back("no query completed");
  if (scenario == Scenario::server) {
    const std::string p = "p" + fixed_number(rules.percentile, 0);
    if (out.ttft_at_percentile_ms > rules.ttft_bound_ms) {
      out.within_bound = false;
      out.reasons.push_back(p + " TTFT " + fixed_number(out.ttft_at_percentile_ms, 1) + " ms, over the " +
                            fixed_number(rules.ttft_bound_ms, 0) + " ms bound");
    }
    if (out.tpot_at_percentile_ms > rules.tpot_bound_ms) {
      out.within_bound = false;
      out.reasons.push_back(p + " TPOT " + fixed_number(out.tpot_at_percentile_ms, 2) + " ms, over the " +
                            fixed_number(rules.tpot_bound_ms, 0) + " ms bound");
    }
  }
  out.valid = out.reasons.empty();
  return out;
}

}  // namespace scalebench::infer
