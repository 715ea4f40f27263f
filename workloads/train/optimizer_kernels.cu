#include <cstdint>
#include <type_traits>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// The SGD step and the loss scaler: overflow check, fused update, scale update.
namespace scalebench::train {

namespace {
template <typename T>
__global__ void nonfinite_kernel(const T* g, long long n, int* flag) {
  bool bad = false;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    bad |= !isfinite(to_float(g[i]));
  if (__syncthreads_or(bad) && threadIdx.x == 0) *flag = 1;
}

template <typename T>
__global__ void sgd_kernel(float* w, float* v, const T* grad, T* copy, long long n, float lr, float momentum, float wd,
                           float divisor, const float* loss_scale, const int* skip, const float* lr_device,
                           bool nesterov) {
  if (*skip) return;
  if (lr_device) lr = *lr_device;
  const float inv = 1.0f / (divisor * (loss_scale ? *loss_scale : 1.0f));
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float wi = w[i];
    const float g = to_float(grad[i]) * inv + wd * wi;
    const float vi = momentum * v[i] + g;
    v[i] = vi;
    const float nw = wi - lr * (nesterov ? g + momentum * vi : vi);
    w[i] = nw;
    if (copy) copy[i] = from_float<T>(nw);
  }
}

__global__ void loss_scale_kernel(float* scale, int* good, int* flag, int interval, bool dynamic) {
  if (dynamic) {
    if (*flag) {
      *scale = fmaxf(*scale * 0.5f, 1.0f);
      *good = 0;
    } else if (++*good >= interval) {
      *scale *= 2.0f;
      *good = 0;
    }
  }
  *flag = 0;
}
}  // namespace

void find_nonfinite(const void* grad, DType t, long long n, int* flag, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    nonfinite_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(grad), n, flag);
  });
  CUDA_CHECK(cudaGetLastError());
}

void sgd_step(float* master, float* velocity, const void* grad, void* compute_copy, DType t, long long n, float lr,
              float momentum, float weight_decay, float divisor, const float* loss_scale, const int* skip,
              cudaStream_t s, const float* lr_device, bool nesterov) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    sgd_kernel<<<blocks_for(n), kThreads, 0, s>>>(master, velocity, static_cast<const T*>(grad),
                                                  static_cast<T*>(compute_copy), n, lr, momentum, weight_decay, divisor,
                                                  loss_scale, skip, lr_device, nesterov);
  });
  CUDA_CHECK(cudaGetLastError());
}

void update_loss_scale(float* scale, int* good_steps, int* flag, int interval, bool dynamic, cudaStream_t s) {
  loss_scale_kernel<<<1, 1, 0, s>>>(scale, good_steps, flag, interval, dynamic);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
