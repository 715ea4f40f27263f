#include <cstdint>
#include <string>
#include <type_traits>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// The gradient all-reduce's own kernels (the copy engines' shard sums) and the cross-rank checks: patterns, their
// errors, weight checksums.
namespace scalebench::train {

namespace {
// 16 bytes per load where every array is 16-byte aligned (V elements), else one element.
template <typename T, int V>
__global__ void sum_shards_kernel(T* dst, ShardSources src, long long n) {
  using Vec = Channels<T, V>;
  const long long vecs = n / V;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < vecs;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float acc[V] = {};
    for (int r = 0; r < src.count; ++r) {
      const Vec v = static_cast<const Vec*>(src.p[r])[i];
      for (int k = 0; k < V; ++k) acc[k] += to_float(v.v[k]);
    }
    Vec out;
    for (int k = 0; k < V; ++k) out.v[k] = from_float<T>(acc[k]);
    reinterpret_cast<Vec*>(dst)[i] = out;
  }
  // The tail that does not fill a vector.
  for (long long i = vecs * V + blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float acc = 0;
    for (int r = 0; r < src.count; ++r) acc += to_float(static_cast<const T*>(src.p[r])[i]);
    dst[i] = from_float<T>(acc);
  }
}

__device__ __forceinline__ int allreduce_pattern(long long i, int rank, int round) {
  return static_cast<int>((i * 7 + rank * 3 + round * 5) % 17) - 8;
}

template <typename T>
__global__ void fill_pattern_kernel(T* dst, long long n, int rank, int round) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = from_float<T>(static_cast<float>(allreduce_pattern(i, rank, round)));
}

template <typename T>
__global__ void count_errors_kernel(const T* p, long long n, int ranks, int round, unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    int want = 0;
    for (int r = 0; r < ranks; ++r) want += allreduce_pattern(i, r, round);
    bad += to_float(p[i]) != static_cast<float>(want);
  }
  if (bad) atomicAdd(wrong, bad);
}

__global__ void checksum_kernel(const float* p, long long n, unsigned long long* bits, double* sum) {
  unsigned long long b = 0;
  double s = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    b += __float_as_uint(p[i]);
    s += p[i];
  }
  atomicAdd(bits, b);
  atomicAdd(sum, s);
}
}  // namespace

void checksum(const float* p, long long n, unsigned long long* bits, double* sum, cudaStream_t s) {
  checksum_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, n, bits, sum);
  CUDA_CHECK(cudaGetLastError());
}

void sum_shards(void* dst, const ShardSources& src, DType t, long long n, cudaStream_t s) {
  if (n <= 0) return;
  if (src.count < 1 || src.count > kMaxShardSources)
    throw Error("sum_shards: " + std::to_string(src.count) + " sources; 1 to " + std::to_string(kMaxShardSources));
  bool aligned = reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
  for (int r = 0; r < src.count; ++r) aligned = aligned && reinterpret_cast<std::uintptr_t>(src.p[r]) % 16 == 0;
  // 32 blocks move a 10 MB shard in tens of microseconds and take a quarter of the SMs at most.
  constexpr unsigned kBlocks = 32, kShardThreads = 512;
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (aligned)
      sum_shards_kernel<T, 16 / sizeof(T)><<<kBlocks, kShardThreads, 0, s>>>(static_cast<T*>(dst), src, n);
    else
      sum_shards_kernel<T, 1><<<kBlocks, kShardThreads, 0, s>>>(static_cast<T*>(dst), src, n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void fill_allreduce_pattern(void* dst, DType t, long long n, int rank, int round, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_pattern_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(dst), n, rank, round);
  });
  CUDA_CHECK(cudaGetLastError());
}

void count_allreduce_errors(const void* p, DType t, long long n, int ranks, int round, unsigned long long* wrong,
                            cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    count_errors_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(p), n, ranks, round, wrong);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
