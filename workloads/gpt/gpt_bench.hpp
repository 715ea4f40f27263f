#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/gpt/gpt_config.hpp"
#include "workloads/gpt/gpt_model.hpp"

// Measuring and checking the GPT training step on this process's current GPU.
namespace scalebench::gpt {

struct StepTiming {
  std::vector<double> step_seconds;                          // one entry per timed sample (its mean step)
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;  // one extra step, split by events
  double exposed_communication_ms = 0;   // of that step: dp communication not hidden by the backward pass
  double loss_first = 0, loss_last = 0;  // the first step's loss, the last one's
  std::size_t peak_bytes = 0;            // device memory in use at the end
  // pp > 1 (the split into forward, backward and optimizer is then not measured, those stay 0): this stage's
  // wait for the other stages in one more step, and that step's time (GptModel::pipeline_bubble).
  GptModel::PipelineBubble bubble;
};

// `warmup` steps, then `samples` samples of `steps` steps each timed by CUDA events, then one step
// split into forward, backward, optimizer and exposed communication (the optimizer's wait for the
// last gradient bucket and ZeRO-1's all-gather; tensor parallelism's sums are inside forward and
// backward). Synthetic tokens, one fixed batch. With `graph` the step is captured after the first
// warm-up step and every later step, warm-up and timed, is its replay (the split step is not).
// On a pipeline stage the extra step measures the bubble instead of the split (every stage of the
// pipeline calls this together); the loss is the last stage's (0 on the others).
StepTiming time_steps(GptModel& model, cudaStream_t s, int grad_accum, const Hyper& h, int warmup, int samples,
                      int steps, bool graph = false);

// The gradient check: the tiny model's bf16 gradients (one micro-batch, GPU) against central finite
// differences of the fp64 host reference's loss at the same (bf16-rounded) weights, sampled entries
// of every tensor. ok when every tensor's relative error (norm of the difference / norm of the
// reference over its samples) is under `tolerance` and the losses agree to 1%.
struct GradCheck {
  double loss_gpu = 0, loss_reference = 0;
  double worst_relative_error = 0;
  std::string worst_tensor;
  double overall_relative_error = 0;
  int sampled = 0;
  bool ok = false;
  Json per_tensor = Json::object();
  Json to_json() const;
};
GradCheck gradient_check(const std::string& model, int B, int T, int samples_per_tensor, double tolerance,
                         unsigned long long seed, Attention attention = Attention::kNaive);

}  // namespace scalebench::gpt
