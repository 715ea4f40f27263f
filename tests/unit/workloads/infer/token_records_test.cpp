// The infer workload's text generation, host side: its parameters and the record of a run (from
// the token loop driven with simulated device time, as token_loop_test does).
#include <gtest/gtest.h>

#include <algorithm>

#include "catalog/registry.hpp"
#include "common/error.hpp"
#include "record/record.hpp"
#include "record/table_printer.hpp"
#include "tests/unit/workloads/infer/token_loop_simulation.hpp"
#include "workloads/infer/infer_config.hpp"
#include "workloads/infer/token_records.hpp"

namespace scalebench::infer {
namespace {

InferConfig config(Json params) { return InferConfig::from_params(with_defaults("infer", params)); }

std::string error_of(const Json& params) {
  try {
    config(params);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(InferText, Gpt2ModelsGenerateTextInBf16UnderOfflineAndServer) {
  const InferConfig c = config({{"model", "gpt2-124m"}});
  EXPECT_TRUE(c.generates_text());
  EXPECT_EQ(c.precision, "bf16") << "auto";
  EXPECT_EQ(config(Json::object()).precision, "fp16") << "auto, for a CNN";
  EXPECT_FALSE(config(Json::object()).generates_text());
  EXPECT_NE(error_of({{"model", "gpt2-124m"}, {"precision", "fp16"}}).find("precision: 'fp16'"), std::string::npos);
  EXPECT_NE(error_of({{"model", "gpt2-124m"}, {"scenario", "single_stream"}}).find("scenario: single_stream"),
            std::string::npos);
  EXPECT_NE(error_of({{"model", "gpt2-1558m"}, {"prompt_tokens", 1000}, {"output_tokens", 100}})
                .find("prompt_tokens + output_tokens: 1100"),
            std::string::npos);
  const TokenLoopSettings s = config({{"model", "gpt2-124m"},
                                      {"max_batch", 32},
                                      {"prompt_tokens", 64},
                                      {"output_tokens", 100},
                                      {"min_duration_s", 10}})
                                  .token_loop(20, 0);
  EXPECT_EQ(s.slots, 32);
  ASSERT_EQ(s.shapes.size(), 1u);
  EXPECT_EQ(s.shapes[0].prompt_tokens, 64);
  EXPECT_EQ(s.shapes[0].output_tokens, 100);
  EXPECT_EQ(s.offline_queries, 220u) << "10 s x 20 queries/s x 1.1";
  EXPECT_EQ(config({{"model", "gpt2-124m"}, {"min_duration_s", 0}}).token_loop(20, 0).offline_queries, 100u)
      << "min_queries auto: MLPerf's 100 for LLMs, offline too";
  EXPECT_EQ(
      config({{"model", "gpt2-124m"}, {"min_duration_s", 0}, {"min_queries", 3}}).token_loop(20, 0).offline_queries,
      3u);
  EXPECT_NE(error_of({{"checkpoint", "/tmp/w.ckpt"}}).find("checkpoint: /tmp/w.ckpt; weights from a file are for text"),
            std::string::npos)
      << "resnet50 has no checkpoint";
  EXPECT_EQ(config({{"model", "gpt2-124m"}, {"checkpoint", "/tmp/w.ckpt"}}).checkpoint, "/tmp/w.ckpt");
  const TokenRules interactive = config({{"model", "gpt2-124m"}, {"latency_class", "interactive"}}).token_rules();
  EXPECT_EQ(interactive.ttft_bound_ms, 450);
  EXPECT_EQ(interactive.tpot_bound_ms, 40);
}

TEST(InferText, RecordHoldsTokensPerSecondTtftTpotAndTheVerdict) {
  const InferConfig c = config({{"model", "gpt2-124m"},
                                {"scenario", "server"},
                                {"max_batch", 8},
                                {"prompt_tokens", 32},
                                {"output_tokens", 20},
                                {"min_duration_s", 2},
                                {"min_queries", 10}});
  TokenOutcome o;
  o.target_qps = 5;
  o.expected_queries_per_s = 40;
  o.tally = test_support::simulated_tally(c.token_loop(40, 5));
  o.result = judge_tokens(c.scenario, c.token_rules(), o.tally);
  o.search = QpsSearch{5, {{10, false}, {5, true}}, true};
  o.trial_results = {o.result, o.result};
  const Json context{{"schema_version", kRecordSchemaVersion},
                     {"run_id", 4},
                     {"experiment", "infer-gpt"},
                     {"workload", "infer"},
                     {"params", Json::object()}};
  const Json r = token_record(context, c, o, 0, Json{{"model", "gpt2-124m"}});
  EXPECT_EQ(validate_record(r), "") << r.dump();
  EXPECT_EQ(r["metric"], "tokens_per_second");
  EXPECT_EQ(r["unit"], "tokens/s");
  EXPECT_EQ(r["status"], "ok");
  EXPECT_DOUBLE_EQ(r["value"].get<double>(), o.result.tokens_per_second);
  EXPECT_EQ(r["point"]["prompt_tokens"], 32);
  EXPECT_EQ(r["point"]["latency_class"], "server");
  const Json& d = r["details"];
  EXPECT_EQ(d["verdict"], "INVALID");
  EXPECT_EQ(d["reasons"][0], "ran " + fixed_number(d["duration_s"].get<double>(), 1) + " s, under the 600 s minimum");
  EXPECT_EQ(d["output_tokens"].get<std::uint64_t>(), 20 * d["queries"].get<std::uint64_t>());
  // Alone in the engine, a query's first token comes one prefill iteration after it arrives, and
  // each next one a decode iteration later.
  EXPECT_NEAR(d["ttft_ms"]["p50"].get<double>(), 2.32, 0.01);
  EXPECT_NEAR(d["tpot_ms"]["p50"].get<double>(), 2.0, 0.05);
  EXPECT_EQ(d["ttft_cdf"]["percent"].size(), d["ttft_cdf"]["ms"].size());
  EXPECT_EQ(d["rules"]["ttft_bound_ms"], 2000);
  EXPECT_EQ(d["search"]["trials"].size(), 2u);
  const std::string text = token_summary(r);
  EXPECT_NE(text.find("infer gpt2-124m bf16 server gpu 0: INVALID"), std::string::npos) << text;
  EXPECT_NE(text.find("| TTFT ms p50 2.3"), std::string::npos) << text;
  EXPECT_NE(text.find("  search: 10.00 queries/s over a bound"), std::string::npos) << text;
  EXPECT_EQ(r["correctness"]["checked"], false) << "no choices compared is no check";
  // The check: cached choices against the step-by-step recompute; one beyond rounding fails.
  o.check = Json{{"same_choice", 31}};
  o.check_rows = 32;
  const Json checked = token_record(context, c, o, 0, Json::object());
  EXPECT_EQ(checked["correctness"]["passed"], true);
  EXPECT_EQ(checked["details"]["check"]["same_choice"], 31);
  EXPECT_EQ(checked["status"], "ok");
  o.check_wrong = 2;
  const Json wrong = token_record(context, c, o, 0, Json::object());
  EXPECT_EQ(wrong["status"], "failed");
  EXPECT_EQ(wrong["reason"], "2 of 32 greedy choices made with the KV cache differ from the same prefix run afresh");
  EXPECT_EQ(validate_record(wrong), "") << wrong.dump();
  o.check_wrong = 0;
  o.search = QpsSearch{0, {{10, false}}, false};
  const Json none = token_record(context, c, o, 0, Json::object());
  EXPECT_EQ(none["status"], "failed");
  EXPECT_TRUE(none["value"].is_null());
  EXPECT_EQ(validate_record(none), "") << none.dump();
}

// The infer workload's help lists the gpt workload's models among its own.
TEST(InferText, DeclarationOffersTheGptModels) {
  const WorkloadDef* d = find_workload("infer");
  ASSERT_NE(d, nullptr);
  const ParamDef* model = d->find("model");
  ASSERT_NE(model, nullptr);
  for (const char* name : {"resnet50", "gpt2-124m", "gpt2-1558m", "gpt2-tiny", "llama3-8b", "llama-tiny"})
    EXPECT_NE(std::find(model->choices.begin(), model->choices.end(), name), model->choices.end()) << name;
  EXPECT_TRUE(config({{"model", "llama3-8b"}, {"prompt_tokens", 2048}, {"output_tokens", 512}}).generates_text());
}

}  // namespace
}  // namespace scalebench::infer
