#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/device_convert.cuh"
#include "workloads/train/train_kernels.cuh"

namespace scalebench::train {

namespace {
constexpr int kThreads = 256;
using gpu::from_float;
using gpu::to_float;

// Calls f with a null pointer of the element type of `t` (the type is what matters).
template <typename F>
void with_type(DType t, F&& f) {
  switch (t) {
    case DType::kFloat:
      f(static_cast<float*>(nullptr));
      break;
    case DType::kHalf:
      f(static_cast<__half*>(nullptr));
      break;
    case DType::kBf16:
      f(static_cast<__nv_bfloat16*>(nullptr));
      break;
  }
}

unsigned blocks_for(long long n) {
  return static_cast<unsigned>(std::clamp<long long>((n + kThreads - 1) / kThreads, 1, 132LL * 16));
}

__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

template <typename T>
__global__ void fill_normal_kernel(T* dst, long long n, float mean, float std, std::uint64_t seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(i));
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) / 16777217.0f;  // (0, 1]
    const float u2 = static_cast<float>((h >> 16) & 0xffffff) / 16777216.0f;
    dst[i] = from_float<T>(mean + std * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

__global__ void fill_value_kernel(float* dst, long long n, float v) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = v;
}

__global__ void fill_labels_kernel(int* dst, long long n, int classes, std::uint64_t seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = static_cast<int>(mix(seed ^ (0x5bd1e995ULL * (i + 1))) % static_cast<std::uint64_t>(classes));
}

template <typename T>
__global__ void convert_kernel(const float* src, T* dst, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = from_float<T>(src[i]);
}

template <typename T>
__global__ void add_relu_kernel(T* y, const T* z, bool relu, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float v = to_float(y[i]) + (z ? to_float(z[i]) : 0.0f);
    y[i] = from_float<T>(relu ? fmaxf(v, 0.0f) : v);
  }
}

template <typename T>
__global__ void relu_forward_kernel(const T* x, T* y, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = from_float<T>(fmaxf(to_float(x[i]), 0.0f));
}

template <typename T>
__global__ void relu_backward_kernel(const T* y, const T* dy, T* dx, bool accumulate, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float g = to_float(y[i]) > 0.0f ? to_float(dy[i]) : 0.0f;
    dx[i] = from_float<T>(accumulate ? to_float(dx[i]) + g : g);
  }
}

template <typename T>
__global__ void add_into_kernel(T* dst, const T* src, bool accumulate, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = accumulate ? from_float<T>(to_float(dst[i]) + to_float(src[i])) : src[i];
}

// One thread per (image, channel): consecutive threads read consecutive channels.
template <typename T>
__global__ void avgpool_forward_kernel(const T* x, T* y, int n, int hw, int c) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(n) * c) return;
  const long long img = i / c, ch = i % c;
  const T* p = x + img * hw * c + ch;
  float sum = 0;
  for (int k = 0; k < hw; ++k) sum += to_float(p[static_cast<long long>(k) * c]);
  y[i] = from_float<T>(sum / hw);
}

template <typename T>
__global__ void avgpool_backward_kernel(const T* dy, T* dx, bool accumulate, int n, int hw, int c) {
  const long long total = static_cast<long long>(n) * hw * c;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long img = i / (static_cast<long long>(hw) * c), ch = i % c;
    const float g = to_float(dy[img * c + ch]) / hw;
    dx[i] = from_float<T>(accumulate ? to_float(dx[i]) + g : g);
  }
}

// V consecutive channels of one position, moved as one load or store (16 bytes where the channel
// count allows, else one channel).
template <typename T, int V>
struct alignas(sizeof(T) * V) Channels {
  T v[V];
};
template <int V>
struct alignas(V) Positions {  // the argmax bytes of V channels
  std::uint8_t v[V];
};

