#pragma once
// Whether a finished text-generation run counts, as MLPerf's LLM rules judge it (VALID or INVALID,
// with every reason), and its figures: output tokens/s (what MLPerf reports for LLMs in both
// scenarios), queries/s, and the percentiles of the time to first token (TTFT) and the time per
// output token (TPOT).
#include <string>
#include <vector>

#include "workloads/infer/latency_summary.hpp"
#include "workloads/infer/scenario.hpp"
#include "workloads/infer/token_loop.hpp"

namespace scalebench::infer {

struct TokenRules {
  double min_duration_s = 600;      // as every MLPerf scenario
  std::uint64_t min_queries = 100;  // LoadGen's default minimum query count
  double percentile = 99;           // Server: TTFT and TPOT are judged at this percentile
  double ttft_bound_ms = 2000;      // Server: Llama 2 70B's bounds in MLPerf Inference
  double tpot_bound_ms = 200;
};

// MLPerf's LLM bounds by name: "server" (TTFT 2 s, TPOT 200 ms, Llama 2 70B's Server) or
// "interactive" (450 ms, 40 ms); anything else is an error that lists both.
TokenRules token_rules(const std::string& latency_class);

struct TokenResult {
  bool valid = false;
  std::vector<std::string> reasons;  // why not valid, one line each; empty when valid
  bool within_bound = false;         // Server: TTFT and TPOT within their bounds, whatever the duration
  LatencySummary ttft, tpot, latency;
  double ttft_at_percentile_ms = 0, tpot_at_percentile_ms = 0;
  double tokens_per_second = 0, queries_per_second = 0;
};

TokenResult judge_tokens(Scenario scenario, const TokenRules& rules, const TokenTally& run);

}  // namespace scalebench::infer
