#include "workloads/gpt/gpt_bench.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "workloads/gpt/gpt_reference.hpp"
#include "workloads/gpu/cuda_handles.hpp"

namespace scalebench::gpt {

namespace {
// One more step with the pipeline's timing on: its bubble and exposed communication.
void time_pipeline_step(GptModel& model, int grad_accum, const Hyper& h, StepTiming& out) {
  model.time_pipeline(true);
  model.step(grad_accum, h);
  model.time_pipeline(false);
  out.bubble = model.pipeline_bubble();
  out.exposed_communication_ms = model.exposed_communication_ms();
}

// One split step: forward and backward of every micro-batch, then the optimizer, each timed.
void time_split_step(GptModel& model, cudaStream_t s, int grad_accum, const Hyper& h, StepTiming& out) {
  gpu::Event start, fwd, bwd, stop;
  float f = 0, b = 0, o = 0;
  CUDA_CHECK(cudaEventRecord(start.get(), s));
  for (int i = 0; i < grad_accum; ++i) {
    CUDA_CHECK(cudaEventRecord(fwd.get(), s));
    model.forward(i, grad_accum);
    CUDA_CHECK(cudaEventRecord(bwd.get(), s));
    model.backward(i);
    CUDA_CHECK(cudaEventRecord(stop.get(), s));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float x = 0, y = 0;
    CUDA_CHECK(cudaEventElapsedTime(&x, fwd.get(), bwd.get()));
    CUDA_CHECK(cudaEventElapsedTime(&y, bwd.get(), stop.get()));
    f += x;
    b += y;
  }
  CUDA_CHECK(cudaEventRecord(fwd.get(), s));
  model.optimizer_step(h);
  CUDA_CHECK(cudaEventRecord(stop.get(), s));
  CUDA_CHECK(cudaEventSynchronize(stop.get()));
  CUDA_CHECK(cudaEventElapsedTime(&o, fwd.get(), stop.get()));
  out.forward_ms = f;
  out.backward_ms = b;
  out.exposed_communication_ms = model.exposed_communication_ms();
  out.optimizer_ms = std::max(0.0, o - out.exposed_communication_ms);
}
}  // namespace

StepTiming time_steps(GptModel& model, cudaStream_t s, int grad_accum, const Hyper& h, int warmup, int samples,
                      int steps, bool graph) {
  StepTiming out;
  model.step(grad_accum, h);
  auto loss = [&] { return model.holds_loss() ? static_cast<double>(model.loss()) : 0.0; };
  out.loss_first = loss();
  if (graph) model.capture_step(grad_accum, h);
  auto one_step = [&] { graph ? model.replay_step() : model.step(grad_accum, h); };
  // A graph's first launch uploads it: at least one replay before the timing.
  const int more = graph ? std::max(warmup - 1, 1) : warmup - 1;
  for (int i = 0; i < more; ++i) one_step();
  gpu::Event start, stop;
  for (int r = 0; r < samples; ++r) {
    CUDA_CHECK(cudaEventRecord(start.get(), s));
    for (int i = 0; i < steps; ++i) one_step();
    CUDA_CHECK(cudaEventRecord(stop.get(), s));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    out.step_seconds.push_back(ms * 1e-3 / steps);
  }
  // A pipeline's step cannot be split into passes (its stages interleave them): its bubble instead.
  if (model.pipeline_stages() > 1)
    time_pipeline_step(model, grad_accum, h, out);
  else
    time_split_step(model, s, grad_accum, h, out);
  out.loss_last = loss();
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  out.peak_bytes = total_b - free_b;
  return out;
}

Json GradCheck::to_json() const {
  return Json{{"loss_gpu", loss_gpu},
              {"loss_reference", loss_reference},
              {"worst_relative_error", worst_relative_error},
              {"worst_tensor", worst_tensor},
              {"overall_relative_error", overall_relative_error},
              {"sampled", sampled},
              {"ok", ok},
              {"per_tensor", per_tensor}};
}

GradCheck gradient_check(const std::string& model_name, int B, int T, int samples_per_tensor, double tolerance,
                         unsigned long long seed, Attention attention) {
  const ModelShape m = model_shape(model_name);
  gpu::Stream stream;
  GptModel model(m, B, T, seed, stream.get(), attention);
  std::mt19937_64 rng(seed);
  std::vector<int> tokens(static_cast<std::size_t>(B) * T), targets(tokens.size());
  for (int& t : tokens) t = static_cast<int>(rng() % static_cast<unsigned long long>(m.vocab));
  for (int& t : targets) t = static_cast<int>(rng() % static_cast<unsigned long long>(m.vocab));
  model.set_tokens(tokens, targets);
  model.forward(0, 1);
  model.backward(0);
  GradCheck out;
  out.loss_gpu = model.loss();
  const std::vector<float> grads = model.grads();
  const std::vector<float> values = model.params();  // the bf16 weights the step computed with
  std::vector<double> p(values.begin(), values.end());
  out.loss_reference = reference_loss(m, B, T, p, tokens, targets);
  double all_diff = 0, all_ref = 0;
  for (const Tensor& t : model.layout()) {
    double diff = 0, ref = 0;
    std::uniform_int_distribution<long long> pick(0, t.numel() - 1);
    for (int i = 0; i < samples_per_tensor; ++i) {
      // Embedding rows of the batch's tokens (the rest have only the head's gradient): half the samples.
      long long at = pick(rng);
      if (t.kind == TensorKind::kEmbedding && i % 2 == 0)
        at = static_cast<long long>(tokens[static_cast<std::size_t>(i) % tokens.size()]) * t.cols + at % t.cols;
      const std::size_t j = static_cast<std::size_t>(t.offset + at);
      const double keep = p[j], step = 1e-3;
      p[j] = keep + step;
      const double up = reference_loss(m, B, T, p, tokens, targets);
      p[j] = keep - step;
      const double down = reference_loss(m, B, T, p, tokens, targets);
      p[j] = keep;
      const double fd = (up - down) / (2 * step);
      diff += (grads[j] - fd) * (grads[j] - fd);
      ref += fd * fd;
      ++out.sampled;
    }
    all_diff += diff;
    all_ref += ref;
    const double rel = ref > 0 ? std::sqrt(diff / ref) : std::sqrt(diff);
    out.per_tensor[t.name] = rel;
    if (rel > out.worst_relative_error) {
      out.worst_relative_error = rel;
      out.worst_tensor = t.name;
    }
  }
  out.overall_relative_error = std::sqrt(all_diff / all_ref);
  out.ok = out.worst_relative_error < tolerance &&
           std::abs(out.loss_gpu - out.loss_reference) < 0.01 * std::abs(out.loss_reference);
  return out;
}

}  // namespace scalebench::gpt
