#pragma once
// What a text-generation run measured, as a record and as a printed line, apart from the
// measuring. Pure: no CUDA.
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/infer/infer_config.hpp"
#include "workloads/infer/qps_search.hpp"
#include "workloads/infer/token_loop.hpp"
#include "workloads/infer/token_verdict.hpp"

namespace scalebench::infer {

// One text-generation run judged, and (server searches) the search that chose it.
struct TokenOutcome {
  TokenTally tally;
  TokenResult result;
  double target_qps = 0;  // server: the rate this run was scheduled at
  std::optional<QpsSearch> search;
  std::vector<TokenResult> trial_results;  // server search: each trial's, in order
  double expected_queries_per_s = 0;       // the warm-up's rate
  Json check = "not checked (check: false)";
  long long check_wrong = 0, check_rows = 0;  // greedy choices against the step-by-step recompute
};

// The run's record: metric tokens_per_second (output tokens over the run, what MLPerf reports for
// LLMs), details the verdict and its reasons, TTFT, TPOT and end-to-end latency percentiles with
// the TTFT and TPOT CDFs, queries/s, the mean decode batch, the rules judged by and the run's own
// minimums, the search's trials, the engine and the check (cached decoding against the
// step-by-step recompute). A server search with no valid rate is failed, with the lowest rate's
// reasons; a check with a choice beyond rounding fails the record.
Json token_record(const Json& context, const InferConfig& cfg, const TokenOutcome& o, int rank, const Json& engine);

// "infer gpt2-124m bf16 server gpu 0: VALID 41234.5 tokens/s | TTFT ms p50 ... p99 ... | TPOT ms
// p50 ... p99 ... | 512 queries (3.2/s), 131072 tokens in 160.0 s, mean decode batch 62.1" and a
// line per reason and per search trial.
std::string token_summary(const Json& record);

}  // namespace scalebench::infer
