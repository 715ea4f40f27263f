// The initialisation the training step and the decoder share (gpt_kernels.cuh: init_tensor).
#include <cmath>

#include "workloads/gpt/gpt_config.hpp"
#include "workloads/gpt/gpt_kernels.cuh"

namespace scalebench::gpt {

void init_tensor(float* master, bf16* param, const Tensor& t, std::size_t index, int layers, unsigned long long seed,
                 cudaStream_t s) {
  switch (t.kind) {
    case TensorKind::kNormWeight:
      init_constant(master, param, t.numel(), 1.f, s);
      break;
    case TensorKind::kNormBias:
    case TensorKind::kQkvBias:
    case TensorKind::kAttnOutBias:
    case TensorKind::kMlpUpBias:
    case TensorKind::kMlpDownBias:
      init_constant(master, param, t.numel(), 0.f, s);
      break;
    case TensorKind::kAttnOut:
    case TensorKind::kMlpDown:
      init_normal(master, param, t.numel(), 0.02f / std::sqrt(2.f * layers), seed + index * 0x9e3779b9ull, s);
      break;
    default:
      init_normal(master, param, t.numel(), 0.02f, seed + index * 0x9e3779b9ull, s);
      break;
  }
}

}  // namespace scalebench::gpt
