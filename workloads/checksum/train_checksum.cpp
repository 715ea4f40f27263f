#include "workloads/checksum/train_checksum.hpp"

#include <cmath>

#include "workloads/checksum/train_steps.cuh"
#include "workloads/gpu/bf16_pattern.cuh"
#include "workloads/gpu/cuda_check.hpp"

namespace scalebench::checksum {

namespace {
constexpr std::size_t kBf16 = 2;
constexpr float kLearningRate = 0.5f;

std::size_t count(long long rows, long long cols) { return static_cast<std::size_t>(rows * cols); }
}  // namespace

// Column-major throughout: x is inputs x batch, w1 hidden x inputs, w2 classes x hidden.
TrainChecksum::TrainChecksum(int hidden, int steps, std::uint64_t seed)
    : hidden_(hidden),
      steps_(steps),
      seed_(seed),
      x_(count(kInputs, kBatch) * kBf16),
      teacher_(count(kClasses, kInputs) * kBf16),
      logits_teacher_(count(kClasses, kBatch) * kBf16),
      labels_(sizeof(int) * kBatch),
      w1_(count(hidden, kInputs) * kBf16),
      w2_(count(kClasses, hidden) * kBf16),
      master1_(count(hidden, kInputs) * sizeof(float)),
      master2_(count(kClasses, hidden) * sizeof(float)),
      h_(count(hidden, kBatch) * kBf16),
      z_(count(kClasses, kBatch) * kBf16),
      dz_(count(kClasses, kBatch) * kBf16),
      dh_(count(hidden, kBatch) * kBf16),
      dw1_(count(hidden, kInputs) * kBf16),
      dw2_(count(kClasses, hidden) * kBf16),
      loss_(sizeof(float) * kBatch * steps),
      teach_(kClasses, kBatch, kInputs, false, false),
      forward1_(hidden, kBatch, kInputs, false, false),
      forward2_(kClasses, kBatch, hidden, false, false),
      grad_w2_(kClasses, hidden, kBatch, false, true),
      grad_h_(hidden, kBatch, kClasses, true, false),
      grad_w1_(hidden, kInputs, kBatch, false, true) {}

void TrainChecksum::initialise(cudaStream_t stream) {
  gpu::fill_bf16_pattern(x_.get(), count(kInputs, kBatch), seed_, stream);
  gpu::fill_bf16_pattern(teacher_.get(), count(kClasses, kInputs), seed_ + 1, stream);
  teach_.run(teacher_.get(), x_.get(), logits_teacher_.get(), stream);
  argmax_labels(logits_teacher_.get(), kClasses, kBatch, reinterpret_cast<int*>(labels_.get()), stream);
  // Weights uniform in +-1/sqrt(fan-in), so that the activations keep their scale.
  gpu::fill_bf16_pattern(w1_.get(), count(hidden_, kInputs), seed_ + 2, stream);
  scale_weights(w1_.get(), reinterpret_cast<float*>(master1_.get()), count(hidden_, kInputs),
                1.f / std::sqrt(1.f * kInputs), stream);
  gpu::fill_bf16_pattern(w2_.get(), count(kClasses, hidden_), seed_ + 3, stream);
  scale_weights(w2_.get(), reinterpret_cast<float*>(master2_.get()), count(kClasses, hidden_),
                1.f / std::sqrt(1.f * hidden_), stream);
}

void TrainChecksum::step(int index, cudaStream_t stream) {
  forward1_.run(w1_.get(), x_.get(), h_.get(), stream);
  relu(h_.get(), count(hidden_, kBatch), stream);
  forward2_.run(w2_.get(), h_.get(), z_.get(), stream);
  softmax_cross_entropy_grad(z_.get(), reinterpret_cast<const int*>(labels_.get()), kClasses, kBatch, dz_.get(),
                             reinterpret_cast<float*>(loss_.get()) + static_cast<std::size_t>(index) * kBatch, stream);
  grad_w2_.run(dz_.get(), h_.get(), dw2_.get(), stream);
  grad_h_.run(w2_.get(), dz_.get(), dh_.get(), stream);
  relu_backward(dh_.get(), h_.get(), count(hidden_, kBatch), stream);
  grad_w1_.run(dh_.get(), x_.get(), dw1_.get(), stream);
  sgd_step(reinterpret_cast<float*>(master2_.get()), w2_.get(), dw2_.get(), count(kClasses, hidden_), kLearningRate,
           stream);
  sgd_step(reinterpret_cast<float*>(master1_.get()), w1_.get(), dw1_.get(), count(hidden_, kInputs), kLearningRate,
           stream);
}

std::vector<double> TrainChecksum::run(cudaStream_t stream) {
  initialise(stream);
  for (int s = 0; s < steps_; ++s) step(s, stream);
  std::vector<float> loss(static_cast<std::size_t>(kBatch) * steps_);
  CUDA_CHECK(cudaMemcpyAsync(loss.data(), loss_.get(), loss.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> mean(static_cast<std::size_t>(steps_), 0.0);
  for (int s = 0; s < steps_; ++s) {
    for (int j = 0; j < kBatch; ++j) mean[s] += loss[static_cast<std::size_t>(s) * kBatch + j];
    mean[s] /= kBatch;
  }
  return mean;
}

std::uint64_t TrainChecksum::weights_hash(cudaStream_t stream) const {
  const std::uint64_t a = gpu::hash_bf16(w1_.get(), count(hidden_, kInputs), stream);
  const std::uint64_t b = gpu::hash_bf16(w2_.get(), count(kClasses, hidden_), stream);
  return a + 0x9e3779b97f4a7c15ull * b;  // order matters: swapping the layers changes it
}

Json TrainChecksum::algorithms() const {
  return Json{{"teacher", teach_.algorithm()},     {"forward1", forward1_.algorithm()},
              {"forward2", forward2_.algorithm()}, {"grad_w2", grad_w2_.algorithm()},
              {"grad_h", grad_h_.algorithm()},     {"grad_w1", grad_w1_.algorithm()}};
}

}  // namespace scalebench::checksum
