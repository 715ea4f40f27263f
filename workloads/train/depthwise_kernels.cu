#include <algorithm>
#include <climits>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "common/error.hpp"
#include "workloads/gpu/alignment.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// Depthwise convolution (one k x k filter per channel) of NHWC activations, forward, backward data
// and backward filter, in place of cuDNN's grouped convolution on its legacy API, which took 655 of
// NASNet-A Mobile's 816 ms fp16 step at batch 512 on an H200 (43 ms for one layer).
namespace scalebench::train {

namespace {
// A block keeps its channels' filter taps in shared memory as fp32, tap-major, for at most this
// many channels (25 KiB at k = 7); wider layers split their channels over the grid's last dimension.
constexpr int kChunkChannels = 128;
// The filter gradient's work is split into slices of positions of about this many (tiny layers
// take one slice), at most four blocks per SM in all.
constexpr int kPositionsPerSlice = 256;

// Channel chunks of at most `most` groups of V channels, as even as they can be: `chunks` of
// `groups` groups each (the last may have fewer).
struct Chunking {
  int chunks = 1, groups = 1;
};
Chunking chunking(int groups, int most) {
  Chunking c;
  c.chunks = (groups + most - 1) / most;
  c.groups = (groups + c.chunks - 1) / c.chunks;
  return c;
}

// The taps of channels [c0, c0 + cb) as fp32, tap-major (sw[(r * k + s) * cb + c]), so that a
// thread reads its V channels' tap as one vector. w is c x k x k, read a scalar at a time: the
// net's weights lie at any element offset in its flat buffer.
template <typename T>
__device__ void load_taps(const T* w, float* sw, int c0, int cb, int kk, bool flip = false) {
  for (int i = threadIdx.x; i < cb * kk; i += blockDim.x) {
    const int c = i / kk, rs = i % kk;
    sw[rs * cb + c] = to_float(w[static_cast<long long>(c0 + c) * kk + (flip ? kk - 1 - rs : rs)]);
  }
  __syncthreads();
}

// How many neighbouring outputs of one row a thread of the forward and filter kernels takes: the
// inputs their windows share are loaded once (per window row, (kRun - 1) x stride + k loads for
// kRun outputs instead of kRun x k) and each tap read applies to all of them.
constexpr int kRun = 4;

// The input a correlation reads and the output it writes, per image. The forward pass is one
// (x into y); so is the data gradient at stride 1 (dy into dx with the taps flipped and the
// padding k - 1 - pad), which takes the same kernel.
struct Correlation {
  int n = 0, ih = 0, iw = 0, c = 0, oh = 0, ow = 0, pad = 0;
};

// Grid rows are images (strided past 65535) and grid z the channel chunks; a thread takes V
// channels of kRun neighbouring outputs of a row. Per window row it holds the inputs the kRun
// windows span as vectors of T (at most 13 x 16 bytes) and applies each tap, read once from
// shared memory, to all of them. `flip` reads the taps mirrored (the data gradient's); with
// `accumulate` the result is added to what `out` holds.
template <typename T, int V, int K, int S>
__global__ void __launch_bounds__(kThreads) depthwise_rows_kernel(const T* in, const T* w, T* out, bool flip,
                                                                  bool accumulate, Correlation g, int chunk_groups) {
  extern __shared__ __align__(16) float sw[];
  constexpr int kSpan = (kRun - 1) * S + K;  // inputs a row of kRun windows reads
  const int g0 = blockIdx.z * chunk_groups, cg = min(chunk_groups, g.c / V - g0), cb = cg * V, c0 = g0 * V;
  load_taps(w, sw, c0, cb, K * K, flip);
  const int runs = (g.ow + kRun - 1) / kRun, per_image = g.oh * runs * cg;
  for (long long img = blockIdx.y; img < g.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int gi = i % cg, rest = i / cg, ox0 = (rest % runs) * kRun, oy = rest / runs;
      const int y0 = oy * S - g.pad, x0 = ox0 * S - g.pad, c = c0 + gi * V;
      float sum[kRun][V] = {};
#pragma unroll
      for (int r = 0; r < K; ++r) {
        const int iy = y0 + r;
        if (iy < 0 || iy >= g.ih) continue;
        const T* row = in + ((img * g.ih + iy) * g.iw) * g.c + c;
        Channels<T, V> span[kSpan];
#pragma unroll
        for (int m = 0; m < kSpan; ++m) {
          const int ix = x0 + m;
          if (ix >= 0 && ix < g.iw)
            span[m] = *reinterpret_cast<const Channels<T, V>*>(row + static_cast<long long>(ix) * g.c);
          else
#pragma unroll
            for (int v = 0; v < V; ++v) span[m].v[v] = from_float<T>(0.0f);
        }
#pragma unroll
        for (int s = 0; s < K; ++s) {
          const Channels<float, V> tap = *reinterpret_cast<const Channels<float, V>*>(sw + (r * K + s) * cb + gi * V);
#pragma unroll
          for (int j = 0; j < kRun; ++j)
#pragma unroll
            for (int v = 0; v < V; ++v) sum[j][v] += to_float(span[j * S + s].v[v]) * tap.v[v];
        }
      }
#pragma unroll
      for (int j = 0; j < kRun; ++j) {
        if (ox0 + j >= g.ow) break;
        Channels<T, V>* o = reinterpret_cast<Channels<T, V>*>(out + ((img * g.oh + oy) * g.ow + ox0 + j) * g.c + c);
        Channels<T, V> res;
        if (accumulate) res = *o;
#pragma unroll
        for (int v = 0; v < V; ++v) res.v[v] = from_float<T>(accumulate ? to_float(res.v[v]) + sum[j][v] : sum[j][v]);
        *o = res;
      }
    }
}

// A thread per V channels of one input gathers dy times the tap that joined them from the outputs
// whose window holds it (as avgpool2d_backward_kernel does), so no two threads write one dx.
template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
    depthwise_data_kernel(const T* dy, const T* w, T* dx, bool accumulate, PoolShape p, int chunk_groups) {
  extern __shared__ __align__(16) float sw[];
  const int g0 = blockIdx.z * chunk_groups, cg = min(chunk_groups, p.c / V - g0), cb = cg * V, c0 = g0 * V;
  load_taps(w, sw, c0, cb, p.k * p.k);
  const int per_image = p.h * p.w * cg;
  for (long long img = blockIdx.y; img < p.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int g = i % cg, pos = i / cg, ix = pos % p.w, iy = pos / p.w;
      // Outputs o whose window o * stride - pad + [0, k) holds the position.
      const int ylo = iy + p.pad - p.k + 1, xlo = ix + p.pad - p.k + 1;
      const int oy0 = ylo <= 0 ? 0 : (ylo + p.stride - 1) / p.stride, oy1 = min(p.oh - 1, (iy + p.pad) / p.stride);
      const int ox0 = xlo <= 0 ? 0 : (xlo + p.stride - 1) / p.stride, ox1 = min(p.ow - 1, (ix + p.pad) / p.stride);
      float sum[V] = {};
      for (int oy = oy0; oy <= oy1; ++oy)
        for (int ox = ox0; ox <= ox1; ++ox) {
          const int r = iy + p.pad - oy * p.stride, s = ix + p.pad - ox * p.stride;
          const Channels<T, V> d =
              *reinterpret_cast<const Channels<T, V>*>(dy + ((img * p.oh + oy) * p.ow + ox) * p.c + c0 + g * V);
          const Channels<float, V> tap = *reinterpret_cast<const Channels<float, V>*>(sw + (r * p.k + s) * cb + g * V);
#pragma unroll
          for (int v = 0; v < V; ++v) sum[v] += to_float(d.v[v]) * tap.v[v];
        }
      Channels<T, V>* out = reinterpret_cast<Channels<T, V>*>(dx + ((img * p.h + iy) * p.w + ix) * p.c + c0 + g * V);
      Channels<T, V> r;
      if (accumulate) r = *out;
#pragma unroll
      for (int v = 0; v < V; ++v) r.v[v] = from_float<T>(accumulate ? to_float(r.v[v]) + sum[v] : sum[v]);
      *out = r;
    }
}

// The filter's gradient is c x k x k sums over all n x oh x ow outputs (1.6 million for NASNet's
// stem cell at batch 512, for 32 x 49 values), so the outputs are what is split: grid x slices
// them, grid y chunks the channels. In a block, threads come in lanes of (channel vector, tap row
// r), channel vectors fastest so that a warp's loads of one position are contiguous; a lane takes
// runs of kRun neighbouring outputs of a row, every lanes-th run of its slice, so the block's lanes
// work on neighbouring runs, whose windows overlap in L1. A thread keeps its row's K x V sums in
// registers (hence K as a template argument): per run it loads kRun dy vectors and the
// (kRun - 1) x S + K inputs their windows span, each once, for kRun x K x V FMAs. No atomics: the
// lanes' sums are added in shared memory in lane order, each block writes its slice's partial
// sums, and depthwise_filter_sum_kernel adds the slices in order, so the gradient has the same bits
// every run.
template <typename T, int V, int K, int S>
__global__ void __launch_bounds__(kThreads)
    depthwise_filter_kernel(const T* x, const T* dy, float* partial, PoolShape p, int chunk_groups) {
  extern __shared__ __align__(16) float sums[];  // per thread of a lane: its K x V sums
  constexpr int kSpan = (kRun - 1) * S + K;
  const int g0 = blockIdx.y * chunk_groups, cg = min(chunk_groups, p.c / V - g0), c0 = g0 * V;
  const int per_lane = chunk_groups * K, lanes = blockDim.x / per_lane;
  const int lane = threadIdx.x / per_lane, within = threadIdx.x % per_lane;
  const int gi = within % chunk_groups, r = within / chunk_groups;
  const bool active = lane < lanes && gi < cg;
  const int c = c0 + gi * V;
  float acc[K][V] = {};
  if (active) {
    const int runs = (p.ow + kRun - 1) / kRun, all = p.n * p.oh * runs;
    for (int u = blockIdx.x * lanes + lane; u < all; u += gridDim.x * lanes) {
      const int row = u / runs, ox0 = (u - row * runs) * kRun;
      const int img = row / p.oh, iy = (row - img * p.oh) * S - p.pad + r;
      if (iy < 0 || iy >= p.h) continue;
      // The run's dy, zero past the row's end so that those outputs add nothing.
      float d[kRun][V];
#pragma unroll
      for (int j = 0; j < kRun; ++j) {
        if (ox0 + j < p.ow) {
          const Channels<T, V> dv =
              *reinterpret_cast<const Channels<T, V>*>(dy + (static_cast<long long>(row) * p.ow + ox0 + j) * p.c + c);
#pragma unroll
          for (int v = 0; v < V; ++v) d[j][v] = to_float(dv.v[v]);
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) d[j][v] = 0.0f;
        }
      }
      const int x0 = ox0 * S - p.pad;
      const T* in_row = x + (static_cast<long long>(img) * p.h + iy) * p.w * p.c + c;
      // Input m of the span meets output j under tap s = m - j x S.
#pragma unroll
      for (int m = 0; m < kSpan; ++m) {
        const int ix = x0 + m;
        if (ix < 0 || ix >= p.w) continue;
        const Channels<T, V> in = *reinterpret_cast<const Channels<T, V>*>(in_row + static_cast<long long>(ix) * p.c);
#pragma unroll
        for (int j = 0; j < kRun; ++j) {
          const int s = m - j * S;
          if (s < 0 || s >= K) continue;
#pragma unroll
          for (int v = 0; v < V; ++v) acc[s][v] += d[j][v] * to_float(in.v[v]);
        }
      }
    }
  }
  for (int l = 0; l < lanes; ++l) {
    if (lane == l && active)
#pragma unroll
      for (int s = 0; s < K; ++s)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          float& slot = sums[(within * K + s) * V + v];
          slot = l == 0 ? acc[s][v] : slot + acc[s][v];
        }
    __syncthreads();
  }
  // The slice's sums of its chunk's channels into partial[slice][channel][r][s].
  const long long ckk = static_cast<long long>(p.c) * K * K;
  for (int i = threadIdx.x; i < cg * V * K * K; i += blockDim.x) {
    const int ch = i / (K * K), rs = i % (K * K), tap_r = rs / K, tap_s = rs % K;
    const int slot = ((tap_r * chunk_groups + ch / V) * K + tap_s) * V + ch % V;
    partial[blockIdx.x * ckk + static_cast<long long>(c0 + ch) * K * K + rs] = sums[slot];
  }
}

