#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// Batch norm in our own kernels: per-channel reductions, coefficients and the elementwise passes.
namespace scalebench::train {

namespace {
// Per-channel sums over rows. A thread reads V channels (16 bytes) of a row at a time; a block
// is gx channel groups (gx * ty = 256 threads) by ty rows, blocks striding over the rows; the
// block's partial sums meet in shared memory, then one fp64 atomic per channel. kind 0: sum x and
// x^2; kind 1: sum g and g * (x - mean) (g = dy, where relu masked by the forward's bits of y > 0).
template <typename T, int kKind, int V>
__global__ void bn_reduce_kernel(const T* x, const std::uint8_t* mask, const T* dy, long long rows, int c,
                                 const float* mean, bool relu, double* out) {
  __shared__ float s0[kThreads * V], s1[kThreads * V];
  const int gx = blockDim.x, width = gx * V;  // channels per block
  const int ch = (blockIdx.x * gx + threadIdx.x) * V;
  float a0[V] = {}, a1[V] = {};
  if (ch < c) {
    float m[V];
    for (int v = 0; v < V; ++v) m[v] = kKind == 1 ? mean[ch + v] : 0.0f;
    for (long long r = blockIdx.y * static_cast<long long>(blockDim.y) + threadIdx.y; r < rows;
         r += static_cast<long long>(gridDim.y) * blockDim.y) {
      const long long i = r * c + ch;
      const Channels<T, V> xv = *reinterpret_cast<const Channels<T, V>*>(x + i);
      if (kKind == 0) {
        for (int v = 0; v < V; ++v) {
          const float f = to_float(xv.v[v]);
          a0[v] += f;
          a1[v] += f * f;
        }
      } else {
        const Channels<T, V> gv = *reinterpret_cast<const Channels<T, V>*>(dy + i);
        const unsigned pass = relu ? mask[i / V] : 0xffu;
        for (int v = 0; v < V; ++v) {
          const float g = (pass >> v) & 1u ? to_float(gv.v[v]) : 0.0f;
          a0[v] += g;
          a1[v] += g * (to_float(xv.v[v]) - m[v]);
        }
      }
    }
  }
  const int at = threadIdx.y * width + threadIdx.x * V;
  for (int v = 0; v < V; ++v) s0[at + v] = a0[v], s1[at + v] = a1[v];
  __syncthreads();
  // Thread t < width sums channel slot t over the block's rows.
  const int t = threadIdx.y * gx + threadIdx.x, cht = blockIdx.x * width + t;
  if (t < width && cht < c) {
    double t0 = 0, t1 = 0;
    for (int k = 0; k < static_cast<int>(blockDim.y); ++k) t0 += s0[k * width + t], t1 += s1[k * width + t];
    atomicAdd(&out[cht], t0);
    atomicAdd(&out[c + cht], t1);
  }
}

// coef[0..c): a, coef[c..2c): b for y = x * a + b.
__global__ void bn_stats_kernel(const double* sums, long long rows, int c, const float* gamma, const float* beta,
                                float* saved_mean, float* saved_inv_std, float* running_mean, float* running_var,
                                double momentum, double eps, float* coef) {
  const int ch = blockIdx.x * blockDim.x + threadIdx.x;
  if (ch >= c) return;
  const double mean = sums[ch] / rows;
  const double var = fmax(sums[c + ch] / rows - mean * mean, 0.0);
  const double inv = 1.0 / sqrt(var + eps);
  saved_mean[ch] = static_cast<float>(mean);
  saved_inv_std[ch] = static_cast<float>(inv);
  const double unbiased = rows > 1 ? var * rows / (rows - 1) : var;
  running_mean[ch] = static_cast<float>((1 - momentum) * running_mean[ch] + momentum * mean);
  running_var[ch] = static_cast<float>((1 - momentum) * running_var[ch] + momentum * unbiased);
  const double a = gamma[ch] * inv;
  coef[ch] = static_cast<float>(a);
  coef[c + ch] = static_cast<float>(beta[ch] - mean * a);
}

__global__ void bn_infer_coef_kernel(int c, const float* gamma, const float* beta, const float* running_mean,
                                     const float* running_var, double eps, float* coef) {
  const int ch = blockIdx.x * blockDim.x + threadIdx.x;
  if (ch >= c) return;
  const float a = gamma[ch] * static_cast<float>(rsqrt(static_cast<double>(running_var[ch]) + eps));
  coef[ch] = a;
  coef[c + ch] = beta[ch] - running_mean[ch] * a;
}

// The elementwise passes take V channels (16 bytes) per thread; tensors handed to them have fewer
// than 2^31 elements (the net's limit, cuDNN's), so indices are 32-bit. The grid's stride is a
// multiple of the channel groups (fixed_channel_grid), so each thread keeps the same channels
// throughout and reads their coefficients once. Read per element, with an index modulo, they held
// these passes to 2.4-2.7 TB/s on an H200 (a copy: 3.9), and bf16 ResNet-50's batch norm took 21.1
// ms of a step instead of 16.0 (docs/results/2026-11-22-train-h200-bn-channels).
template <typename T, int V>
__global__ void bn_apply_kernel(const T* x, const T* z, T* y, std::uint8_t* mask, unsigned vectors, int c,
                                const float* coef, bool relu) {
  const unsigned first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  const int ch = static_cast<int>(first % static_cast<unsigned>(c / V)) * V;
  float a[V], b[V];
  for (int v = 0; v < V; ++v) a[v] = coef[ch + v], b[v] = coef[c + ch + v];
  for (unsigned i = first; i < vectors; i += stride) {
    const Channels<T, V> xv = reinterpret_cast<const Channels<T, V>*>(x)[i];
    Channels<T, V> zv{}, out;
    if (z) zv = reinterpret_cast<const Channels<T, V>*>(z)[i];
    for (int v = 0; v < V; ++v) {
      float f = to_float(xv.v[v]) * a[v] + b[v];
      if (z) f += to_float(zv.v[v]);
      out.v[v] = from_float<T>(relu ? fmaxf(f, 0.0f) : f);
    }
    reinterpret_cast<Channels<T, V>*>(y)[i] = out;
    if (mask) {  // bit v: y > 0 as stored, so the backward need not read y
      unsigned bits = 0;
      for (int v = 0; v < V; ++v) bits |= (to_float(out.v[v]) > 0.0f ? 1u : 0u) << v;
      mask[i] = static_cast<std::uint8_t>(bits);
    }
  }
}

// From sum g and sum g (x - mean): dgamma, dbeta, and dx = A g + B x + D per channel.
__global__ void bn_grad_coef_kernel(const double* sums, long long rows, int c, const float* gamma,
                                    const float* saved_mean, const float* saved_inv_std, float* dparams, float* coef) {
  const int ch = blockIdx.x * blockDim.x + threadIdx.x;
  if (ch >= c) return;
  const double inv = saved_inv_std[ch], mean = saved_mean[ch];
  const double sg = sums[ch], sgx = sums[c + ch] * inv;  // sum g, sum g * xhat
  dparams[ch] = static_cast<float>(sgx);
  dparams[c + ch] = static_cast<float>(sg);
  const double a = gamma[ch] * inv, mg = sg / rows, mgx = sgx / rows;
  const double b = -a * inv * mgx;
  coef[ch] = static_cast<float>(a);
  coef[c + ch] = static_cast<float>(b);
  coef[2 * c + ch] = static_cast<float>(-a * mg - b * mean);
}

template <typename T, int V>
__global__ void bn_backward_apply_kernel(const T* x, const std::uint8_t* mask, const T* dy, T* dx, T* dz, bool acc_dx,
                                         bool acc_dz, unsigned vectors, int c, const float* coef, bool relu) {
  using Vec = Channels<T, V>;
  const unsigned first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  const int ch = static_cast<int>(first % static_cast<unsigned>(c / V)) * V;  // the same for every i (bn_apply_kernel)
  float a[V], b[V], d[V];
  for (int v = 0; v < V; ++v) a[v] = coef[ch + v], b[v] = coef[c + ch + v], d[v] = coef[2 * c + ch + v];
  for (unsigned i = first; i < vectors; i += stride) {
    const Vec xv = reinterpret_cast<const Vec*>(x)[i], gv = reinterpret_cast<const Vec*>(dy)[i];
    Vec dzv{}, dxv{};
    const unsigned pass = relu ? mask[i] : 0xffu;
    if (dz && acc_dz) dzv = reinterpret_cast<const Vec*>(dz)[i];
    if (acc_dx) dxv = reinterpret_cast<const Vec*>(dx)[i];
    for (int v = 0; v < V; ++v) {
      const float g = (pass >> v) & 1u ? to_float(gv.v[v]) : 0.0f;
      dzv.v[v] = from_float<T>(acc_dz ? to_float(dzv.v[v]) + g : g);
      const float dv = a[v] * g + b[v] * to_float(xv.v[v]) + d[v];
      dxv.v[v] = from_float<T>(acc_dx ? to_float(dxv.v[v]) + dv : dv);
    }
    if (dz) reinterpret_cast<Vec*>(dz)[i] = dzv;
    reinterpret_cast<Vec*>(dx)[i] = dxv;
  }
}

// Blocks of kThreads for `kernel`, an elementwise pass over `vectors` of c / v channel groups: as
// many as the GPU holds at once (a grid-stride loop with a partial second wave takes nearly two
// waves' time), and a multiple of what makes the grid's stride a multiple of the groups.
template <typename K>
unsigned fixed_channel_grid(K* kernel, unsigned vectors, int c, int v) {
  const unsigned groups = static_cast<unsigned>(c / v);
  unsigned a = groups, b = kThreads;  // gcd
  while (b) a = std::exchange(b, a % b);
  const unsigned multiple = groups / a;
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const unsigned resident = static_cast<unsigned>(std::max(1, sm_count() * per_sm));
  const unsigned want = std::clamp((vectors + kThreads - 1) / kThreads, 1u, resident);
  return std::max(multiple, want / multiple * multiple);
}

// Blocks of gx channel groups by 256 / gx rows (gx: the groups, at most 32).
dim3 reduce_block(int c, int v) {
  const int gx = std::min(32, c / v);
  return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(kThreads / gx));
}

// At most 4 blocks per SM in all: each thread then sums more rows before the block's shared-memory
// sum and its atomics. On an H200 that beat 2048 blocks (and 8 or 2 per SM) on every ResNet-50
// shape, by 10-51% (docs/results/2026-11-22-train-h200-bn-channels, call 8).
dim3 reduce_grid(long long rows, int c, int v) {
  const dim3 b = reduce_block(c, v);
  const long long width = static_cast<long long>(b.x) * v;
  const unsigned gx = static_cast<unsigned>((c + width - 1) / width);
  const long long most = std::max<long long>(1, 4LL * sm_count() / gx);
  const long long gy = std::clamp<long long>((rows + 8 * b.y - 1) / (8 * b.y), 1, most);
  return dim3(gx, static_cast<unsigned>(gy));
}

unsigned elementwise_vectors(long long rows, int c, int v) {
  if (rows * c >= (1LL << 31))
    throw Error("batch norm over " + std::to_string(rows * c) + " elements: at most 2^31 - 1");
  return static_cast<unsigned>(rows * c / v);
}
}  // namespace

