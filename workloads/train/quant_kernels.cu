#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "workloads/train/kernel_common.cuh"
#include "workloads/train/quant_kernels.cuh"

namespace scalebench::train {

namespace {
__device__ __forceinline__ std::uint8_t encode(float v, QuantFormat f) {
  if (f == QuantFormat::kE4M3) return __nv_fp8_e4m3(v).__x;  // satfinite, to nearest even
  if (isnan(v)) return 0;
  return static_cast<std::uint8_t>(static_cast<std::int8_t>(fminf(fmaxf(rintf(v), -127.f), 127.f)));
}

__device__ __forceinline__ float decode(std::uint8_t q, QuantFormat f) {
  if (f == QuantFormat::kE4M3) {
    __nv_fp8_e4m3 e;
    e.__x = q;
    return static_cast<float>(e);
  }
  return static_cast<float>(static_cast<std::int8_t>(q));
}

// Magnitudes are >= 0, so their float bits order as integers do.
template <typename T>
__global__ void abs_max_kernel(const T* x, long long n, float* amax) {
  float m = 0.f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    m = fmaxf(m, fabsf(to_float(x[i])));
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) atomicMax(reinterpret_cast<unsigned*>(amax), __float_as_uint(m));
}

// V bytes of an 8-bit tensor, moved as one load or store.
template <int V>
struct alignas(V) Bytes {
  std::uint8_t v[V];
};

// Channels as they are (c_in == c_out): an elementwise map, V elements a thread with one load and
// one store. Row and channel indices cost a 64-bit division each, most of the time of the padding
// kernel below.
template <typename T, int V>
__global__ void quantize_kernel(const T* x, std::uint8_t* q, long long vectors, float inv, QuantFormat f) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < vectors;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Channels<T, V> in = reinterpret_cast<const Channels<T, V>*>(x)[i];
    Bytes<V> out;
#pragma unroll
    for (int k = 0; k < V; ++k) out.v[k] = encode(to_float(in.v[k]) * inv, f);
    reinterpret_cast<Bytes<V>*>(q)[i] = out;
  }
}

template <typename T>
__global__ void quantize_rows_kernel(const T* x, int c_in, std::uint8_t* q, int c_out, long long rows, float inv,
                                     QuantFormat f) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < rows * c_out;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / c_out;
    const int c = static_cast<int>(i % c_out);
    q[i] = c < c_in ? encode(to_float(x[r * c_in + c]) * inv, f) : 0;
  }
}

// V channels of one position a thread: `groups` = c / V.
template <typename T, int V>
__global__ void bias_act_quantize_kernel(const T* x, const float* bias, bool relu, std::uint8_t* q, long long vectors,
                                         int groups, float inv, QuantFormat f) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < vectors;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int g = static_cast<int>(i % groups);
    const Channels<T, V> in = reinterpret_cast<const Channels<T, V>*>(x)[i];
    Bytes<V> out;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      float v = to_float(in.v[k]) + bias[g * V + k];
      if (relu) v = fmaxf(v, 0.f);
      out.v[k] = encode(v * inv, f);
    }
    reinterpret_cast<Bytes<V>*>(q)[i] = out;
  }
}

__global__ void dequantize_half_kernel(const std::uint8_t* q, QuantFormat f, float scale, __half* y, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = __float2half(decode(q[i], f) * scale);
}

// Grid rows are images; a thread takes V channels of one output of its image (one load of V bytes
// per window position, 32-bit index arithmetic), as maxpool_forward does.
template <int V>
__global__ void maxpool_bytes_kernel(const std::uint8_t* x, std::uint8_t* y, PoolShape p) {
  const int groups = p.c / V, per_image = p.oh * p.ow * groups;
  for (long long img = blockIdx.y; img < p.n; img += gridDim.y)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
      const int g = i % groups, pos = i / groups, ox = pos % p.ow, oy = pos / p.ow;
      Bytes<V> best;
#pragma unroll
      for (int k = 0; k < V; ++k) best.v[k] = 0;  // the smallest value >= 0 in both formats
      for (int ky = 0; ky < p.k; ++ky) {
        const int iy = oy * p.stride - p.pad + ky;
        if (iy < 0 || iy >= p.h) continue;
        for (int kx = 0; kx < p.k; ++kx) {
          const int ix = ox * p.stride - p.pad + kx;
          if (ix < 0 || ix >= p.w) continue;
          const Bytes<V> in = *reinterpret_cast<const Bytes<V>*>(x + ((img * p.h + iy) * p.w + ix) * p.c + g * V);
          // A set sign bit (E4M3's -0 after a ReLU, say) counts as 0: +0 is written instead.
#pragma unroll
          for (int k = 0; k < V; ++k) {
            const std::uint8_t key = in.v[k] & 0x80 ? 0 : in.v[k];
            best.v[k] = key > best.v[k] ? key : best.v[k];
          }
        }
      }
      *reinterpret_cast<Bytes<V>*>(y + ((img * p.oh + oy) * p.ow + ox) * p.c + g * V) = best;
    }
}