// dw = the slices' partial sums added in slice order: a block takes 32 consecutive values of dw,
// each of its warps every warps-th slice, and the warps' sums are added in warp order.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    depthwise_filter_sum_kernel(const float* partial, int slices, int count, T* dw) {
  __shared__ float part[kThreads / 32][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int i = blockIdx.x * 32 + lane;
  float sum = 0;
  if (i < count)
    for (int b = warp; b < slices; b += warps) sum += partial[static_cast<long long>(b) * count + i];
  part[warp][lane] = sum;
  __syncthreads();
  if (warp == 0 && i < count) {
    float total = 0;
    for (int k = 0; k < warps; ++k) total += part[k][lane];
    dw[i] = from_float<T>(total);
  }
}

// Calls f with V = the widest power of two of at most 16 / sizeof(T) channels not above `width`.
template <typename T, int V, typename F>
void with_width(int width, F&& f) {
  if constexpr (V == 1) {
    f(std::integral_constant<int, 1>{});
  } else {
    if (width >= V)
      f(std::integral_constant<int, V>{});
    else
      with_width<T, V / 2>(width, f);
  }
}

// Calls f with V = with_channel_vector's width for c, halved until every one of `ptrs` is aligned
// to V elements (a caller's activations might lie at any element offset, as weights do).
template <typename T, typename F>
void with_vector(int c, std::initializer_list<const void*> ptrs, F&& f) {
  int width = 1;
  with_channel_vector<T>(c, [&](auto v) { width = decltype(v)::value; });
  const std::size_t align = gpu::alignment_of(ptrs, 16);
  while (width > 1 && static_cast<std::size_t>(width) * sizeof(T) > align) width /= 2;
  with_width<T, static_cast<int>(16 / sizeof(T))>(width, f);
}