std::size_t bn_relu_mask_bytes(long long rows, int c, DType t) {
  std::size_t out = 0;
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(c, [&](auto v) { out = static_cast<std::size_t>(rows * c / decltype(v)::value); });
  });
  return out;
}

std::size_t bn_work_bytes(int c) { return static_cast<std::size_t>(c) * (2 * sizeof(double) + 4 * sizeof(float)); }

void bn_forward_train(const void* x, const void* z, void* y, DType t, long long rows, int c, const float* gamma,
                      const float* beta, float* saved_mean, float* saved_inv_std, float* running_mean,
                      float* running_var, double momentum, double eps, bool relu, std::uint8_t* relu_mask, void* work,
                      cudaStream_t s) {
  double* sums = static_cast<double*>(work);
  float* coef = reinterpret_cast<float*>(sums + 2 * c);
  CUDA_CHECK(cudaMemsetAsync(sums, 0, 2 * static_cast<std::size_t>(c) * sizeof(double), s));
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(c, [&](auto v) {
      constexpr int V = decltype(v)::value;
      bn_reduce_kernel<T, 0, V><<<reduce_grid(rows, c, V), reduce_block(c, V), 0, s>>>(
          static_cast<const T*>(x), nullptr, nullptr, rows, c, nullptr, false, sums);
      bn_stats_kernel<<<(c + 127) / 128, 128, 0, s>>>(sums, rows, c, gamma, beta, saved_mean, saved_inv_std,
                                                      running_mean, running_var, momentum, eps, coef);
      const unsigned vectors = elementwise_vectors(rows, c, V);
      bn_apply_kernel<T, V><<<fixed_channel_grid(bn_apply_kernel<T, V>, vectors, c, V), kThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<const T*>(z), static_cast<T*>(y), relu ? relu_mask : nullptr, vectors,
          c, coef, relu);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void bn_forward_infer(const void* x, const void* z, void* y, DType t, long long rows, int c, const float* gamma,
                      const float* beta, const float* running_mean, const float* running_var, double eps, bool relu,
                      void* work, cudaStream_t s) {
  float* coef = reinterpret_cast<float*>(static_cast<double*>(work) + 2 * c);
  bn_infer_coef_kernel<<<(c + 127) / 128, 128, 0, s>>>(c, gamma, beta, running_mean, running_var, eps, coef);
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(c, [&](auto v) {
      constexpr int V = decltype(v)::value;
      const unsigned vectors = elementwise_vectors(rows, c, V);
      bn_apply_kernel<T, V><<<fixed_channel_grid(bn_apply_kernel<T, V>, vectors, c, V), kThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<const T*>(z), static_cast<T*>(y), nullptr, vectors, c, coef, relu);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void bn_backward(const void* x, const std::uint8_t* relu_mask, const void* dy, void* dx, void* dz, bool acc_dx,
                 bool acc_dz, DType t, long long rows, int c, const float* gamma, const float* saved_mean,
                 const float* saved_inv_std, bool relu, float* dparams, void* work, cudaStream_t s) {
  double* sums = static_cast<double*>(work);
  float* coef = reinterpret_cast<float*>(sums + 2 * c);
  CUDA_CHECK(cudaMemsetAsync(sums, 0, 2 * static_cast<std::size_t>(c) * sizeof(double), s));
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(c, [&](auto v) {
      constexpr int V = decltype(v)::value;
      bn_reduce_kernel<T, 1, V><<<reduce_grid(rows, c, V), reduce_block(c, V), 0, s>>>(
          static_cast<const T*>(x), relu_mask, static_cast<const T*>(dy), rows, c, saved_mean, relu, sums);
      bn_grad_coef_kernel<<<(c + 127) / 128, 128, 0, s>>>(sums, rows, c, gamma, saved_mean, saved_inv_std, dparams,
                                                          coef);
      const unsigned vectors = elementwise_vectors(rows, c, V);
      bn_backward_apply_kernel<T, V>
          <<<fixed_channel_grid(bn_backward_apply_kernel<T, V>, vectors, c, V), kThreads, 0, s>>>(
              static_cast<const T*>(x), relu_mask, static_cast<const T*>(dy), static_cast<T*>(dx), static_cast<T*>(dz),
              acc_dx, acc_dz, vectors, c, coef, relu);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
