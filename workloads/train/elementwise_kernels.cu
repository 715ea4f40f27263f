#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "common/error.hpp"

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// The sum of two layers' outputs, their gradients, a bias with the ReLU after it, the
// per-channel sums of a bias's gradient, and the channel slices of a concatenation.
namespace scalebench::train {

namespace {
// V elements at once (16 bytes where n allows): the scalar 2-byte loads of 16-bit types reached
// about half of HBM's bandwidth (VGG-16's ReLUs took 38 ms of a 153 ms step at batch 512).
template <typename T, int V>
__global__ void relu_forward_kernel(const T* x, T* y, long long n) {
  using Vec = Channels<T, V>;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n / V;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    Vec v = reinterpret_cast<const Vec*>(x)[i];
#pragma unroll
    for (int k = 0; k < V; ++k) v.v[k] = from_float<T>(fmaxf(to_float(v.v[k]), 0.0f));
    reinterpret_cast<Vec*>(y)[i] = v;
  }
}

template <typename T, int V>
__global__ void relu_backward_kernel(const T* y, const T* dy, T* dx, bool accumulate, long long n) {
  using Vec = Channels<T, V>;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n / V;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Vec yv = reinterpret_cast<const Vec*>(y)[i], g = reinterpret_cast<const Vec*>(dy)[i];
    Vec out = accumulate ? reinterpret_cast<const Vec*>(dx)[i] : Vec{};
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float d = to_float(yv.v[k]) > 0.0f ? to_float(g.v[k]) : 0.0f;
      out.v[k] = from_float<T>(accumulate ? to_float(out.v[k]) + d : d);
    }
    reinterpret_cast<Vec*>(dx)[i] = out;
  }
}

// y = relu(x + bias[channel]) over rows x c (channels fastest), V channels a thread.
template <typename T, int V>
__global__ void bias_relu_forward_kernel(const T* x, const T* bias, T* y, long long n, int c) {
  using Vec = Channels<T, V>;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n / V;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    Vec v = reinterpret_cast<const Vec*>(x)[i];
    const Vec b = reinterpret_cast<const Vec*>(bias)[(i * V % c) / V];
#pragma unroll
    for (int k = 0; k < V; ++k) v.v[k] = from_float<T>(fmaxf(to_float(v.v[k]) + to_float(b.v[k]), 0.0f));
    reinterpret_cast<Vec*>(y)[i] = v;
  }
}

// dx = dy * (y > 0) and its per-channel sums (the bias's gradient) in one pass. Each thread keeps
// one group of V channels over the rows it strides through; the block adds its threads' sums in
// shared memory, then once per channel into `sums`.
template <typename T, int V>
__global__ void relu_backward_bias_kernel(const T* y, const T* dy, T* dx, long long rows, int c, float* sums) {
  using Vec = Channels<T, V>;
  extern __shared__ float block_sums[];
  const int groups = c / V, col = threadIdx.x % groups, rows_per_block = blockDim.x / groups;
  for (int k = threadIdx.x; k < c; k += blockDim.x) block_sums[k] = 0.0f;
  __syncthreads();
  float acc[V] = {};
  for (long long r = blockIdx.x * static_cast<long long>(rows_per_block) + threadIdx.x / groups; r < rows;
       r += static_cast<long long>(gridDim.x) * rows_per_block) {
    const long long i = r * groups + col;
    const Vec yv = reinterpret_cast<const Vec*>(y)[i], g = reinterpret_cast<const Vec*>(dy)[i];
    Vec out;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      out.v[k] = to_float(yv.v[k]) > 0.0f ? g.v[k] : from_float<T>(0.0f);
      acc[k] += to_float(out.v[k]);
    }
    reinterpret_cast<Vec*>(dx)[i] = out;
  }
#pragma unroll
  for (int k = 0; k < V; ++k) atomicAdd(&block_sums[col * V + k], acc[k]);
  __syncthreads();
  for (int k = threadIdx.x; k < c; k += blockDim.x) atomicAdd(&sums[k], block_sums[k]);
}

template <typename T, int V>
__global__ void add_forward_kernel(const T* a, const T* b, T* y, long long n) {
  using Vec = Channels<T, V>;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n / V;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Vec av = reinterpret_cast<const Vec*>(a)[i], bv = reinterpret_cast<const Vec*>(b)[i];
    Vec out;
#pragma unroll
    for (int k = 0; k < V; ++k) out.v[k] = from_float<T>(to_float(av.v[k]) + to_float(bv.v[k]));
    reinterpret_cast<Vec*>(y)[i] = out;
  }
}

// V channels a thread (16 bytes where every row width and offset allows).
template <typename T, int V>
__global__ void copy_channels_kernel(const T* src, int src_c, int src_at, T* dst, int dst_c, int dst_at, int c,
                                     bool accumulate, long long rows) {
  using Vec = Channels<T, V>;
  const int groups = c / V;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < rows * groups;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / groups;
    const int k = static_cast<int>(i % groups) * V;
    const Vec v = *reinterpret_cast<const Vec*>(src + r * src_c + src_at + k);
    Vec* out = reinterpret_cast<Vec*>(dst + r * dst_c + dst_at + k);
    if (!accumulate) {
      *out = v;
      continue;
    }
    Vec sum = *out;
#pragma unroll
    for (int j = 0; j < V; ++j) sum.v[j] = from_float<T>(to_float(sum.v[j]) + to_float(v.v[j]));
    *out = sum;
  }
}