template <typename F>
void with_kernel_size(int k, F&& f) {
  switch (k) {
    case 3:
      f(std::integral_constant<int, 3>{});
      break;
    case 5:
      f(std::integral_constant<int, 5>{});
      break;
    case 7:
      f(std::integral_constant<int, 7>{});
      break;
    default:
      throw Error("depthwise convolution: a " + std::to_string(k) + "x" + std::to_string(k) +
                  " kernel; ours take 3x3, 5x5 or 7x7");
  }
}

template <typename F>
void with_stride(int stride, F&& f) {
  if (stride == 1)
    f(std::integral_constant<int, 1>{});
  else if (stride == 2)
    f(std::integral_constant<int, 2>{});
  else
    throw Error("depthwise convolution: stride " + std::to_string(stride) + "; ours take 1 or 2");
}

void check_shape(const PoolShape& p, const char* what) {
  if (!depthwise_supported(p.k, p.stride))
    throw Error(std::string(what) + ": a " + std::to_string(p.k) + "x" + std::to_string(p.k) + " kernel at stride " +
                std::to_string(p.stride) + "; ours take 3x3, 5x5 or 7x7 at stride 1 or 2");
  if (p.n < 1 || p.c < 1 || p.h < 1 || p.w < 1 || p.oh < 1 || p.ow < 1 || p.stride < 1 || p.pad < 0)
    throw Error(std::string(what) + ": an empty or negative shape");
  // 32-bit positions in the kernels, as cuDNN's tensor descriptors count elements.
  const long long most = std::max(static_cast<long long>(p.h) * p.w, static_cast<long long>(p.oh) * p.ow);
  if (static_cast<long long>(p.n) * most * p.c > INT_MAX)
    throw Error(std::string(what) + ": more than 2^31 - 1 elements in a tensor");
  if (p.oh != (p.h + 2 * p.pad - p.k) / p.stride + 1 || p.ow != (p.w + 2 * p.pad - p.k) / p.stride + 1)
    throw Error(std::string(what) + ": output " + std::to_string(p.oh) + "x" + std::to_string(p.ow) +
                " is not what a " + std::to_string(p.k) + "x" + std::to_string(p.k) + " window of stride " +
                std::to_string(p.stride) + " and padding " + std::to_string(p.pad) + " gives");
}

