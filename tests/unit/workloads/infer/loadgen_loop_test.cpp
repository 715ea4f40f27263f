// The harness's run loop, pure over time: every scenario driven to its end with simulated device
// time (each batch takes a known time on its stream, a stream's batches one after another), so
// that issue times, batching, stream choice, completions and latencies are exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "workloads/infer/batch_buckets.hpp"
#include "workloads/infer/latency_summary.hpp"
#include "workloads/infer/loadgen_loop.hpp"
#include "workloads/infer/scenario_verdict.hpp"

namespace scalebench::infer {
namespace {

struct Sent {
  double at = 0;
  int stream = 0;
  std::vector<std::uint64_t> samples;
  bool stream_busy = false;  // a batch was in flight on the stream when this one went
};

// Runs `loop` to its end: a batch of n samples takes service(n) seconds once its stream is free.
std::vector<Sent> simulate(LoadGenLoop& loop, int streams, const std::function<double(int)>& service) {
  std::vector<Sent> sent;
  std::vector<std::deque<double>> ends(static_cast<std::size_t>(streams));
  std::vector<double> busy_until(static_cast<std::size_t>(streams), 0);
  double t = 0;
  for (int guard = 0; guard < 1000000; ++guard) {
    const LoopStep step = loop.advance(t);
    for (const Dispatch& d : step.dispatch) {
      auto& busy = busy_until[static_cast<std::size_t>(d.stream)];
      const bool was_busy = !ends[static_cast<std::size_t>(d.stream)].empty();
      busy = std::max(t, busy) + service(static_cast<int>(d.samples.size()));
      ends[static_cast<std::size_t>(d.stream)].push_back(busy);
      sent.push_back({t, d.stream, d.samples, was_busy});
    }
    if (step.done) return sent;
    if (!step.dispatch.empty()) continue;
    int first = -1;
    for (int k = 0; k < streams; ++k)
      if (!ends[static_cast<std::size_t>(k)].empty() &&
          (first < 0 || ends[static_cast<std::size_t>(k)].front() < ends[static_cast<std::size_t>(first)].front()))
        first = k;
    const double done_at =
        first < 0 ? std::numeric_limits<double>::infinity() : ends[static_cast<std::size_t>(first)].front();
    if (step.wake_s && *step.wake_s < done_at) {
      t = std::max(t, *step.wake_s);
    } else {
      if (first < 0) {
        ADD_FAILURE() << "the loop waits for a completion with nothing in flight";
        return sent;
      }
      t = done_at;
      ends[static_cast<std::size_t>(first)].pop_front();
      loop.complete(first, t);
    }
  }
  ADD_FAILURE() << "the loop did not end";
  return sent;
}

TEST(InferLoop, OfflineIssuesOneQueryInFullBatchesOverTheStreams) {
  LoopSettings s;
  s.scenario = Scenario::offline;
  s.max_batch = 4;
  s.streams = 2;
  s.offline_samples = 16;
  s.pool_samples = 10;
  LoadGenLoop loop(s);
  const auto sent = simulate(loop, 2, [](int) { return 0.010; });
  ASSERT_EQ(sent.size(), 4u);
  // Two batches in flight per stream, each to the stream with the fewest: 0, 1, 0, 1, all at once.
  EXPECT_EQ(sent[0].stream, 0);
  EXPECT_EQ(sent[1].stream, 1);
  EXPECT_EQ(sent[2].stream, 0);
  EXPECT_EQ(sent[3].stream, 1);
  for (const auto& b : sent) EXPECT_EQ(b.at, 0);
  EXPECT_EQ(sent[2].samples, (std::vector<std::uint64_t>{8, 9, 0, 1})) << "sample indices wrap around the pool";
  const RunTally t = loop.tally();
  EXPECT_EQ(t.queries, 1u);
  EXPECT_EQ(t.samples, 16u);
  EXPECT_DOUBLE_EQ(t.duration_s, 0.020);
  ASSERT_EQ(t.latencies_ms.size(), 1u);
  EXPECT_NEAR(t.latencies_ms[0], 20, 1e-9) << "the query completes with its last batch";
}

TEST(InferLoop, SingleStreamIssuesTheNextQueryWhenThePreviousCompletesUntilBothMinimums) {
  LoopSettings s;
  s.scenario = Scenario::single_stream;
  s.max_batch = 64;
  s.batch_timeout_s = 0.5;  // not waited: nothing else can join a single stream's query
  s.streams = 2;
  s.min_queries = 5;
  s.min_duration_s = 0.1;
  LoadGenLoop loop(s);
  const auto sent = simulate(loop, 2, [](int n) { return 0.001 * n; });
  // 5 queries are done at 5 ms, but the duration rule wants 100 ms: 100 queries of 1 ms.
  ASSERT_EQ(sent.size(), 100u);
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].samples.size(), 1u);
    EXPECT_NEAR(sent[i].at, 0.001 * static_cast<double>(i), 1e-9) << "issued at the previous one's completion";
  }
  const RunTally t = loop.tally();
  EXPECT_EQ(t.queries, 100u);
  EXPECT_NEAR(t.duration_s, 0.1, 1e-9);
  for (double ms : t.latencies_ms) EXPECT_NEAR(ms, 1, 1e-6);
}

