// The GPT workload's parameter initialisation, bf16 copies of the fp32 masters and the synthetic token stream.
#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

__global__ void init_normal_kernel(float* master, bf16* param, long long n, float std, unsigned long long seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned long long h = mix(seed ^ mix(static_cast<unsigned long long>(i)));
    const float u1 = (static_cast<float>(h >> 40) + 1.f) * (1.f / 16777217.f);  // (0, 1]
    const float u2 = static_cast<float>((h >> 16) & 0xffffff) * (1.f / 16777216.f);
    const float z = sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
    master[i] = std * z;
    param[i] = __float2bfloat16(master[i]);
  }
}

__global__ void init_constant_kernel(float* master, bf16* param, long long n, float value) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    master[i] = value;
    param[i] = __float2bfloat16(value);
  }
}

__global__ void to_bf16_kernel(bf16* out, const float* in, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16(in[i]);
}

__global__ void random_tokens_kernel(int* inputs, int* targets, int B, int T, int vocab, unsigned long long seed,
                                     long long first) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(B) * T) return;
  const long long t = i % T, row = i - t + first;
  auto token = [&](long long at) {
    return static_cast<int>(mix(seed ^ mix(static_cast<unsigned long long>(at))) %
                            static_cast<unsigned long long>(vocab));
  };
  inputs[i] = token(row + t);
  targets[i] = token(row + (t + 1) % T);
}

// One thread per pair of channels.

}  // namespace

void init_normal(float* master, bf16* param, long long n, float std, unsigned long long seed, cudaStream_t s) {
  init_normal_kernel<<<stride_grid(n, 256), 256, 0, s>>>(master, param, n, std, seed);
  CUDA_CHECK(cudaGetLastError());
}

void init_constant(float* master, bf16* param, long long n, float value, cudaStream_t s) {
  init_constant_kernel<<<stride_grid(n, 256), 256, 0, s>>>(master, param, n, value);
  CUDA_CHECK(cudaGetLastError());
}

void to_bf16(bf16* out, const float* in, long long n, cudaStream_t s) {
  to_bf16_kernel<<<stride_grid(n, 256), 256, 0, s>>>(out, in, n);
  CUDA_CHECK(cudaGetLastError());
}

void random_tokens(int* inputs, int* targets, int B, int T, int vocab, unsigned long long seed, long long first_row,
                   cudaStream_t s) {
  random_tokens_kernel<<<grid_for(static_cast<long long>(B) * T, 256), 256, 0, s>>>(inputs, targets, B, T, vocab, seed,
                                                                                    first_row * T);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpt
