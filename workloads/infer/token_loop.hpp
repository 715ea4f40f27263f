#pragma once
// The harness's run loop for text generation, with time taken out: LoadGen's issuing side and a
// serving engine's continuous batching, as a state machine the caller drives with the time of
// each step (as loadgen_loop.hpp does for fixed-size samples; tests feed it any times they like).
//
// The engine works in iterations, one at a time (a sequence's next token needs its last): in one
// iteration the queries admitted into free slots have their prompts run (prefill) and give their
// first token, and every other sequence in a slot gives one more token. A query leaves its slot
// after its last token; a query that arrives while others decode joins at the next iteration
// (continuous batching), not when a whole batch has finished.
//
// Issuing, as LoadGen does for LLMs:
// - offline: every query at the start;
// - server: queries at Poisson arrival times at target_qps until both min_queries and
//   min_duration_s are scheduled; a query's issue time is its scheduled time.
// Waiting queries are admitted first come, first served, while slots are free and the
// iteration's prompt tokens stay within max_prefill_tokens (one query always, however long).
//
// Per query: TTFT = its first token's time - its issue time; TPOT = (its last token's time - its
// first token's time) / (output tokens - 1), for queries of two tokens or more.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "workloads/infer/scenario.hpp"

namespace scalebench::infer {

// A query's prompt and how many tokens it asks for (MLPerf's LLM datasets give both per sample).
struct QueryShape {
  int prompt_tokens = 1;
  int output_tokens = 1;
};

struct TokenLoopSettings {
  Scenario scenario = Scenario::offline;                        // offline or server
  int slots = 1;                                                // sequences decoded at once
  int max_prefill_tokens = 0;                                   // prompt tokens admitted in one iteration; 0: no limit
  std::vector<QueryShape> shapes = std::vector<QueryShape>(1);  // query i has shapes[i % size]
  double target_qps = 0;                                        // server
  double min_duration_s = 0;                                    // server
  std::uint64_t min_queries = 1;                                // server
  std::uint64_t offline_queries = 1;                            // offline
  std::uint64_t seed = 1;                                       // server: the arrival schedule's
  // Server: stop as soon as the p(give_up_percentile) TTFT is certain to pass give_up_ttft_ms
  // (more of the scheduled queries have passed it, or wait past it unadmitted, than that
  // percentile leaves): a search's trial far above capacity then ends in seconds rather than
  // after its backlog drains. 0: run to the end.
  double give_up_ttft_ms = 0;
  double give_up_percentile = 99;
};

// A query admitted into `slot` this iteration: its prompt is run and its first token chosen.
struct Admission {
  int slot = 0;
  std::uint64_t query = 0;
  QueryShape shape;
};

// What the engine runs next, as one iteration.
struct Iteration {
  std::vector<Admission> admit;
  std::vector<int> decode;  // slots whose sequences give one more token
  long long prompt_tokens() const;
};

struct TokenStep {
  std::optional<Iteration> run;  // start it now; complete() when it is done
  // When to call advance again if nothing is in flight (the next arrival); none: after a
  // completion, or done.
  std::optional<double> wake_s;
  bool done = false;  // every query issued has its tokens and no more will be issued
};

// What a run did: from its start to the last token.
struct TokenTally {
  std::uint64_t queries = 0, output_tokens = 0, prompt_tokens = 0;
  double duration_s = 0;
  std::vector<double> ttft_ms, tpot_ms, latency_ms;  // per completed query; tpot of 2+ tokens only
  std::uint64_t iterations = 0, decode_rows = 0;     // decode_rows / iterations: the mean decode batch
  double scheduled_qps = 0;                          // server: the rate queries arrived at
  std::string gave_up;                               // why the run stopped early (give_up_ttft_ms); "" if it did not
};

class TokenLoop {
 public:
  // Throws Error for settings that cannot run (no slots, an empty or non-positive shape, a
  // scenario other than offline or server).
  explicit TokenLoop(const TokenLoopSettings& s);

  // Everything due at `now_s` (seconds on the caller's steady clock, never decreasing): queries
  // issued and, when no iteration is in flight, the next one. The first call is the run's start.
  TokenStep advance(double now_s);
  // The iteration in flight finished at `now_s`: its tokens are out.
  void complete(double now_s);

  TokenTally tally() const;
  std::size_t scheduled_queries() const { return arrivals_.size(); }

 private:
  struct Active {
    std::uint64_t query = 0;
    QueryShape shape;
    double issued_s = 0, first_token_s = 0;
    int produced = 0;
    bool admitted_now = false;  // its prompt is in the iteration in flight
  };
  struct Waiting {
    std::uint64_t query = 0;
    double issued_s = 0;
  };
  QueryShape shape_of(std::uint64_t query) const;
  void issue_due(double now_s);
  Iteration next_iteration();
  void finish(Active& a, double now_s);
  // give_up_ttft_ms: whether the percentile's TTFT is certain to pass it by `now_s`; then the run
  // ends (no more issued, the waiting and the sequences in slots dropped) and says why.
  bool give_up(double now_s);

  TokenLoopSettings s_;
  std::vector<double> arrivals_;  // server: seconds after the start
  std::size_t next_arrival_ = 0;
  std::uint64_t next_query_ = 0, total_queries_ = 0;
  bool started_ = false, in_flight_ = false;
  double start_s_ = 0, last_token_s_ = 0;
  std::deque<Waiting> waiting_;
  std::vector<std::optional<Active>> slots_;
  TokenTally tally_;
  std::uint64_t late_ = 0;  // queries whose first token came after give_up_ttft_ms
};

}  // namespace scalebench::infer