// Threads of a block cover 32 channels by 8 rows; blocks stride over the rows, one atomic add per
// thread and channel at the end.
template <typename T>
__global__ void bias_grad_kernel(const T* dy, long long rows, int c, float* sums) {
  const int ch = blockIdx.x * 32 + threadIdx.x;
  if (ch >= c) return;
  float acc = 0;
  for (long long r = blockIdx.y * 8LL + threadIdx.y; r < rows; r += gridDim.y * 8LL) acc += to_float(dy[r * c + ch]);
  atomicAdd(&sums[ch], acc);
}
}  // namespace

namespace {
// V = the elements of T in 16 bytes where n and every pointer allow, else 1.
template <typename T, typename F>
void with_vector(long long n, std::initializer_list<const void*> pointers, F&& f) {
  constexpr int kWide = 16 / static_cast<int>(sizeof(T));
  bool aligned = n % kWide == 0;
  for (const void* p : pointers) aligned = aligned && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  if (aligned)
    f(std::integral_constant<int, kWide>{});
  else
    f(std::integral_constant<int, 1>{});
}
}  // namespace

void relu_forward(const void* x, void* y, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_vector<T>(n, {x, y}, [&](auto v) {
      relu_forward_kernel<T, decltype(v)::value>
          <<<blocks_for(n / decltype(v)::value), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void relu_backward(const void* y, const void* dy, void* dx, bool accumulate, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_vector<T>(n, {y, dy, dx}, [&](auto v) {
      relu_backward_kernel<T, decltype(v)::value><<<blocks_for(n / decltype(v)::value), kThreads, 0, s>>>(
          static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx), accumulate, n);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void add_forward(const void* a, const void* b, void* y, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_vector<T>(n, {a, b, y}, [&](auto v) {
      add_forward_kernel<T, decltype(v)::value><<<blocks_for(n / decltype(v)::value), kThreads, 0, s>>>(
          static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), n);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

bool bias_relu_fusable(DType t, int c) {
  const int wide = 16 / dtype_bytes(t), groups = c / wide;
  return c % wide == 0 && groups <= kThreads && kThreads % groups == 0;
}

void bias_relu_forward(const void* x, const void* bias, void* y, DType t, long long rows, int c, cudaStream_t s) {
  if (!bias_relu_fusable(t, c))
    throw Error("bias_relu_forward: " + std::to_string(c) + " channels do not fit its vectors");
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr int kWide = 16 / static_cast<int>(sizeof(T));
    bias_relu_forward_kernel<T, kWide><<<blocks_for(rows * c / kWide), kThreads, 0, s>>>(
        static_cast<const T*>(x), static_cast<const T*>(bias), static_cast<T*>(y), rows * c, c);
  });
  CUDA_CHECK(cudaGetLastError());
}

void relu_backward_bias(const void* y, const void* dy, void* dx, DType t, long long rows, int c, float* sums,
                        cudaStream_t s) {
  if (!bias_relu_fusable(t, c))
    throw Error("relu_backward_bias: " + std::to_string(c) + " channels do not fit its vectors");
  // A few blocks per SM: enough loads in flight for HBM, few global atomics per channel.
  const unsigned blocks = static_cast<unsigned>(sm_count() * 4);
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr int kWide = 16 / static_cast<int>(sizeof(T));
    relu_backward_bias_kernel<T, kWide><<<blocks, kThreads, static_cast<std::size_t>(c) * sizeof(float), s>>>(
        static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx), rows, c, sums);
  });
  CUDA_CHECK(cudaGetLastError());
}

void add_into(void* dst, const void* src, bool accumulate, DType t, long long n, cudaStream_t s) {
  if (accumulate)
    add_forward(dst, src, dst, t, n, s);
  else
    CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(n) * dtype_bytes(t), cudaMemcpyDeviceToDevice, s));
}

void copy_channels(const void* src, int src_c, int src_at, void* dst, int dst_c, int dst_at, int c, bool accumulate,
                   DType t, long long rows, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr int kWide = 16 / static_cast<int>(sizeof(T));
    // Vectors of `w` elements where every width and offset is a multiple of it and both buffers
    // are aligned to it: 16 bytes, else 8 or 4 (NASNet's cells join 44-channel branches).
    auto fits = [&](int w) {
      const auto bytes = static_cast<std::uintptr_t>(w) * sizeof(T);
      return src_c % w == 0 && src_at % w == 0 && dst_c % w == 0 && dst_at % w == 0 && c % w == 0 &&
             reinterpret_cast<std::uintptr_t>(src) % bytes == 0 && reinterpret_cast<std::uintptr_t>(dst) % bytes == 0;
    };
    auto launch = [&](auto v) {
      constexpr int V = decltype(v)::value;
      copy_channels_kernel<T, V><<<blocks_for(rows * (c / V)), kThreads, 0, s>>>(
          static_cast<const T*>(src), src_c, src_at, static_cast<T*>(dst), dst_c, dst_at, c, accumulate, rows);
    };
    constexpr int kHalf = kWide >= 4 ? kWide / 2 : 1, kQuarter = kWide >= 8 ? kWide / 4 : 1;
    if (fits(kWide))
      launch(std::integral_constant<int, kWide>{});
    else if (fits(kHalf))
      launch(std::integral_constant<int, kHalf>{});
    else if (fits(kQuarter))
      launch(std::integral_constant<int, kQuarter>{});
    else
      launch(std::integral_constant<int, 1>{});
  });
  CUDA_CHECK(cudaGetLastError());
}

void bias_grad(const void* dy, DType t, long long rows, int c, float* sums, cudaStream_t s) {
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((c + 31) / 32), static_cast<unsigned>(std::clamp<long long>(
                                                            (rows + 63) / 64, 1, std::max(1, 4096 / ((c + 31) / 32)))));
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    bias_grad_kernel<<<grid, block, 0, s>>>(static_cast<const T*>(dy), rows, c, sums);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
