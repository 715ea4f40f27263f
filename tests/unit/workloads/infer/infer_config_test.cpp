// The infer workload's host side: its parameters, the rules and run settings they give, the
// batched-against-one-by-one comparison and the record with its printed summary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog/registry.hpp"
#include "common/error.hpp"
#include "record/record.hpp"
#include "workloads/infer/infer_config.hpp"
#include "workloads/infer/infer_records.hpp"

namespace scalebench::infer {
namespace {

InferConfig config(Json params) { return InferConfig::from_params(with_defaults("infer", params)); }

TEST(InferConfig, DefaultsAreResNet50Fp16OfflineUnderMlperfsRules) {
  const InferConfig c = config(Json::object());
  EXPECT_EQ(c.model, "resnet50");
  EXPECT_EQ(c.precision, "fp16");
  EXPECT_EQ(c.scenario, Scenario::offline);
  EXPECT_EQ(c.min_duration_s, 600);
  EXPECT_EQ(c.min_queries, 1u) << "offline: one query";
  EXPECT_EQ(c.batch_sizes(), (std::vector<int>{128}));
  EXPECT_EQ(config({{"scenario", "multi_stream"}}).min_queries, 662u) << "auto: the rule's";
  EXPECT_EQ(config({{"scenario", "multi_stream"}, {"min_queries", 50}}).min_queries, 50u);
  EXPECT_EQ(config({{"scenario", "server"}, {"max_batch", 16}}).batch_sizes(), (std::vector<int>{1, 2, 4, 8, 16}));
  try {
    config({{"precision", "tf32"}});
    FAIL() << "tf32 was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("precision: 'tf32'"), std::string::npos) << e.what();
  }
  // 8-bit engines for the CNNs; text generation is bf16 only.
  EXPECT_EQ(config({{"precision", "int8"}}).precision, "int8");
  EXPECT_EQ(config({{"precision", "fp8e4m3"}}).precision, "fp8e4m3");
  EXPECT_THROW(config({{"precision", "int8"}, {"model", "gpt2-124m"}}), Error);
  // Their fp16 prefix: chosen by timing unless a count is given; a negative count is refused.
  EXPECT_EQ(config({{"precision", "int8"}}).fp16_convolutions, -1);
  EXPECT_EQ(config({{"precision", "int8"}, {"fp16_convolutions", 11}}).fp16_convolutions, 11);
  EXPECT_THROW(config({{"precision", "int8"}, {"fp16_convolutions", -2}}), Error);
  // Fused graphs in fp16 only: the 8-bit engines always fuse, bf16's answered wrongly and fp32 has
  // none, so asking for them there names the field.
  EXPECT_EQ(config({{"conv_api", "fused"}}).conv_api, "fused");
  for (const char* p : {"int8", "bf16", "fp32"}) {
    SCOPED_TRACE(p);
    try {
      config({{"conv_api", "fused"}, {"precision", p}});
      FAIL() << "fused was taken";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("conv_api: fused with precision " + std::string(p), 0), 0u) << e.what();
    }
  }
}

TEST(InferConfig, OfflineQuerySizedByTheExpectedRateInWholeBatches) {
  const InferConfig c = config({{"min_duration_s", 10}});
  EXPECT_EQ(c.loop(1000, 0).offline_samples, 24576u) << "at least the rule's 24,576 samples";
  EXPECT_EQ(c.loop(30000, 0).offline_samples, 330112u) << "10 s x 30k/s x 1.1 = 330,000, up to whole batches of 128";
  const LoopSettings server = config({{"scenario", "server"}, {"batch_timeout_ms", 3}}).loop(0, 250);
  EXPECT_EQ(server.target_qps, 250);
  EXPECT_DOUBLE_EQ(server.batch_timeout_s, 0.003);
  EXPECT_EQ(server.samples_per_query, 1);
  EXPECT_EQ(config({{"scenario", "multi_stream"}}).loop(0, 0).samples_per_query, 8);
  EXPECT_EQ(config({{"scenario", "multi_stream"}}).loop(0, 0).max_batch, 8) << "the engine's largest batch";
  EXPECT_EQ(config({{"scenario", "single_stream"}}).loop(0, 0).max_batch, 1);
  EXPECT_EQ(config({{"scenario", "server"}, {"max_batch", 100}}).loop(0, 10).max_batch, 100);
}

TEST(InferConfig, ServerPartialBatchesWaitForAnIdleStreamUnlessOnTimeout) {
  EXPECT_TRUE(config({{"scenario", "server"}}).loop(0, 250).partial_waits_for_idle) << "the default";
  EXPECT_FALSE(config({{"scenario", "server"}, {"dispatch", "on_timeout"}}).loop(0, 250).partial_waits_for_idle);
}

TEST(InferConfig, VerdictJudgesByTheRulesAndABoundOfItsOwnIsInvalid) {
  RunTally t;
  t.queries = 1000, t.samples = 1000, t.duration_s = 700, t.scheduled_qps = 100;
  t.latencies_ms.assign(1000, 5.0);
  EXPECT_TRUE(config({{"scenario", "server"}}).judge(t).valid);
  const ScenarioResult own = config({{"scenario", "server"}, {"latency_bound_ms", 20}}).judge(t);
  EXPECT_FALSE(own.valid);
  ASSERT_EQ(own.reasons.size(), 1u);
  EXPECT_EQ(own.reasons[0], "latency bound 20.00 ms, not the rule's 15 ms");
  t.duration_s = 10;
  const ScenarioResult short_run = config({{"scenario", "server"}, {"min_duration_s", 10}}).judge(t);
  EXPECT_FALSE(short_run.valid) << "a shorter run than the rule's is measured, not valid";
  EXPECT_EQ(short_run.reasons.at(0), "ran 10.0 s, under the 600 s minimum");
}

TEST(InferConfig, BatchingCheckPassesRoundingAndFailsAnotherSamplesAnswer) {
  const int rows = 4, classes = 3;
  const std::vector<float> batched = {1.0f, 2.0f, 3.0f, 1.5f, 2.5f, 2.0f, 0.5f, 2.2f, 3.1f, 1.2f, 1.8f, 2.9f};
  const BatchingCheck same = batching_check(batched, batched, rows, classes, 0.3);
  EXPECT_EQ(same.wrong, 0);
  EXPECT_EQ(same.checked, 4);
  EXPECT_EQ(same.top1_agree, 4);
  EXPECT_EQ(same.max_error, 0);
  std::vector<float> rounded = batched;
  for (float& v : rounded) v += 0.01f;
  EXPECT_EQ(batching_check(batched, rounded, rows, classes, 0.3).wrong, 0);
  std::vector<float> swapped = batched;  // rows 0 and 1 exchanged
  std::swap_ranges(swapped.begin(), swapped.begin() + 3, swapped.begin() + 3);
  const BatchingCheck c = batching_check(batched, swapped, rows, classes, 0.6);
  EXPECT_EQ(c.wrong, 2) << "both rows given the other's answer";
  EXPECT_GT(c.max_error, 1.0);
  EXPECT_THROW(batching_check({1, 2, 3}, {1, 2, 3}, 1, 3, 0.3), Error) << "one row has no spread";
  EXPECT_LT(batching_tolerance("fp32"), batching_tolerance("fp16"));
  EXPECT_LT(batching_tolerance("bf16"), 1.4) << "under a swapped row's error";
  EXPECT_LT(batching_tolerance("int8"), 1.4) << "under a swapped row's error";
  EXPECT_LT(batching_tolerance("fp8e4m3"), 1.4) << "under a swapped row's error";
  EXPECT_THROW(batching_tolerance("int4"), Error);
}

TEST(InferRecords, RecordHoldsTheVerdictPercentilesRulesAndSearch) {
  const InferConfig c = config({{"scenario", "server"}, {"min_duration_s", 1}});
  InferOutcome o;
  o.target_qps = 400;
  o.expected_samples_per_s = 900;
  o.run.tally.queries = 420, o.run.tally.samples = 420, o.run.tally.duration_s = 1.05, o.run.tally.scheduled_qps = 400;
  for (int i = 0; i < 420; ++i) o.run.tally.latencies_ms.push_back(1.0 + i * 0.01);
  o.run.batches = 210, o.run.batched_samples = 420, o.run.scheduled_queries = 420;
  o.result = c.judge(o.run.tally);
  o.search = QpsSearch{400, {{450, false}, {400, true}}, true};
  o.trial_results = {o.result, o.result};
  const Json context{{"schema_version", kRecordSchemaVersion},
                     {"run_id", 3},
                     {"experiment", "infer"},
                     {"workload", "infer"},
                     {"params", Json::object()}};
  const Json r = infer_record(context, c, o, 0, Json{{"model", "resnet50"}}, Json{{"samples", 16}}, 0, 16);
  EXPECT_EQ(validate_record(r), "") << r.dump();
  EXPECT_EQ(r["metric"], "queries_per_second");
  EXPECT_EQ(r["value"], 400.0);
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["correctness"]["passed"], true);
  const Json& d = r["details"];
  EXPECT_EQ(d["verdict"], "INVALID");
  EXPECT_EQ(d["reasons"][0], "ran 1.1 s, under the 600 s minimum");
  EXPECT_EQ(d["latency_ms"]["p99"], 1.0 + 415 * 0.01) << "nearest rank: the 416th of 420";
  EXPECT_EQ(d["rules"]["latency_bound_ms"], 15);
  EXPECT_EQ(d["run_minimums"]["min_duration_s"], 1);
  EXPECT_EQ(d["mean_batch"], 2.0);
  EXPECT_EQ(d["search"]["trials"].size(), 2u);
  const std::string text = infer_summary(r);
  EXPECT_NE(text.find("infer resnet50 fp16 server gpu 0: INVALID 400.00 queries/s"), std::string::npos) << text;
  EXPECT_NE(text.find("  INVALID: ran 1.1 s, under the 600 s minimum"), std::string::npos) << text;
  EXPECT_NE(text.find("  search: 450.0 queries/s over the bound"), std::string::npos) << text;
  EXPECT_NE(text.find("check: batched against one by one passed"), std::string::npos) << text;

  o.search = QpsSearch{0, {{450, false}}, false};
  const Json none = infer_record(context, c, o, 0, Json::object(), Json::object(), 0, 16);
  EXPECT_EQ(none["status"], "failed");
  EXPECT_TRUE(none["value"].is_null());
  EXPECT_EQ(validate_record(none), "") << none.dump();
  const Json unchecked = infer_record(context, c, o, 0, Json::object(), "nothing to compare", 0, 0);
  EXPECT_EQ(unchecked["correctness"]["checked"], false) << "no samples compared is no check";
}

}  // namespace
}  // namespace scalebench::infer