// Grid rows are images (strided past 65535); a thread takes V channels of one output of its
// image, so that its index arithmetic is 32-bit and each load is 16 bytes.
template <typename T, int V>
__global__ void maxpool_forward_kernel(const T* x, T* y, std::uint8_t* argmax, PoolShape p) {
  const int groups = p.c / V, per_image = p.oh * p.ow * groups;
  for (long long img = blockIdx.y; img < p.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int g = i % groups, pos = i / groups, ox = pos % p.ow, oy = pos / p.ow;
      const int y0 = oy * p.stride - p.pad, x0 = ox * p.stride - p.pad;
      float best[V];
      int at[V];
      for (int v = 0; v < V; ++v) best[v] = -INFINITY, at[v] = -1;
      for (int ky = 0; ky < p.k; ++ky) {
        const int iy = y0 + ky;
        if (iy < 0 || iy >= p.h) continue;
        for (int kx = 0; kx < p.k; ++kx) {
          const int ix = x0 + kx;
          if (ix < 0 || ix >= p.w) continue;
          const Channels<T, V> in =
              *reinterpret_cast<const Channels<T, V>*>(x + ((img * p.h + iy) * p.w + ix) * p.c + g * V);
          for (int v = 0; v < V; ++v) {
            const float f = to_float(in.v[v]);
            if (at[v] < 0 || f > best[v]) {  // NaN never wins (cuDNN's CUDNN_NOT_PROPAGATE_NAN)
              best[v] = f > best[v] ? f : best[v];
              at[v] = ky * p.k + kx;
            }
          }
        }
      }
      const long long o = ((img * p.oh + oy) * p.ow + ox) * p.c + g * V;
      Channels<T, V> out;
      Positions<V> where;
      for (int v = 0; v < V; ++v) out.v[v] = from_float<T>(best[v]), where.v[v] = static_cast<std::uint8_t>(at[v]);
      *reinterpret_cast<Channels<T, V>*>(y + o) = out;
      if (argmax) *reinterpret_cast<Positions<V>*>(argmax + o) = where;
    }
}

// A thread per V channels of one input gathers dy from the (at most ceil(k / stride)^2) outputs
// whose window holds it and whose maximum it is, so no two threads write one dx.
template <typename T, int V>
__global__ void maxpool_backward_kernel(const T* dy, const std::uint8_t* argmax, T* dx, bool accumulate, PoolShape p) {
  const int groups = p.c / V, per_image = p.h * p.w * groups;
  for (long long img = blockIdx.y; img < p.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int g = i % groups, pos = i / groups, ix = pos % p.w, iy = pos / p.w;
      // Outputs o whose window o * stride - pad + [0, k) holds the position.
      const int ylo = iy + p.pad - p.k + 1, xlo = ix + p.pad - p.k + 1;
      const int oy0 = ylo <= 0 ? 0 : (ylo + p.stride - 1) / p.stride, oy1 = min(p.oh - 1, (iy + p.pad) / p.stride);
      const int ox0 = xlo <= 0 ? 0 : (xlo + p.stride - 1) / p.stride, ox1 = min(p.ow - 1, (ix + p.pad) / p.stride);
      float sum[V] = {};
      for (int oy = oy0; oy <= oy1; ++oy)
        for (int ox = ox0; ox <= ox1; ++ox) {
          const long long o = ((img * p.oh + oy) * p.ow + ox) * p.c + g * V;
          const int at = (iy - (oy * p.stride - p.pad)) * p.k + (ix - (ox * p.stride - p.pad));
          const Positions<V> where = *reinterpret_cast<const Positions<V>*>(argmax + o);
          const Channels<T, V> d = *reinterpret_cast<const Channels<T, V>*>(dy + o);
          for (int v = 0; v < V; ++v)
            if (where.v[v] == at) sum[v] += to_float(d.v[v]);
        }
      Channels<T, V>* out = reinterpret_cast<Channels<T, V>*>(dx + ((img * p.h + iy) * p.w + ix) * p.c + g * V);
      Channels<T, V> r;
      if (accumulate) r = *out;
      for (int v = 0; v < V; ++v) r.v[v] = from_float<T>(accumulate ? to_float(r.v[v]) + sum[v] : sum[v]);
      *out = r;
    }
}

// Calls f with V = the channels in 16 bytes of T where the channel count is a multiple of it, else 1.
template <typename T, typename F>
void with_channel_vector(int c, F&& f) {
  constexpr int kWide = 16 / static_cast<int>(sizeof(T));
  if (c % kWide == 0)
    f(std::integral_constant<int, kWide>{});
  else
    f(std::integral_constant<int, 1>{});
}

dim3 image_grid(int n, long long per_image) {
  return dim3(static_cast<unsigned>(std::clamp<long long>((per_image + kThreads - 1) / kThreads, 1, 1 << 16)),
              static_cast<unsigned>(std::min(n, 65535)));
}

