#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "workloads/collective/pattern_kernels.cuh"
#include "workloads/gpu/cuda_check.hpp"

namespace scalebench::collective {

namespace {
constexpr int kThreads = 256;

__device__ void store(DType t, void* base, std::size_t i, double v) {
  switch (t) {
    case DType::kF32:
      static_cast<float*>(base)[i] = static_cast<float>(v);
      break;
    case DType::kF64:
      static_cast<double*>(base)[i] = v;
      break;
    case DType::kF16:
      static_cast<__half*>(base)[i] = __float2half_rn(static_cast<float>(v));
      break;
    case DType::kBf16:
      static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(static_cast<float>(v));
      break;
    case DType::kI32:
      static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(v);
      break;
    case DType::kI64:
      static_cast<std::int64_t*>(base)[i] = static_cast<std::int64_t>(v);
      break;
    case DType::kI8:
      static_cast<std::int8_t*>(base)[i] = static_cast<std::int8_t>(v);
      break;
    case DType::kU8:
      static_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(v);
      break;
    default:  // fp8: not a collective's type (parse_dtype refuses it)
      break;
  }
}

__device__ double load(DType t, const void* base, std::size_t i) {
  switch (t) {
    case DType::kF32:
      return static_cast<const float*>(base)[i];
    case DType::kF64:
      return static_cast<const double*>(base)[i];
    case DType::kF16:
      return __half2float(static_cast<const __half*>(base)[i]);
    case DType::kBf16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case DType::kI32:
      return static_cast<const std::int32_t*>(base)[i];
    case DType::kI64:
      return static_cast<double>(static_cast<const std::int64_t*>(base)[i]);
    case DType::kI8:
      return static_cast<const std::int8_t*>(base)[i];
    case DType::kU8:
      return static_cast<const std::uint8_t*>(base)[i];
    default:  // fp8: not a collective's type (parse_dtype refuses it)
      return 0;
  }
}

__global__ void fill_kernel(formula::CheckShape s, void* buf, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    store(s.dtype, buf, i, formula::input_value(s.dtype, s.redop, s.nranks, s.rank, i));
}

// Every thread of a block runs the same number of rounds, so the block can count its wrong
// elements with __syncthreads_count and add them once.
__global__ void count_kernel(formula::CheckShape s, const void* out, std::size_t count, unsigned long long* counter) {
  const double tol = formula::relative_tolerance(s.dtype, s.redop);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x; base < count; base += stride) {
    const std::size_t j = base + threadIdx.x;
    double want = 0;
    const bool bad =
        j < count && formula::expected_value(s, j, &want) && !formula::matches(load(s.dtype, out, j), want, tol);
    wrong += static_cast<unsigned long long>(__syncthreads_count(bad));
  }
  if (threadIdx.x == 0 && wrong > 0) atomicAdd(counter, wrong);
}

unsigned blocks_for(std::size_t count) {
  const std::size_t want = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(want < 4096 ? (want > 0 ? want : 1) : 4096);
}
}  // namespace

void fill_input_on_gpu(const formula::CheckShape& shape, void* buf, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<<<blocks_for(count), kThreads, 0, stream>>>(shape, buf, count);
  CUDA_CHECK(cudaGetLastError());
}

void count_wrong_on_gpu(const formula::CheckShape& shape, const void* out, std::size_t count,
                        unsigned long long* counter, cudaStream_t stream) {
  if (count == 0) return;
  count_kernel<<<blocks_for(count), kThreads, 0, stream>>>(shape, out, count, counter);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::collective