// The most bytes in 16 or less, a power of two, that divides the channel count.
template <typename F>
void with_byte_vector(int c, F&& f) {
  if (c % 16 == 0)
    f(std::integral_constant<int, 16>{});
  else if (c % 8 == 0)
    f(std::integral_constant<int, 8>{});
  else if (c % 4 == 0)
    f(std::integral_constant<int, 4>{});
  else
    f(std::integral_constant<int, 1>{});
}

// An element of an 8-bit tensor as its real value over its scale, and of an unquantized one.
struct ReadBytes {
  const std::uint8_t* q;
  QuantFormat f;
  __device__ float operator()(long long i) const { return decode(q[i], f); }
};
template <typename T>
struct ReadWide {
  const T* x;
  __device__ float operator()(long long i) const { return to_float(x[i]); }
};

// One block per image, a thread per channel (strided): the mean over hw of read(.) x scale.
template <typename Read>
__global__ void global_avgpool_kernel(Read read, float scale, float* y, int hw, int c) {
  const long long img = blockIdx.x;
  for (int ch = threadIdx.x; ch < c; ch += blockDim.x) {
    float sum = 0.f;
    for (int p = 0; p < hw; ++p) sum += read((img * hw + p) * c + ch);
    y[img * c + ch] = sum * scale / static_cast<float>(hw);
  }
}

__global__ void add_bias_rows_kernel(float* y, const float* b, int n, int out) {
  const long long total = static_cast<long long>(n) * out;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] += b[i % out];
}
}  // namespace

void abs_max(const void* x, DType t, long long n, float* amax, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    abs_max_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(static_cast<const T*>(x), n, amax);
  });
  CUDA_CHECK(cudaGetLastError());
}

void quantize_rows(const void* x, DType t, int c_in, std::uint8_t* q, int c_out, long long rows, float scale,
                   QuantFormat f, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (c_in == c_out) {
      with_channel_vector<T>(c_in, [&](auto v) {
        constexpr int V = decltype(v)::value;
        const long long vectors = rows * c_in / V;
        quantize_kernel<T, V>
            <<<blocks_for(vectors), kThreads, 0, s>>>(static_cast<const T*>(x), q, vectors, 1.0f / scale, f);
      });
    } else {
      quantize_rows_kernel<T><<<blocks_for(rows * c_out), kThreads, 0, s>>>(static_cast<const T*>(x), c_in, q, c_out,
                                                                            rows, 1.0f / scale, f);
    }
  });
  CUDA_CHECK(cudaGetLastError());
}

void bias_act_quantize(const void* x, DType t, const float* bias, bool relu, std::uint8_t* q, long long rows, int c,
                       float scale, QuantFormat f, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_channel_vector<T>(c, [&](auto v) {
      constexpr int V = decltype(v)::value;
      const long long vectors = rows * c / V;
      bias_act_quantize_kernel<T, V><<<blocks_for(vectors), kThreads, 0, s>>>(static_cast<const T*>(x), bias, relu, q,
                                                                              vectors, c / V, 1.0f / scale, f);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void dequantize_half(const std::uint8_t* q, QuantFormat f, float scale, void* y, long long n, cudaStream_t s) {
  dequantize_half_kernel<<<blocks_for(n), kThreads, 0, s>>>(q, f, scale, static_cast<__half*>(y), n);
  CUDA_CHECK(cudaGetLastError());
}

void maxpool_bytes(const std::uint8_t* x, std::uint8_t* y, const PoolShape& p, cudaStream_t s) {
  with_byte_vector(p.c, [&](auto v) {
    constexpr int V = decltype(v)::value;
    maxpool_bytes_kernel<V>
        <<<image_grid(p.n, static_cast<long long>(p.oh) * p.ow * p.c / V), kThreads, 0, s>>>(x, y, p);
  });
  CUDA_CHECK(cudaGetLastError());
}

void global_avgpool_dequant(const std::uint8_t* q, QuantFormat f, float scale, float* y, int n, int hw, int c,
                            cudaStream_t s) {
  global_avgpool_kernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(ReadBytes{q, f}, scale, y, hw, c);
  CUDA_CHECK(cudaGetLastError());
}

void global_avgpool_wide(const void* x, DType t, float* y, int n, int hw, int c, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    global_avgpool_kernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(ReadWide<T>{static_cast<const T*>(x)}, 1.0f, y,
                                                                        hw, c);
  });
  CUDA_CHECK(cudaGetLastError());
}

void add_bias_rows(float* y, const float* b, int n, int out, cudaStream_t s) {
  add_bias_rows_kernel<<<blocks_for(static_cast<long long>(n) * out), kThreads, 0, s>>>(y, b, n, out);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