// One block per image: max, sum of exponentials, loss, gradient.
template <typename T>
__global__ void softmax_xent_kernel(const T* logits, const int* labels, T* dlogits, int n, int k,
                                    const float* loss_scale, double* loss, float smoothing) {
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
    atomicAdd(loss, l / n);
  }
  if (!dlogits) return;
  const float scale = (loss_scale ? *loss_scale : 1.0f) / n;
  const float off = smoothing / static_cast<float>(k);
  T* drow = dlogits + static_cast<long long>(img) * k;
  for (int j = threadIdx.x; j < k; j += blockDim.x) {
    const float p = expf(to_float(row[j]) - m) / sum;
    drow[j] = from_float<T>((p - off - (j == label ? 1.0f - smoothing : 0.0f)) * scale);
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

int sm_count() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::max(1, sms);
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
}  // namespace

namespace {
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

int dtype_bytes(DType t) { return t == DType::kFloat ? 4 : 2; }

void fill_normal(void* dst, DType t, long long n, float mean, float std, std::uint64_t seed, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_normal_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(dst), n, mean, std, seed);
  });
  CUDA_CHECK(cudaGetLastError());
}

void fill_value(float* dst, long long n, float value, cudaStream_t s) {
  fill_value_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, n, value);
  CUDA_CHECK(cudaGetLastError());
}

void fill_labels(int* dst, long long n, int classes, std::uint64_t seed, cudaStream_t s) {
  fill_labels_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, n, classes, seed);
  CUDA_CHECK(cudaGetLastError());
}

void convert_from_float(const float* src, void* dst, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    convert_kernel<<<blocks_for(n), kThreads, 0, s>>>(src, static_cast<T*>(dst), n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void add_relu(void* y, const void* z, bool relu, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    add_relu_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(y), static_cast<const T*>(z), relu, n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void relu_forward(const void* x, void* y, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    relu_forward_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void relu_backward(const void* y, const void* dy, void* dx, bool accumulate, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    relu_backward_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(y), static_cast<const T*>(dy),
                                                            static_cast<T*>(dx), accumulate, n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void add_into(void* dst, const void* src, bool accumulate, DType t, long long n, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    add_into_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(dst), static_cast<const T*>(src), accumulate, n);
  });
  CUDA_CHECK(cudaGetLastError());
}

void avgpool_forward(const void* x, void* y, DType t, int n, int hw, int c, cudaStream_t s) {
  const long long total = static_cast<long long>(n) * c;
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    avgpool_forward_kernel<<<static_cast<unsigned>((total + kThreads - 1) / kThreads), kThreads, 0, s>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n, hw, c);
  });
  CUDA_CHECK(cudaGetLastError());
}

void avgpool_backward(const void* dy, void* dx, bool accumulate, DType t, int n, int hw, int c, cudaStream_t s) {
  const long long total = static_cast<long long>(n) * hw * c;
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    avgpool_backward_kernel<<<blocks_for(total), kThreads, 0, s>>>(static_cast<const T*>(dy), static_cast<T*>(dx),
                                                                   accumulate, n, hw, c);
  });
  CUDA_CHECK(cudaGetLastError());
}

void maxpool_forward(const void* x, void* y, std::uint8_t* argmax, DType t, const PoolShape& p, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(p.c, [&](auto v) {
      maxpool_forward_kernel<T, decltype(v)::value>
          <<<image_grid(p.n, static_cast<long long>(p.oh) * p.ow * p.c / v), kThreads, 0, s>>>(
              static_cast<const T*>(x), static_cast<T*>(y), argmax, p);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void maxpool_backward(const void* dy, const std::uint8_t* argmax, void* dx, bool accumulate, DType t,
                      const PoolShape& p, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(p.c, [&](auto v) {
      maxpool_backward_kernel<T, decltype(v)::value>
          <<<image_grid(p.n, static_cast<long long>(p.h) * p.w * p.c / v), kThreads, 0, s>>>(
              static_cast<const T*>(dy), argmax, static_cast<T*>(dx), accumulate, p);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void softmax_cross_entropy(const void* logits, const int* labels, void* dlogits, DType t, int n, int k,
                           const float* loss_scale, double* loss, cudaStream_t s, float smoothing) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    softmax_xent_kernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(
        static_cast<const T*>(logits), labels, static_cast<T*>(dlogits), n, k, loss_scale, loss, smoothing);
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