// A block per kThreads of an image's work along x, chunks along z, and along y as many images as
// make about 8 blocks an SM: each further image a block takes reuses the taps it loaded (NASNet's
// 7x7 layers have fewer outputs an image than taps).
dim3 image_grid(int n, long long per_image, int chunks) {
  const long long x = std::clamp<long long>((per_image + kThreads - 1) / kThreads, 1, 1 << 16);
  const long long y = std::clamp<long long>((8LL * sm_count() + x * chunks - 1) / (x * chunks), 1, std::min(n, 65535));
  return dim3(static_cast<unsigned>(x), static_cast<unsigned>(y), static_cast<unsigned>(chunks));
}

// The most slices of the filter gradient's outputs (the rows of its work buffer).
int filter_slices(const PoolShape& p) {
  const long long positions = static_cast<long long>(p.n) * p.oh * p.ow;
  return static_cast<int>(
      std::clamp<long long>((positions + kPositionsPerSlice - 1) / kPositionsPerSlice, 1, 4LL * sm_count()));
}
}  // namespace

bool depthwise_supported(int k, int stride) { return (k == 3 || k == 5 || k == 7) && (stride == 1 || stride == 2); }

namespace {
// The row kernel over g, taps as they are or flipped, its V from the channels and `ptrs`' alignment.
template <typename T>
void correlate(const void* in, const void* w, void* out, bool flip, bool accumulate, const Correlation& g, int k,
               int stride, cudaStream_t s) {
  with_vector<T>(g.c, {in, out}, [&](auto v) {
    constexpr int V = decltype(v)::value;
    with_kernel_size(k, [&](auto kk) {
      constexpr int K = decltype(kk)::value;
      with_stride(stride, [&](auto ss) {
        constexpr int S = decltype(ss)::value;
        const Chunking ch = chunking(g.c / V, kChunkChannels / V);
        const std::size_t shared = static_cast<std::size_t>(ch.groups) * V * K * K * sizeof(float);
        const long long per_image = static_cast<long long>(g.oh) * ((g.ow + kRun - 1) / kRun) * ch.groups;
        depthwise_rows_kernel<T, V, K, S><<<image_grid(g.n, per_image, ch.chunks), kThreads, shared, s>>>(
            static_cast<const T*>(in), static_cast<const T*>(w), static_cast<T*>(out), flip, accumulate, g, ch.groups);
      });
    });
  });
}
}  // namespace

