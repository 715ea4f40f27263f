#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/kernel_common.cuh"
#include "workloads/train/train_kernels.cuh"

// Global average pooling, windowed average pooling, max pooling and subsampling, forward and
// backward.
namespace scalebench::train {

namespace {
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

// The divisor of output (oy, ox)'s average, as PyTorch's avg_pool2d takes it: the window clipped
// to the padded input (count_pad), or to the input itself.
__device__ __forceinline__ float avg_divisor(const PoolShape& p, int oy, int ox, bool count_pad) {
  int y0 = oy * p.stride - p.pad, x0 = ox * p.stride - p.pad;
  int y1 = min(y0 + p.k, p.h + p.pad), x1 = min(x0 + p.k, p.w + p.pad);
  if (!count_pad) y0 = max(y0, 0), x0 = max(x0, 0), y1 = min(y1, p.h), x1 = min(x1, p.w);
  return static_cast<float>((y1 - y0) * (x1 - x0));
}

// As max pooling's: grid rows are images, a thread takes V channels of one output.
template <typename T, int V>
__global__ void avgpool2d_forward_kernel(const T* x, T* y, PoolShape p, bool count_pad) {
  const int groups = p.c / V, per_image = p.oh * p.ow * groups;
  for (long long img = blockIdx.y; img < p.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int g = i % groups, pos = i / groups, ox = pos % p.ow, oy = pos / p.ow;
      const int y0 = oy * p.stride - p.pad, x0 = ox * p.stride - p.pad;
      float sum[V] = {};
      for (int iy = max(y0, 0); iy < min(y0 + p.k, p.h); ++iy)
        for (int ix = max(x0, 0); ix < min(x0 + p.k, p.w); ++ix) {
          const Channels<T, V> in =
              *reinterpret_cast<const Channels<T, V>*>(x + ((img * p.h + iy) * p.w + ix) * p.c + g * V);
          for (int v = 0; v < V; ++v) sum[v] += to_float(in.v[v]);
        }
      const float inv = 1.0f / avg_divisor(p, oy, ox, count_pad);
      Channels<T, V> out;
      for (int v = 0; v < V; ++v) out.v[v] = from_float<T>(sum[v] * inv);
      *reinterpret_cast<Channels<T, V>*>(y + ((img * p.oh + oy) * p.ow + ox) * p.c + g * V) = out;
    }
}

// A thread per V channels of one input gathers dy / divisor from the outputs whose window holds
// it, so no two threads write one dx.
template <typename T, int V>
__global__ void avgpool2d_backward_kernel(const T* dy, T* dx, bool accumulate, PoolShape p, bool count_pad) {
  const int groups = p.c / V, per_image = p.h * p.w * groups;
  for (long long img = blockIdx.y; img < p.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int g = i % groups, pos = i / groups, ix = pos % p.w, iy = pos / p.w;
      const int ylo = iy + p.pad - p.k + 1, xlo = ix + p.pad - p.k + 1;
      const int oy0 = ylo <= 0 ? 0 : (ylo + p.stride - 1) / p.stride, oy1 = min(p.oh - 1, (iy + p.pad) / p.stride);
      const int ox0 = xlo <= 0 ? 0 : (xlo + p.stride - 1) / p.stride, ox1 = min(p.ow - 1, (ix + p.pad) / p.stride);
      float sum[V] = {};
      for (int oy = oy0; oy <= oy1; ++oy)
        for (int ox = ox0; ox <= ox1; ++ox) {
          const float inv = 1.0f / avg_divisor(p, oy, ox, count_pad);
          const Channels<T, V> d =
              *reinterpret_cast<const Channels<T, V>*>(dy + ((img * p.oh + oy) * p.ow + ox) * p.c + g * V);
          for (int v = 0; v < V; ++v) sum[v] += to_float(d.v[v]) * inv;
        }
      Channels<T, V>* out = reinterpret_cast<Channels<T, V>*>(dx + ((img * p.h + iy) * p.w + ix) * p.c + g * V);
      Channels<T, V> r;
      if (accumulate) r = *out;
      for (int v = 0; v < V; ++v) r.v[v] = from_float<T>(accumulate ? to_float(r.v[v]) + sum[v] : sum[v]);
      *out = r;
    }
}

// As max pooling's: grid rows are images, a thread takes V channels of one output.
template <typename T, int V>
__global__ void subsample_forward_kernel(const T* x, T* y, PoolShape p, int offset) {
  const int groups = p.c / V, per_image = p.oh * p.ow * groups;
  for (long long img = blockIdx.y; img < p.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int g = i % groups, pos = i / groups, ox = pos % p.ow, oy = pos / p.ow;
      const int iy = oy * p.stride + offset, ix = ox * p.stride + offset;
      Channels<T, V> out;
      if (iy < p.h && ix < p.w)
        out = *reinterpret_cast<const Channels<T, V>*>(x + ((img * p.h + iy) * p.w + ix) * p.c + g * V);
      else
        for (int v = 0; v < V; ++v) out.v[v] = from_float<T>(0.0f);
      *reinterpret_cast<Channels<T, V>*>(y + ((img * p.oh + oy) * p.ow + ox) * p.c + g * V) = out;
    }
}

// A thread per V channels of one input: dy where that input was taken, else 0 (or left as it is
// when accumulating).
template <typename T, int V>
__global__ void subsample_backward_kernel(const T* dy, T* dx, bool accumulate, PoolShape p, int offset) {
  const int groups = p.c / V, per_image = p.h * p.w * groups;
  for (long long img = blockIdx.y; img < p.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int g = i % groups, pos = i / groups, ix = pos % p.w, iy = pos / p.w;
      const int ry = iy - offset, rx = ix - offset;
      const bool taken = ry >= 0 && rx >= 0 && ry % p.stride == 0 && rx % p.stride == 0 && ry / p.stride < p.oh &&
                         rx / p.stride < p.ow;
      if (accumulate && !taken) continue;
      Channels<T, V>* out = reinterpret_cast<Channels<T, V>*>(dx + ((img * p.h + iy) * p.w + ix) * p.c + g * V);
      Channels<T, V> r;
      if (!taken) {
        for (int v = 0; v < V; ++v) r.v[v] = from_float<T>(0.0f);
      } else {
        r = *reinterpret_cast<const Channels<T, V>*>(dy + ((img * p.oh + ry / p.stride) * p.ow + rx / p.stride) * p.c +
                                                     g * V);
        if (accumulate) {
          const Channels<T, V> old = *out;
          for (int v = 0; v < V; ++v) r.v[v] = from_float<T>(to_float(old.v[v]) + to_float(r.v[v]));
        }
      }
      *out = r;
    }
}

}  // namespace

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

void avgpool2d_forward(const void* x, void* y, DType t, const PoolShape& p, bool count_pad, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(p.c, [&](auto v) {
      avgpool2d_forward_kernel<T, decltype(v)::value>
          <<<image_grid(p.n, static_cast<long long>(p.oh) * p.ow * p.c / v), kThreads, 0, s>>>(
              static_cast<const T*>(x), static_cast<T*>(y), p, count_pad);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void avgpool2d_backward(const void* dy, void* dx, bool accumulate, DType t, const PoolShape& p, bool count_pad,
                        cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(p.c, [&](auto v) {
      avgpool2d_backward_kernel<T, decltype(v)::value>
          <<<image_grid(p.n, static_cast<long long>(p.h) * p.w * p.c / v), kThreads, 0, s>>>(
              static_cast<const T*>(dy), static_cast<T*>(dx), accumulate, p, count_pad);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void subsample_forward(const void* x, void* y, DType t, const PoolShape& p, int offset, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(p.c, [&](auto v) {
      subsample_forward_kernel<T, decltype(v)::value>
          <<<image_grid(p.n, static_cast<long long>(p.oh) * p.ow * p.c / v), kThreads, 0, s>>>(
              static_cast<const T*>(x), static_cast<T*>(y), p, offset);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void subsample_backward(const void* dy, void* dx, bool accumulate, DType t, const PoolShape& p, int offset,
                        cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(p.c, [&](auto v) {
      subsample_backward_kernel<T, decltype(v)::value>
          <<<image_grid(p.n, static_cast<long long>(p.h) * p.w * p.c / v), kThreads, 0, s>>>(
              static_cast<const T*>(dy), static_cast<T*>(dx), accumulate, p, offset);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
