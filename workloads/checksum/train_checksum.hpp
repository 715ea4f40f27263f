#pragma once
#include <cstdint>
#include <vector>

#include "common/json.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/fixed_gemm.hpp"

// A few steps of a small training run, made to give the same bits on every GPU of one model: a
// two-layer perceptron (1024 inputs, `hidden` ReLU units, 1000 classes) trained with plain SGD on a
// fixed batch of 2048 patterned inputs whose labels a fixed "teacher" matrix assigns. Every GEMM
// is a FixedGemm and every kernel reduces in a fixed order (train_steps.cuh), so a GPU whose
// weights come out different computed something wrong. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::checksum {

class TrainChecksum {
 public:
  static constexpr int kInputs = 1024, kClasses = 1000, kBatch = 2048;

  TrainChecksum(int hidden, int steps, std::uint64_t seed);

  // Trains from the seed's initial weights; returns each step's mean loss (read back once at the
  // end, so the steps run back to back).
  std::vector<double> run(cudaStream_t stream);
  // The weights' hash after run(): any flipped bit changes it.
  std::uint64_t weights_hash(cudaStream_t stream) const;

  // The FixedGemm algorithms, by GEMM.
  Json algorithms() const;

 private:
  void initialise(cudaStream_t stream);
  void step(int index, cudaStream_t stream);

  int hidden_, steps_;
  std::uint64_t seed_;
  gpu::DeviceBuffer x_, teacher_, logits_teacher_, labels_;
  gpu::DeviceBuffer w1_, w2_, master1_, master2_;
  gpu::DeviceBuffer h_, z_, dz_, dh_, dw1_, dw2_, loss_;
  gpu::FixedGemm teach_, forward1_, forward2_, grad_w2_, grad_h_, grad_w1_;
};

}  // namespace scalebench::checksum
