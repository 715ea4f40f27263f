#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "workloads/gemm/gemm_kernels.cuh"
#include "workloads/gemm/gemm_pattern.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/device_convert.cuh"

namespace scalebench::gemm {

namespace {
using gpu::from_float;
using gpu::to_double;

template <typename T>
__global__ void fill_kernel(T* data, long long rows, long long cols, long long ld, unsigned which, bool transposed,
                            float step) {
  const long long total = rows * cols;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = e % rows, c = e / rows;
    const int v = transposed ? pattern_int(which, c, r) : pattern_int(which, r, c);
    data[r + c * ld] = from_float<T>(static_cast<float>(v) * step);
  }
}

template <typename T>
__global__ void gather_kernel(const T* c, const long long* index, int count, double* out) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < count) out[e] = to_double(c[index[e]]);
}

template <typename T>
void launch_fill(void* data, long long rows, long long cols, long long ld, unsigned which, bool transposed, float step,
                 cudaStream_t stream) {
  const long long total = rows * cols;
  const int threads = 256;
  const long long blocks = (total + threads - 1) / threads;
  fill_kernel<T><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), threads, 0, stream>>>(
      static_cast<T*>(data), rows, cols, ld, which, transposed, step);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void launch_gather(const void* c, const long long* index, int count, double* out, cudaStream_t stream) {
  gather_kernel<T><<<(count + 127) / 128, 128, 0, stream>>>(static_cast<const T*>(c), index, count, out);
  CUDA_CHECK(cudaGetLastError());
}
}  // namespace

void fill_pattern(void* data, gpu::DType type, long long rows, long long cols, long long ld, unsigned which,
                  bool transposed, cudaStream_t stream) {
  const float step = static_cast<float>(kFloatInputStep);
  switch (type) {
    case gpu::DType::kF64:
      return launch_fill<double>(data, rows, cols, ld, which, transposed, step, stream);
    case gpu::DType::kF32:
      return launch_fill<float>(data, rows, cols, ld, which, transposed, step, stream);
    case gpu::DType::kF16:
      return launch_fill<__half>(data, rows, cols, ld, which, transposed, step, stream);
    case gpu::DType::kBf16:
      return launch_fill<__nv_bfloat16>(data, rows, cols, ld, which, transposed, step, stream);
    case gpu::DType::kE4M3:
      return launch_fill<__nv_fp8_e4m3>(data, rows, cols, ld, which, transposed, step, stream);
    case gpu::DType::kE5M2:
      return launch_fill<__nv_fp8_e5m2>(data, rows, cols, ld, which, transposed, step, stream);
    case gpu::DType::kI8:
      return launch_fill<std::int8_t>(data, rows, cols, ld, which, transposed, 1.0f, stream);
    case gpu::DType::kI32:
      return launch_fill<std::int32_t>(data, rows, cols, ld, which, transposed, 1.0f, stream);
    default:
      throw Error(std::string("gemm: no input is stored as ") + gpu::cuda_type_name(type));
  }
}

void gather_as_double(const void* c, gpu::DType type, const long long* index, int count, double* out,
                      cudaStream_t stream) {
  switch (type) {
    case gpu::DType::kF64:
      return launch_gather<double>(c, index, count, out, stream);
    case gpu::DType::kF32:
      return launch_gather<float>(c, index, count, out, stream);
    case gpu::DType::kF16:
      return launch_gather<__half>(c, index, count, out, stream);
    case gpu::DType::kBf16:
      return launch_gather<__nv_bfloat16>(c, index, count, out, stream);
    case gpu::DType::kI32:
      return launch_gather<std::int32_t>(c, index, count, out, stream);
    default:
      throw Error(std::string("gemm: no output is stored as ") + gpu::cuda_type_name(type));
  }
}

}  // namespace scalebench::gemm