void depthwise_forward(const void* x, const void* w, void* y, DType t, const PoolShape& p, cudaStream_t s) {
  check_shape(p, "depthwise_forward");
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    correlate<T>(x, w, y, false, false, Correlation{p.n, p.h, p.w, p.c, p.oh, p.ow, p.pad}, p.k, p.stride, s);
  });
  CUDA_CHECK(cudaGetLastError());
}

void depthwise_backward_data(const void* dy, const void* w, void* dx, bool accumulate, DType t, const PoolShape& p,
                             cudaStream_t s) {
  check_shape(p, "depthwise_backward_data");
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    // At stride 1 the data gradient is a forward pass over dy with the taps mirrored.
    if (p.stride == 1) {
      correlate<T>(dy, w, dx, true, accumulate, Correlation{p.n, p.oh, p.ow, p.c, p.h, p.w, p.k - 1 - p.pad}, p.k, 1,
                   s);
      return;
    }
    with_vector<T>(p.c, {dy, dx}, [&](auto v) {
      constexpr int V = decltype(v)::value;
      const Chunking ch = chunking(p.c / V, kChunkChannels / V);
      const std::size_t shared = static_cast<std::size_t>(ch.groups) * V * p.k * p.k * sizeof(float);
      depthwise_data_kernel<T, V>
          <<<image_grid(p.n, static_cast<long long>(p.h) * p.w * ch.groups, ch.chunks), kThreads, shared, s>>>(
              static_cast<const T*>(dy), static_cast<const T*>(w), static_cast<T*>(dx), accumulate, p, ch.groups);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

std::size_t depthwise_filter_work_bytes(const PoolShape& p) {
  return static_cast<std::size_t>(filter_slices(p)) * static_cast<std::size_t>(p.c) * p.k * p.k * sizeof(float);
}

void depthwise_backward_filter(const void* x, const void* dy, void* dw, DType t, const PoolShape& p, void* work,
                               cudaStream_t s) {
  check_shape(p, "depthwise_backward_filter");
  float* partial = static_cast<float*>(work);
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_vector<T>(p.c, {x, dy}, [&](auto v) {
      constexpr int V = decltype(v)::value;
      with_kernel_size(p.k, [&](auto k) {
        constexpr int K = decltype(k)::value;
        // A lane (chunk groups x K threads) fits in a block.
        const Chunking ch = chunking(p.c / V, std::min(kChunkChannels / V, kThreads / K));
        const int slices = std::max(1, std::min(filter_slices(p), 4 * sm_count() / ch.chunks));
        const std::size_t shared = static_cast<std::size_t>(ch.groups) * K * K * V * sizeof(float);
        with_stride(p.stride, [&](auto ss) {
          constexpr int S = decltype(ss)::value;
          depthwise_filter_kernel<T, V, K, S>
              <<<dim3(static_cast<unsigned>(slices), static_cast<unsigned>(ch.chunks)), kThreads, shared, s>>>(
                  static_cast<const T*>(x), static_cast<const T*>(dy), partial, p, ch.groups);
        });
        CUDA_CHECK(cudaGetLastError());
        const int count = p.c * K * K;
        depthwise_filter_sum_kernel<T>
            <<<static_cast<unsigned>((count + 31) / 32), kThreads, 0, s>>>(partial, slices, count, static_cast<T*>(dw));
      });
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
