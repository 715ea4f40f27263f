#include <cuda_bf16.h>

#include "workloads/checksum/train_steps.cuh"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/reduce.cuh"

namespace scalebench::checksum {

namespace {
constexpr int kThreads = 256;
using bf16 = __nv_bfloat16;

__global__ void scale_kernel(bf16* w, float* master, std::size_t n, float scale) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  w[i] = __float2bfloat16_rn(__bfloat162float(w[i]) * scale);
  master[i] = __bfloat162float(w[i]);
}

__global__ void argmax_kernel(const bf16* z, int rows, int cols, int* labels) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const bf16* col = z + static_cast<long long>(j) * rows;
  int best = 0;
  for (int r = 1; r < rows; ++r)
    if (__bfloat162float(col[r]) > __bfloat162float(col[best])) best = r;
  labels[j] = best;
}

__global__ void relu_kernel(bf16* h, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n && __bfloat162float(h[i]) < 0.f) h[i] = __float2bfloat16_rn(0.f);
}

// One block per sample (column); the block's reductions have a fixed order.
__global__ void xent_kernel(const bf16* z, const int* labels, int classes, int batch, bf16* dz, float* loss) {
  const long long base = static_cast<long long>(blockIdx.x) * classes;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) m = fmaxf(m, __bfloat162float(z[base + c]));
  m = gpu::block_max(m);
  float s = 0.f;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) s += __expf(__bfloat162float(z[base + c]) - m);
  s = gpu::block_sum(s);
  const int label = labels[blockIdx.x];
  for (int c = threadIdx.x; c < classes; c += blockDim.x) {
    const float p = __expf(__bfloat162float(z[base + c]) - m) / s;
    dz[base + c] = __float2bfloat16_rn((p - (c == label ? 1.f : 0.f)) / batch);
  }
  if (threadIdx.x == 0) loss[blockIdx.x] = __logf(s) + m - __bfloat162float(z[base + label]);
}

__global__ void relu_backward_kernel(bf16* dh, const bf16* h, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n && !(__bfloat162float(h[i]) > 0.f)) dh[i] = __float2bfloat16_rn(0.f);
}

__global__ void sgd_kernel(float* master, bf16* w, const bf16* dw, std::size_t n, float lr) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  master[i] -= lr * __bfloat162float(dw[i]);
  w[i] = __float2bfloat16_rn(master[i]);
}

unsigned blocks(std::size_t n) { return gpu::grid_for(static_cast<long long>(n), kThreads); }
}  // namespace

void scale_weights(void* w, float* master, std::size_t n, float scale, cudaStream_t stream) {
  scale_kernel<<<blocks(n), kThreads, 0, stream>>>(static_cast<bf16*>(w), master, n, scale);
  CUDA_CHECK(cudaGetLastError());
}

void argmax_labels(const void* z, int rows, int cols, int* labels, cudaStream_t stream) {
  argmax_kernel<<<blocks(cols), kThreads, 0, stream>>>(static_cast<const bf16*>(z), rows, cols, labels);
  CUDA_CHECK(cudaGetLastError());
}

void relu(void* h, std::size_t n, cudaStream_t stream) {
  relu_kernel<<<blocks(n), kThreads, 0, stream>>>(static_cast<bf16*>(h), n);
  CUDA_CHECK(cudaGetLastError());
}

void softmax_cross_entropy_grad(const void* z, const int* labels, int classes, int batch, void* dz, float* loss,
                                cudaStream_t stream) {
  xent_kernel<<<batch, kThreads, 0, stream>>>(static_cast<const bf16*>(z), labels, classes, batch,
                                              static_cast<bf16*>(dz), loss);
  CUDA_CHECK(cudaGetLastError());
}

void relu_backward(void* dh, const void* h, std::size_t n, cudaStream_t stream) {
  relu_backward_kernel<<<blocks(n), kThreads, 0, stream>>>(static_cast<bf16*>(dh), static_cast<const bf16*>(h), n);
  CUDA_CHECK(cudaGetLastError());
}

void sgd_step(float* master, void* w, const void* dw, std::size_t n, float lr, cudaStream_t stream) {
  sgd_kernel<<<blocks(n), kThreads, 0, stream>>>(master, static_cast<bf16*>(w), static_cast<const bf16*>(dw), n, lr);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::checksum
