#include <cstdint>
#include <type_traits>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// Softmax cross-entropy: the loss and its gradient.
namespace scalebench::train {

namespace {
// One block per image: max, sum of exponentials, loss, gradient.
template <typename T>
__global__ void softmax_xent_kernel(const T* logits, const int* labels, T* dlogits, int n, int k,
                                    const float* loss_scale, double* loss, float smoothing, float weight) {
  __shared__ float red[kThreads];
  const int img = blockIdx.x;
  const T* row = logits + static_cast<long long>(img) * k;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < k; j += blockDim.x) m = fmaxf(m, to_float(row[j]));
  red[threadIdx.x] = m;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + w]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0;
  for (int j = threadIdx.x; j < k; j += blockDim.x) sum += expf(to_float(row[j]) - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  sum = red[0];
  __syncthreads();
  // With smoothing e the target is (1 - e) on the label and e / k on every class: the loss adds
  // e times the mean over classes of -log p.
  float logit_sum = 0;
  if (smoothing > 0)
    for (int j = threadIdx.x; j < k; j += blockDim.x) logit_sum += to_float(row[j]);
  red[threadIdx.x] = logit_sum;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  const int label = labels[img];
  if (threadIdx.x == 0) {
    const float lse = logf(sum) + m;
    const double l = static_cast<double>((1.0f - smoothing) * (lse - to_float(row[label])) +
                                         smoothing * (lse - red[0] / static_cast<float>(k)));
    atomicAdd(loss, weight * l / n);
  }
  if (!dlogits) return;
  const float scale = (loss_scale ? *loss_scale : 1.0f) * weight / n;
  const float off = smoothing / static_cast<float>(k);
  T* drow = dlogits + static_cast<long long>(img) * k;
  for (int j = threadIdx.x; j < k; j += blockDim.x) {
    const float p = expf(to_float(row[j]) - m) / sum;
    drow[j] = from_float<T>((p - off - (j == label ? 1.0f - smoothing : 0.0f)) * scale);
  }
}
}  // namespace

void softmax_cross_entropy(const void* logits, const int* labels, void* dlogits, DType t, int n, int k,
                           const float* loss_scale, double* loss, cudaStream_t s, float smoothing, float weight) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    softmax_xent_kernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(
        static_cast<const T*>(logits), labels, static_cast<T*>(dlogits), n, k, loss_scale, loss, smoothing, weight);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
