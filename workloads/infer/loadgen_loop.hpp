#pragma once
// The harness's run loop with time taken out: what LoadGen's issuing side and the dynamic batcher
// do, as a state machine the caller drives with the time of each step. The real run
// (scenario_runner.hpp) feeds it a steady clock and the engine's completions; tests feed it any
// times they like, so every scheduling rule is tested without a device and without sleeping.
//
// Issuing, as LoadGen does:
// - offline: one query of every sample at the start;
// - server: queries of one sample (samples_per_query) at Poisson arrival times at target_qps, from
//   the start, until both min_queries and min_duration_s are scheduled; a query's issue time is its
//   scheduled time, so an issuing side that runs late counts against the latency;
// - single_stream, multi_stream: one query (1 or 8 samples) at a time, the next as soon as the
//   previous completes, until min_queries have completed and min_duration_s has passed.
// A query larger than max_batch is split into pieces of at most max_batch samples; pieces go
// through the dynamic batcher (full batch or timeout; single_stream and multi_stream send at once,
// since nothing else can arrive to join them), and each batch goes to the stream with the fewest
// batches in flight (the first such), if one has fewer than `depth`; with `partial_waits_for_idle`
// (server), a batch that is not full goes only to a stream with nothing in flight. A query completes
// when its last piece's batch does; its latency is that completion minus its issue time.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "workloads/infer/dynamic_batcher.hpp"
#include "workloads/infer/scenario.hpp"
#include "workloads/infer/scenario_verdict.hpp"

namespace scalebench::infer {

struct LoopSettings {
  Scenario scenario = Scenario::offline;
  int samples_per_query = 1;  // server, single_stream, multi_stream
  int max_batch = 1;
  double batch_timeout_s = 0;  // server, offline
  int streams = 1;
  // Batches in flight per stream: 2 keeps a stream's next batch queued on the device while the
  // harness learns that the previous one is done, so the device does not idle between them.
  int depth = 2;
  // Server: a batch that is not full waits on the host until a stream is idle, as Triton's dynamic
  // batcher waits for a free model instance, rather than queueing on the device once its timeout
  // ends. Under load, queries that would have queued on the device as small batches join one larger
  // batch instead, which the device runs more efficiently; when a stream is idle nothing changes.
  bool partial_waits_for_idle = false;
  double target_qps = 0;  // server
  double min_duration_s = 0;
  std::uint64_t min_queries = 1;
  std::uint64_t offline_samples = 1;  // offline: the samples of its one query
  std::uint64_t pool_samples = 1;     // sample indices are taken modulo this
  std::uint64_t seed = 1;             // server: the arrival schedule's
  // Server: stop as soon as the p(give_up_percentile) latency is certain to pass give_up_latency_ms
  // (more of the scheduled queries have completed past it, or are still outstanding past it, than
  // that percentile allows), so that a search trial far above capacity costs seconds, not the time
  // its backlog would take to drain. 0: run to the end.
  double give_up_latency_ms = 0;
  double give_up_percentile = 99;
};

// A batch the caller is to start now on `stream`: pool sample indices, in order.
struct Dispatch {
  int stream = 0;
  std::vector<std::uint64_t> samples;
};

struct LoopStep {
  std::vector<Dispatch> dispatch;
  // When to call advance again if nothing completes before; none: only after a completion.
  std::optional<double> wake_s;
  bool done = false;  // every query issued has completed and no more will be issued
};

class LoadGenLoop {
 public:
  explicit LoadGenLoop(const LoopSettings& s);

  // Everything due at `now_s` (seconds on the caller's steady clock, never decreasing): queries
  // issued, batches formed and handed to streams. The first call is the run's start.
  LoopStep advance(double now_s);
  // The oldest batch in flight on `stream` completed at `now_s`.
  void complete(int stream, double now_s);

  // From the start to the last completion.
  RunTally tally() const;
  std::uint64_t batches() const { return batches_; }
  std::uint64_t batched_samples() const { return batched_samples_; }
  std::size_t scheduled_queries() const { return arrivals_.size(); }

 private:
  struct Piece {
    std::uint64_t query = 0, first_sample = 0;
    int samples = 0;
  };
  struct Outstanding {
    double issued_s = 0;
    int pieces = 0;
    std::uint64_t samples = 0;
  };
  void issue(double at_s, std::uint64_t samples);
  // The stream the batcher's next batch may go to now (the fewest in flight, under `depth`; an idle
  // one for a partial batch under partial_waits_for_idle); -1: none.
  int stream_for_next_batch() const;
  // give_up_latency_ms: whether the percentile's latency is certain to pass it by `now_s`; then
  // nothing more is issued, waiting queries are dropped and the run ends with what is in flight.
  bool give_up(double now_s);

  LoopSettings s_;
  DynamicBatcher batcher_;
  std::vector<double> arrivals_;  // server: seconds after the start
  std::size_t next_arrival_ = 0;
  bool started_ = false, issuing_ = true;
  double start_s_ = 0, last_completion_s_ = 0;
  std::uint64_t next_query_ = 0, next_sample_ = 0, next_piece_ = 0;
  std::unordered_map<std::uint64_t, Piece> pieces_;  // waiting or in flight
  std::unordered_map<std::uint64_t, Outstanding> queries_;
  std::vector<std::deque<Batch>> in_flight_;  // by stream, oldest first
  std::uint64_t completed_queries_ = 0, completed_samples_ = 0, batches_ = 0, batched_samples_ = 0;
  std::vector<double> latencies_ms_;
  std::deque<std::pair<std::uint64_t, double>> issue_order_;  // server with give-up: (query, issued), oldest first
  std::uint64_t late_ = 0;                                    // completed past give_up_latency_ms
  std::string gave_up_;
};

// Server: the arrival times (seconds after the start) of a run at `qps`: Poisson, seeded, until
// at least `min_queries` are scheduled and the last is at or after `min_duration_s`.
std::vector<double> server_schedule(double qps, double min_duration_s, std::uint64_t min_queries, std::uint64_t seed);

}  // namespace scalebench::infer