TEST(InferLoop, MultiStreamQueryLargerThanABatchCompletesWithItsLastPiece) {
  LoopSettings s;
  s.scenario = Scenario::multi_stream;
  s.samples_per_query = 8;
  s.max_batch = 4;
  s.streams = 2;
  s.min_queries = 3;
  s.pool_samples = 100;
  LoadGenLoop loop(s);
  // Stream 1 is slower: a query's latency is its slower piece's.
  std::vector<Sent> sent;
  int calls = 0;
  sent = simulate(loop, 2, [&](int) { return (calls++ % 2 == 0) ? 0.002 : 0.003; });
  ASSERT_EQ(sent.size(), 6u);
  EXPECT_EQ(sent[0].samples, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(sent[1].samples, (std::vector<std::uint64_t>{4, 5, 6, 7}));
  EXPECT_NE(sent[0].stream, sent[1].stream);
  EXPECT_EQ(sent[2].samples.front(), 8u) << "the next query's samples follow";
  const RunTally t = loop.tally();
  EXPECT_EQ(t.queries, 3u);
  EXPECT_EQ(t.samples, 24u);
  for (double ms : t.latencies_ms) EXPECT_NEAR(ms, 3, 1e-6);
}

TEST(InferLoop, ServerBatchesArrivalsByTimeoutAndJudgesFromTheScheduledIssueTime) {
  LoopSettings s;
  s.scenario = Scenario::server;
  s.max_batch = 8;
  s.batch_timeout_s = 0.002;
  s.streams = 1;
  s.target_qps = 5;
  s.min_queries = 5;
  s.min_duration_s = 1;
  s.seed = 7;
  const std::vector<double> at = server_schedule(5, 1, 5, 7);
  for (std::size_t i = 1; i < at.size(); ++i)
    ASSERT_GT(at[i] - at[i - 1], 0.003) << "the test's premise, for this seed";
  LoadGenLoop loop(s);
  EXPECT_EQ(loop.scheduled_queries(), at.size());
  const auto sent = simulate(loop, 1, [](int) { return 0.001; });
  // At 5 queries/s (this seed's gaps are all over 3 ms) each query waits out the timeout alone and
  // runs 1 ms.
  const RunTally t = loop.tally();
  EXPECT_EQ(t.queries, at.size());
  EXPECT_EQ(t.scheduled_qps, 5);
  std::size_t q = 0;
  for (const Sent& b : sent) {
    EXPECT_NEAR(b.at, at[q] + 0.002, 1e-9) << "a batch goes when its oldest query's timeout ends";
    q += b.samples.size();
  }
  EXPECT_EQ(q, at.size());
  EXPECT_GE(t.duration_s, 1.0) << "the schedule reaches the minimum duration";
  for (double ms : t.latencies_ms) EXPECT_NEAR(ms, 3, 1e-6);
}

TEST(InferLoop, ServerFillsBatchesWithoutWaitingAndQueuesWhenEveryStreamIsBusy) {
  LoopSettings s;
  s.scenario = Scenario::server;
  s.max_batch = 4;
  s.batch_timeout_s = 1.0;  // only full batches go before a second has passed
  s.streams = 1;
  s.depth = 1;
  s.target_qps = 10000;
  s.min_queries = 400;
  s.min_duration_s = 0;
  LoadGenLoop loop(s);
  const auto sent = simulate(loop, 1, [](int) { return 0.0005; });
  for (std::size_t i = 0; i + 1 < sent.size(); ++i) {
    EXPECT_EQ(sent[i].samples.size(), 4u) << "batch " << i << " of a busy server is full";
    if (i > 0) {
      EXPECT_GE(sent[i].at - sent[i - 1].at, 0.0005 - 1e-12) << "depth 1: one batch in flight";
    }
  }
  EXPECT_EQ(loop.tally().queries, loop.scheduled_queries());
}

// A loaded server, dispatching partial batches on their timeout, queues them on streams that are
// busy; dispatching them when a stream is idle, it keeps them on the host, where the queries that
// arrive meanwhile join them, and its p99 latency is lower at the same load.
TEST(InferLoop, ServerWhenIdleGathersOnTheHostWhatOnTimeoutQueuesOnBusyStreams) {
  LoopSettings s;
  s.scenario = Scenario::server;
  s.max_batch = 64;
  s.batch_timeout_s = 0.0005;
  s.streams = 2;
  s.depth = 2;
  s.target_qps = 20000;
  s.min_queries = 4000;
  s.min_duration_s = 0;
  const auto service = [](int n) { return 0.001 + 0.00001 * n; };  // 1 ms a batch, 10 us a sample
  struct Outcome {
    std::vector<Sent> sent;
    double mean_batch = 0, p99_ms = 0;
  };
  const auto run = [&](bool when_idle) {
    s.partial_waits_for_idle = when_idle;
    LoadGenLoop loop(s);
    Outcome o;
    o.sent = simulate(loop, s.streams, service);
    o.mean_batch = static_cast<double>(loop.batched_samples()) / static_cast<double>(loop.batches());
    const RunTally t = loop.tally();
    o.p99_ms = summarize_latencies(t.latencies_ms).p99;
    EXPECT_EQ(t.queries, loop.scheduled_queries()) << (when_idle ? "when_idle" : "on_timeout");
    return o;
  };
  const Outcome timeout = run(false), idle = run(true);
  const auto partial_on_busy = [&](const Outcome& o) {
    return std::count_if(o.sent.begin(), o.sent.end(), [&](const Sent& b) {
      return b.stream_busy && b.samples.size() < static_cast<std::size_t>(s.max_batch);
    });
  };
  ASSERT_GT(partial_on_busy(timeout), 0) << "the premise: on_timeout queues partial batches at this load";
  EXPECT_EQ(partial_on_busy(idle), 0) << "when_idle sends a partial batch only to an idle stream";
  // Here 1.72 against 2.74 ms: a query no longer waits on the device behind a batch it could
  // have joined, and batches are no smaller.
  EXPECT_LT(idle.p99_ms, 0.8 * timeout.p99_ms);
  EXPECT_GE(idle.mean_batch, timeout.mean_batch);
}

// With no timeout, when_idle is a work-conserving batcher: a query goes at once to an idle stream,
// and while both streams are busy the queries gather into the next batch.
TEST(InferLoop, ServerWhenIdleWithoutTimeoutSendsAtOnceToAnIdleStream) {
  LoopSettings s;
  s.scenario = Scenario::server;
  s.max_batch = 64;
  s.batch_timeout_s = 0;
  s.streams = 2;
  s.partial_waits_for_idle = true;
  s.target_qps = 20000;
  s.min_queries = 4000;
  s.min_duration_s = 0;
  LoadGenLoop loop(s);
  const auto sent = simulate(loop, s.streams, [](int n) { return 0.001 + 0.00001 * n; });
  EXPECT_EQ(loop.tally().queries, loop.scheduled_queries());
  for (const Sent& b : sent) EXPECT_FALSE(b.stream_busy && b.samples.size() < 64u);
}

// A search trial far above capacity stops once its p99 latency is certain to pass the bound: at
// 20,000 queries/s against an engine that serves 8,000, with 10 s scheduled, the run stops in well
// under a second, drops what waits, finishes what is in flight, and the judge says why. The same
// trial at 4,000 queries/s runs to its end within the bound.
TEST(InferLoop, ServerTrialFarAboveCapacityGivesUpOnceItsPercentileMustPassTheBound) {
  LoopSettings s;
  s.scenario = Scenario::server;
  s.max_batch = 8;
  s.batch_timeout_s = 0.001;
  s.streams = 1;
  s.depth = 1;
  s.min_duration_s = 10;
  s.min_queries = 1;
  s.give_up_latency_ms = 15;
  s.give_up_percentile = 99;
  const auto service = [](int) { return 0.001; };  // 8 samples a millisecond at most
  ScenarioRules rules;
  rules.latency_percentile = 99;
  rules.latency_bound_ms = 15;

  s.target_qps = 20000;
  LoadGenLoop over(s);
  simulate(over, 1, service);
  const RunTally t = over.tally();
  EXPECT_NE(t.gave_up.find("stopped after"), std::string::npos) << t.gave_up;
  EXPECT_LT(t.duration_s, 1.0) << "stopped early, not after the 10 s scheduled";
  EXPECT_LT(t.queries, over.scheduled_queries() / 10);
  const ScenarioResult judged = judge(Scenario::server, rules, t);
  EXPECT_FALSE(judged.within_bound);
  EXPECT_NE(std::find(judged.reasons.begin(), judged.reasons.end(), t.gave_up), judged.reasons.end());

  s.target_qps = 4000;
  LoadGenLoop under(s);
  simulate(under, 1, service);
  EXPECT_EQ(under.tally().gave_up, "");
  EXPECT_EQ(under.tally().queries, under.scheduled_queries());
  EXPECT_TRUE(judge(Scenario::server, rules, under.tally()).within_bound);
}

// The give-up's edge, with nothing completing: a query is certainly late once it has waited the
// bound, so the trial goes on while exactly as many queries as p99 allows have, and stops when one
// more has. Then nothing more is issued, what waited is dropped, and the run ends when the
// batches in flight complete.
TEST(InferLoop, ServerTrialGivesUpAtTheFirstLateQueryMoreThanItsPercentileAllows) {
  LoopSettings s;
  s.scenario = Scenario::server;
  s.max_batch = 4;
  s.batch_timeout_s = 0.001;
  s.streams = 1;
  s.depth = 2;
  s.target_qps = 2000;
  s.min_duration_s = 2;
  s.min_queries = 1;
  s.seed = 3;
  s.give_up_latency_ms = 15;
  s.give_up_percentile = 99;
  const std::vector<double> at = server_schedule(s.target_qps, s.min_duration_s, s.min_queries, s.seed);
  const std::size_t allowed = at.size() / 100;  // floor(1% of the scheduled)
  ASSERT_GT(at[allowed] - at[allowed - 1], 2e-6) << "the test's premise: arrivals further apart than its probes";
  const double edge = at[allowed] + 0.015;  // when query `allowed` (the allowed + 1st) turns late
  LoadGenLoop loop(s);
  ASSERT_EQ(loop.scheduled_queries(), at.size());
  const LoopStep first = loop.advance(0);
  ASSERT_FALSE(first.done);
  const LoopStep before = loop.advance(edge - 1e-6);
  EXPECT_FALSE(before.done);
  EXPECT_EQ(loop.tally().gave_up, "") << "exactly as many late as p99 allows";
  const LoopStep after = loop.advance(edge + 1e-6);
  EXPECT_NE(loop.tally().gave_up.find(std::to_string(allowed + 1) + " of " + std::to_string(at.size())),
            std::string::npos)
      << loop.tally().gave_up;
  EXPECT_FALSE(after.wake_s.has_value()) << "nothing more to issue";
  EXPECT_FALSE(after.done) << "the batches in flight are still to complete";
  loop.complete(0, edge + 0.001);
  const LoopStep last = loop.advance(edge + 0.001);
  EXPECT_FALSE(last.done);
  loop.complete(0, edge + 0.002);
  EXPECT_TRUE(loop.advance(edge + 0.002).done);
  EXPECT_EQ(loop.tally().queries, 8u) << "two batches of 4 were in flight; the rest were dropped";
}

TEST(InferLoop, ServerScheduleMeetsBothMinimumsAndNoMore) {
  const std::vector<double> a = server_schedule(100, 2, 10, 3);
  EXPECT_GE(a.size(), 10u);
  EXPECT_GE(a.back(), 2.0);
  EXPECT_LT(a[a.size() - 2], 2.0) << "one arrival at or past the duration ends it";
  const std::vector<double> b = server_schedule(100, 0.01, 500, 3);
  EXPECT_EQ(b.size(), 500u) << "the count rule holds where it is the longer";
  EXPECT_EQ(std::vector<double>(a.begin(), a.begin() + 10), std::vector<double>(b.begin(), b.begin() + 10))
      << "one seed, one schedule";
}

TEST(InferLoop, RefusesACompletionWithNothingInFlight) {
  LoopSettings s;
  s.scenario = Scenario::single_stream;
  LoadGenLoop loop(s);
  EXPECT_THROW(loop.complete(0, 0), Error);
  s.streams = 0;
  EXPECT_THROW(LoadGenLoop{s}, Error);
}

TEST(InferBatchBuckets, ExactWhereTheScenarioFixesThemPowersOfTwoForServer) {
  EXPECT_EQ(batch_buckets(Scenario::offline, 1, 128), (std::vector<int>{128}));
  EXPECT_EQ(batch_buckets(Scenario::single_stream, 1, 128), (std::vector<int>{1}));
  EXPECT_EQ(batch_buckets(Scenario::multi_stream, 8, 128), (std::vector<int>{8}));
  EXPECT_EQ(batch_buckets(Scenario::multi_stream, 8, 3), (std::vector<int>{2, 3})) << "pieces of 3, 3 and 2";
  EXPECT_EQ(batch_buckets(Scenario::multi_stream, 8, 4), (std::vector<int>{4}));
  EXPECT_EQ(batch_buckets(Scenario::server, 1, 100), (std::vector<int>{1, 2, 4, 8, 16, 32, 48, 64, 80, 96, 100}));
  EXPECT_EQ(batch_buckets(Scenario::server, 1, 256),
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256}));
  EXPECT_EQ(batch_buckets(Scenario::server, 1, 1), (std::vector<int>{1}));
  EXPECT_EQ(batch_buckets(Scenario::server, 1, 12), (std::vector<int>{1, 2, 4, 8, 12}));
  const std::vector<int> b = batch_buckets(Scenario::server, 1, 64);
  EXPECT_EQ(bucket_for(1, b), 1);
  EXPECT_EQ(bucket_for(33, b), 48) << "padded to the next bucket";
  EXPECT_EQ(bucket_for(32, b), 32);
  EXPECT_THROW(bucket_for(65, b), Error);
  EXPECT_EQ(batch_buckets(Scenario::server, 1, 1024),
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 640, 768, 896, 1024}));
  // However large the batch: at most twice the work, and past 16 samples the padding stays under
  // max_batch / 8.
  for (const int most : {64, 128, 256, 1024}) {
    const std::vector<int> sizes = batch_buckets(Scenario::server, 1, most);
    EXPECT_LE(sizes.size(), 15u) << most;
    for (int n = 1; n <= most; ++n) {
      EXPECT_LE(bucket_for(n, sizes), 2 * n) << most << ": " << n;
      if (n > 16) {
        EXPECT_LT(bucket_for(n, sizes) - n, std::max(16, most / 8)) << most << ": " << n;
      }
    }
  }
  EXPECT_THROW(batch_buckets(Scenario::server, 1, 0), Error);
}

}  // namespace
}  // namespace scalebench::infer
