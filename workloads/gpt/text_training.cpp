#include "workloads/gpt/text_training.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/gpu/cuda_handles.hpp"

namespace scalebench::gpt {

Json TextTraining::curve_json() const {
  Json out = Json::array();
  for (const CurvePoint& p : curve) {
    Json j{{"step", p.step}, {"train_loss", p.train_loss}};
    if (p.eval_loss) j["eval_loss"] = *p.eval_loss;
    out.push_back(std::move(j));
  }
  return out;
}

double evaluate(GptModel& model, const TextBatches& data, const RankMean& mean) {
  std::vector<int> inputs, targets;
  double sum = 0;
  for (int b = 0; b < data.eval_batches(); ++b) {
    data.eval_batch(b, inputs, targets);
    model.set_tokens(inputs, targets);
    model.forward(0, 1);  // the loss of one micro-batch; no backward, no update
    sum += model.loss();
  }
  return mean(sum / data.eval_batches());
}

float learning_rate(const TextSchedule& plan, int step) {
  if (plan.lr_warmup <= 0 || step >= plan.lr_warmup) return plan.hyper.lr;
  return plan.hyper.lr * static_cast<float>(step) / static_cast<float>(plan.lr_warmup);
}

TextTraining train_on_text(GptModel& model, cudaStream_t s, TextBatches& data, const TextSchedule& plan,
                           const RankMean& mean, const OnEvaluation& progress) {
  const int train_steps = plan.train_steps, eval_every = plan.eval_every, grad_accum = plan.grad_accum;
  TextTraining out;
  out.eval_loss_initial = evaluate(model, data, mean);
  if (progress) progress(CurvePoint{0, std::nan(""), out.eval_loss_initial});
  const int log_every = std::max(1, train_steps / 100);
  std::vector<int> inputs, targets;
  gpu::Event start, stop;
  double since_point = 0, stretch = 0;
  int steps_in_point = 0, steps_in_stretch = 0;
  long long micro = 0;
  for (int step = 1; step <= train_steps; ++step) {
    CUDA_CHECK(cudaEventRecord(start.get(), s));
    for (int i = 0; i < grad_accum; ++i) {
      data.train_batch(micro++, inputs, targets);
      model.set_tokens(inputs, targets);  // waits for the previous micro-batch: one token buffer
      model.forward(i, grad_accum);
      model.backward(i);
    }
    Hyper h = plan.hyper;
    h.lr = learning_rate(plan, step);
    model.optimizer_step(h);
    CUDA_CHECK(cudaEventRecord(stop.get(), s));
    const double loss = model.loss();  // synchronises
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    stretch += ms * 1e-3;
    ++steps_in_stretch;
    since_point += loss;
    ++steps_in_point;
    out.train_loss = loss;
    const bool last = step == train_steps;
    const bool eval = last || (eval_every > 0 && step % eval_every == 0);
    if (step == 1 || step % log_every == 0 || eval) {
      CurvePoint p{step, mean(since_point / steps_in_point), std::nullopt};
      since_point = 0;
      steps_in_point = 0;
      if (eval) {
        p.eval_loss = evaluate(model, data, mean);
        out.eval_loss = *p.eval_loss;
        out.step_seconds.push_back(stretch / steps_in_stretch);
        out.train_seconds += stretch;
        stretch = 0;
        steps_in_stretch = 0;
        if (progress) progress(p);
      }
      out.curve.push_back(p);
    }
  }
  out.train_loss = mean(out.train_loss);
  return out;
}

}  // namespace scalebench::gpt
