#pragma once
// The infer workload's parameters, read once, and what follows from them: MLPerf's rules judged
// against, the run loop's settings, the batch sizes the engine prepares, the check's tolerance.
// Pure: no CUDA.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/infer/loadgen_loop.hpp"
#include "workloads/infer/scenario.hpp"
#include "workloads/infer/scenario_verdict.hpp"
#include "workloads/infer/token_loop.hpp"
#include "workloads/infer/token_verdict.hpp"

namespace scalebench::infer {

struct InferConfig {
  std::string model;
  int image = 0;
  std::string precision = "fp16";  // fp16, bf16 or fp32
  Scenario scenario = Scenario::offline;
  int max_batch = 1;
  double batch_timeout_ms = 0;
  bool dispatch_when_idle = true;  // server: partial batches wait for an idle stream
  int streams = 1;
  double target_qps = 0;        // server; 0: search for the highest valid rate
  double latency_bound_ms = 0;  // 0: the rule's
  double min_duration_s = 0;
  std::uint64_t min_queries = 0;  // the rule's unless set
  std::uint64_t seed = 1;
  int search_trials = 1;
  double search_tolerance = 0.05;
  bool search = true;  // cuDNN's algorithm search
  std::string conv_api = "best";
  int fp16_convolutions = -1;  // int8 and fp8e4m3: the first convolutions in fp16; -1: by timing
  int warmup = 0;
  bool check = true;
  // Text generation (a GPT-2 model).
  int prompt_tokens = 128, output_tokens = 256, max_prefill_tokens = 2048;
  std::string latency_class = "server";
  std::string checkpoint;  // the weights (a gpt checkpoint); empty: random

  // From the parameters over their defaults (with_defaults("infer", ...)); errors name the field.
  static InferConfig from_params(const Json& params);

  // MLPerf's rules for the scenario and model (what the verdict judges by), with the latency
  // bound given, if one was.
  ScenarioRules rules() const;
  // The run loop's settings: the run's own minimums (shorter than the rules' if asked), Offline's
  // sample count from the throughput expected (samples/s), rounded up to whole batches, batches
  // up to the largest of batch_sizes(). A Server search's trial (`search_trial`) stops as soon as
  // its latency is certain to pass the bound.
  LoopSettings loop(double expected_samples_per_s, double qps, bool search_trial = false) const;
  // The batch sizes the engine prepares (batch_buckets).
  std::vector<int> batch_sizes() const;
  // The verdict: MLPerf's rules, and a bound other than the rule's makes a run INVALID too.
  ScenarioResult judge(const RunTally& tally) const;

  // Whether the model generates text (the gpt workload's models, named gpt2-... and llama...).
  bool generates_text() const;
  // Text generation: MLPerf's LLM rules for latency_class, and the token loop's settings: the
  // run's own minimums, Offline's query count from the queries/s expected (enough for
  // min_duration_s, 10% over, and at least min_queries).
  TokenRules token_rules() const;
  // A Server search's trial (`search_trial`) gives up once its p99 TTFT is certain to pass the bound.
  TokenLoopSettings token_loop(double expected_queries_per_s, double qps, bool search_trial = false) const;
};

// How far a sample's logits run alone may be from the same sample's run in a batch: the rms over
// its classes of the difference, as a share of the spread of the batched logits between samples
// (batching_check). Different batch sizes run different cuDNN algorithms, which round differently,
// and a random-weight net amplifies rounding from layer to layer, the more the fewer mantissa bits
// the precision has; a row given another sample's answer is off by about 1.4 spreads (the
// difference of two samples' deviations), above every tolerance here.
double batching_tolerance(const std::string& precision);

struct BatchingCheck {
  long long checked = 0, wrong = 0;  // rows (samples)
  double spread = 0;                 // rms over the rows and classes of a logit minus its class's mean over the rows
  double max_error = 0;              // the largest row's rms |single - batched| / spread
  int top1_agree = 0;                // rows whose largest logit is the same class both ways
  int rows = 0;
};

// `batched` and `single`: `rows` x `classes` logits of the same samples, run in one batch and one
// by one. A row is wrong when its error is over `tolerance`. The spread is what depends on the
// sample, so that a row given another sample's answer is wrong even where a random-weight net's
// logits differ little from sample to sample. Needs 2 rows or more.
BatchingCheck batching_check(const std::vector<float>& batched, const std::vector<float>& single, int rows, int classes,
                             double tolerance);

}  // namespace scalebench::infer
