#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <vector>

#include "common/json.hpp"
#include "workloads/gpt/gpt_model.hpp"
#include "workloads/gpt/text_batches.hpp"

// Training the GPT step on real text from its initial weights, with the held-out loss evaluated
// every N steps: the loss curve and the tokens/s of the training steps alone.
namespace scalebench::gpt {

struct CurvePoint {
  int step = 0;
  double train_loss = 0;            // the mean of the steps' losses since the previous point
  std::optional<double> eval_loss;  // the held-out loss after this step, when evaluated
};

struct TextTraining {
  double eval_loss_initial = 0;      // the held-out loss of the initial weights (about ln 256)
  std::vector<CurvePoint> curve;     // step 1, then every max(1, steps / 100) steps, every evaluation, the last step
  double train_loss = 0;             // of the last step
  double eval_loss = 0;              // of the last evaluation (always after the last step)
  std::vector<double> step_seconds;  // the mean step of each stretch between evaluations (CUDA events)
  double train_seconds = 0;          // GPU time of all training steps, without evaluations
  Json curve_json() const;           // [{step, train_loss, eval_loss?}]
};

// The mean of a value over the ranks (an MPI all-reduce in the workload; the value itself on one
// rank). Every rank calls it at the same moments.
using RankMean = std::function<double(double)>;

// The mean loss over this rank's held-out micro-batches (forward only, no update), then over the ranks.
double evaluate(GptModel& model, const TextBatches& data, const RankMean& mean);

// How long to train and evaluate.
struct TextSchedule {
  int grad_accum = 1;  // micro-batches per optimizer step
  int train_steps = 200;
  int eval_every = 50;  // 0: only before the first step and after the last
  int lr_warmup = 0;    // steps over which the learning rate rises linearly to Hyper::lr
  Hyper hyper;
};
// The learning rate of step `step` (from 1): h.lr x min(1, step / lr_warmup).
float learning_rate(const TextSchedule& plan, int step);

// Called with each evaluation as it is made (step 0: the initial weights, no train loss), to
// show progress; may be empty.
using OnEvaluation = std::function<void(const CurvePoint&)>;

// `train_steps` optimizer steps of `grad_accum` micro-batches each, this rank's windows in order;
// evaluation before the first step, every `eval_every` steps (0: none between) and after the last.
TextTraining train_on_text(GptModel& model, cudaStream_t s, TextBatches& data, const TextSchedule& plan,
                           const RankMean& mean, const OnEvaluation& progress = {});

}  // namespace scalebench::gpt
