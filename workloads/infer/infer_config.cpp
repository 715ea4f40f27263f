#include "workloads/infer/infer_config.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "record/table_printer.hpp"
#include "workloads/infer/batch_buckets.hpp"

namespace scalebench::infer {

InferConfig InferConfig::from_params(const Json& p) {
  InferConfig c;
  c.model = p.at("model").get<std::string>();
  c.image = p.at("image").get<int>();
  std::string precision = p.at("precision").get<std::string>();
  if (precision == "auto") precision = c.generates_text() ? "bf16" : "fp16";
  if (precision != "fp16" && precision != "bf16" && precision != "fp32" && precision != "int8" &&
      precision != "fp8e4m3")
    throw Error("precision: '" + precision + "'; expected one of auto, fp16, bf16, fp32, int8, fp8e4m3");
  if (c.generates_text() && precision != "bf16")
    throw Error("precision: '" + precision + "'; " + c.model + " generates text in bf16 only (auto or bf16)");
  c.precision = precision;
  c.scenario = parse_scenario(p.at("scenario").get<std::string>());
  c.max_batch = p.at("max_batch").get<int>();
  c.batch_timeout_ms = p.at("batch_timeout_ms").get<double>();
  c.dispatch_when_idle = p.at("dispatch").get<std::string>() == "when_idle";
  c.streams = p.at("streams").get<int>();
  c.target_qps = p.at("target_qps").get<double>();
  c.latency_bound_ms = p.at("latency_bound_ms").get<double>();
  c.min_duration_s = p.at("min_duration_s").get<double>();
  // auto: the rule's count; text generation's from MLPerf's LLM rules (token_rules).
  const std::uint64_t rule_queries =
      c.generates_text() ? infer::token_rules("server").min_queries : rules_for(c.scenario, c.model).min_queries;
  const Json& mq = p.at("min_queries");
  c.min_queries = mq.is_string() && mq.get<std::string>() == "auto" ? rule_queries : mq.get<std::uint64_t>();
  c.seed = p.at("seed").get<std::uint64_t>();
  c.search_trials = p.at("search_trials").get<int>();
  c.search_tolerance = p.at("search_tolerance").get<double>();
  c.search = p.at("algo").get<std::string>() == "search";
  const Json& fc = p.at("fp16_convolutions");
  c.fp16_convolutions = fc.is_string() && fc.get<std::string>() == "auto" ? -1 : fc.get<int>();
  if (!fc.is_string() && c.fp16_convolutions < 0)
    throw Error("fp16_convolutions: " + std::to_string(c.fp16_convolutions) + " is not auto or a count of 0 or more");
  c.conv_api = p.at("conv_api").get<std::string>();
  // bf16's fused graphs answered with nothing like the bf16 net's logits on an H200 (cuDNN 9.19).
  if (c.conv_api == "fused" && c.precision != "fp16")
    throw Error("conv_api: fused with precision " + c.precision +
                "; fused runs fp16 only (int8 and fp8e4m3 always fuse; bf16's fused graphs answered wrongly on an "
                "H200, and fp32 has none)");
  c.warmup = p.at("warmup").get<int>();
  c.check = p.at("check").get<bool>();
  c.prompt_tokens = p.at("prompt_tokens").get<int>();
  c.output_tokens = p.at("output_tokens").get<int>();
  c.max_prefill_tokens = p.at("max_prefill_tokens").get<int>();
  c.latency_class = p.at("latency_class").get<std::string>();
  c.checkpoint = p.at("checkpoint").get<std::string>();
  if (!c.checkpoint.empty() && !c.generates_text())
    throw Error("checkpoint: " + c.checkpoint + "; weights from a file are for text generation (a gpt2- model), not " +
                c.model);
  (void)infer::token_rules(c.latency_class);  // names the field when it is neither class
  if (c.generates_text()) {
    if (c.scenario != Scenario::offline && c.scenario != Scenario::server)
      throw Error("scenario: " + scenario_name(c.scenario) + "; " + c.model +
                  " generates text, under offline or server (MLPerf runs LLMs under those two)");
    // The gpt workload's contexts (gpt_config.cpp): GPT-2's 1,024 positions, Llama 3's 8,192.
    const int positions = c.model.rfind("llama", 0) == 0 ? 8192 : 1024;
    if (c.prompt_tokens + c.output_tokens > positions)
      throw Error("prompt_tokens + output_tokens: " + std::to_string(c.prompt_tokens + c.output_tokens) + "; " +
                  c.model + " holds " + std::to_string(positions) + " positions");
  }
  if (c.max_batch < 1) throw Error("max_batch: at least 1");
  if (c.streams < 1) throw Error("streams: at least 1");
  if (!(c.search_tolerance > 0)) throw Error("search_tolerance: above 0");
  return c;
}

ScenarioRules InferConfig::rules() const {
  ScenarioRules r = rules_for(scenario, model);
  if (latency_bound_ms > 0) r.latency_bound_ms = latency_bound_ms;
  return r;
}

LoopSettings InferConfig::loop(double expected_samples_per_s, double qps, bool search_trial) const {
  const ScenarioRules rule = rules_for(scenario, model);
  LoopSettings s;
  if (search_trial && scenario == Scenario::server) {
    // A trial stops once its latency is certain to pass the bound: the search needs no more.
    s.give_up_latency_ms = rules().latency_bound_ms;
    s.give_up_percentile = rules().latency_percentile;
  }
  s.scenario = scenario;
  s.samples_per_query = scenario == Scenario::offline ? 1 : rule.samples_per_query;
  // The largest batch the engine prepares: max_batch, or less where the scenario's queries are
  // smaller (single_stream 1, multi_stream 8).
  s.max_batch = batch_sizes().back();
  s.batch_timeout_s = batch_timeout_ms / 1e3;
  s.partial_waits_for_idle = dispatch_when_idle;
  s.streams = streams;
  s.target_qps = qps;
  s.min_duration_s = min_duration_s;
  s.min_queries = min_queries;
  s.seed = seed;
  if (scenario == Scenario::offline) {
    // As LoadGen: enough samples for the minimum duration at the expected rate (10% over), and at
    // least the rule's sample count; here rounded up to whole batches, so every batch is full.
    const double wanted =
        std::max(std::ceil(expected_samples_per_s * min_duration_s * 1.1), static_cast<double>(rule.samples_per_query));
    const double batches = std::ceil(wanted / max_batch);
    s.offline_samples = static_cast<std::uint64_t>(std::max(batches, 1.0)) * static_cast<std::uint64_t>(max_batch);
  }
  return s;
}

std::vector<int> InferConfig::batch_sizes() const {
  const ScenarioRules rule = rules_for(scenario, model);
  return batch_buckets(scenario, rule.samples_per_query, max_batch);
}

ScenarioResult InferConfig::judge(const RunTally& tally) const {
  const ScenarioRules rule = rules_for(scenario, model);
  ScenarioResult r = infer::judge(scenario, rules(), tally);  // the free function, not this one
  if (latency_bound_ms > 0 && latency_bound_ms != rule.latency_bound_ms) {
    r.reasons.push_back("latency bound " + fixed_number(latency_bound_ms, 2) + " ms, not the rule's " +
                        (rule.latency_bound_ms > 0 ? fixed_number(rule.latency_bound_ms, 0) + " ms" : "(none)"));
    r.valid = false;
  }
  return r;
}

bool InferConfig::generates_text() const { return model.rfind("gpt2-", 0) == 0 || model.rfind("llama", 0) == 0; }

TokenRules InferConfig::token_rules() const {
  TokenRules r = infer::token_rules(latency_class);  // the free function, not this one
  r.min_queries = std::max<std::uint64_t>(r.min_queries, 1);
  return r;
}

TokenLoopSettings InferConfig::token_loop(double expected_queries_per_s, double qps, bool search_trial) const {
  TokenLoopSettings s;
  if (search_trial && scenario == Scenario::server) {
    const TokenRules rules = token_rules();
    s.give_up_ttft_ms = rules.ttft_bound_ms;
    s.give_up_percentile = rules.percentile;
  }
  s.scenario = scenario;
  s.slots = max_batch;
  s.max_prefill_tokens = max_prefill_tokens;
  s.shapes = {QueryShape{prompt_tokens, output_tokens}};
  s.target_qps = qps;
  s.min_duration_s = min_duration_s;
  s.min_queries = min_queries;
  s.seed = seed;
  if (scenario == Scenario::offline)
    s.offline_queries = std::max<std::uint64_t>(
        static_cast<std::uint64_t>(std::ceil(expected_queries_per_s * min_duration_s * 1.1 - 1e-9)),
        std::max<std::uint64_t>(min_queries, 1));
  return s;
}

double batching_tolerance(const std::string& precision) {
  if (precision == "fp32") return 0.01;
  if (precision == "bf16") return 0.6;
  if (precision == "fp16") return 0.3;
  // Every batch size's net shares one calibration's scales, but each size runs its own plans: the
  // image's fp16 convolution (and E4M3's fp32 sums) round in each one's order, and where a value
  // lands on the other side of an 8-bit step the random net carries it through 50 layers. On an
  // H200, ResNet-50's sizes 1 and 32 with every later convolution in 8 bits: int8 0.53 of the
  // spread, E4M3 0.57 (one size on several streams: identical).
  if (precision == "int8" || precision == "fp8e4m3") return 0.8;
  throw Error("batching check: no tolerance for precision '" + precision + "'");
}

BatchingCheck batching_check(const std::vector<float>& batched, const std::vector<float>& single, int rows, int classes,
                             double tolerance) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(classes);
  if (rows < 2 || classes < 1 || batched.size() != n || single.size() != n)
    throw Error("batching check: " + std::to_string(rows) + " rows of " + std::to_string(classes) + " classes (" +
                std::to_string(batched.size()) + " and " + std::to_string(single.size()) +
                " logits); it needs 2 rows or more of both");
  auto at = [classes](int row, int k) {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(classes) + static_cast<std::size_t>(k);
  };
  BatchingCheck c;
  c.rows = rows;
  double sum_sq = 0;
  for (int k = 0; k < classes; ++k) {
    double mean = 0;
    for (int i = 0; i < rows; ++i) mean += batched[at(i, k)];
    mean /= rows;
    for (int i = 0; i < rows; ++i) sum_sq += (batched[at(i, k)] - mean) * (batched[at(i, k)] - mean);
  }
  c.spread = std::sqrt(sum_sq / static_cast<double>(n));
  const double scale = std::max(c.spread, 1e-30);
  for (int i = 0; i < rows; ++i) {
    double err_sq = 0;
    int top_b = 0, top_s = 0;
    for (int k = 0; k < classes; ++k) {
      const double d = static_cast<double>(single[at(i, k)]) - batched[at(i, k)];
      err_sq += d * d;
      if (batched[at(i, k)] > batched[at(i, top_b)]) top_b = k;
      if (single[at(i, k)] > single[at(i, top_s)]) top_s = k;
    }
    const double err = std::sqrt(err_sq / classes) / scale;
    c.max_error = std::isfinite(err) ? std::max(c.max_error, err) : INFINITY;
    if (!(err <= tolerance)) ++c.wrong;
    c.top1_agree += top_b == top_s;
  }
  c.checked = rows;
  return c;
}

}  // namespace scalebench::infer
