// Call 4's micro-benchmark: batch norm's passes as train_kernels.cu had them at 525d3a9 ("base"),
// against variants, on ResNet-50's bf16 shapes at batch 256, on one GPU. Kept as the record of what
// ran; the kernels that came of it are in workloads/train/train_kernels.cu.
//   nvcc -O3 -std=c++17 -arch=sm_90 -o bnbench bnbench.cu && ./bnbench
// Call 8 ran `./bnbench reduce`: only the two reductions, each with its grid capped at 2048 blocks
// (as at 525d3a9) and at 8, 4 and 2 blocks per SM.
// Each figure: the median of 7 timings of 10 back-to-back launches (CUDA events), after 3 warm-up
// launches; GB/s counts the bytes each pass must read and write. Inputs are constant bytes.
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <string>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
using T = __nv_bfloat16;
constexpr int V = 8, kThreads = 256;
template <int N> struct alignas(16) Vec { T v[N]; };
__device__ __forceinline__ float f(T v) { return __bfloat162float(v); }

// ---- reduce, as in the project
template <int kKind>
__global__ void reduce_base(const T* x, const uint8_t* mask, const T* dy, long long rows, int c, const float* mean, double* out) {
  __shared__ float s0[kThreads * V], s1[kThreads * V];
  const int gx = blockDim.x, width = gx * V;
  const int ch = (blockIdx.x * gx + threadIdx.x) * V;
  float a0[V] = {}, a1[V] = {};
  if (ch < c) {
    float m[V];
    for (int v = 0; v < V; ++v) m[v] = kKind == 1 ? mean[ch + v] : 0.0f;
    for (long long r = blockIdx.y * (long long)blockDim.y + threadIdx.y; r < rows; r += (long long)gridDim.y * blockDim.y) {
      const long long i = r * c + ch;
      const Vec<V> xv = *reinterpret_cast<const Vec<V>*>(x + i);
      if (kKind == 0) { for (int v = 0; v < V; ++v) { float q = f(xv.v[v]); a0[v] += q; a1[v] += q * q; } }
      else {
        const Vec<V> gv = *reinterpret_cast<const Vec<V>*>(dy + i);
        const unsigned pass = mask[i / V];
        for (int v = 0; v < V; ++v) { float g = (pass >> v) & 1u ? f(gv.v[v]) : 0.f; a0[v] += g; a1[v] += g * (f(xv.v[v]) - m[v]); }
      }
    }
  }
  const int at = threadIdx.y * width + threadIdx.x * V;
  for (int v = 0; v < V; ++v) s0[at + v] = a0[v], s1[at + v] = a1[v];
  __syncthreads();
  const int t = threadIdx.y * gx + threadIdx.x, cht = blockIdx.x * width + t;
  if (t < width && cht < c) {
    double t0 = 0, t1 = 0;
    for (int k = 0; k < (int)blockDim.y; ++k) t0 += s0[k * width + t], t1 += s1[k * width + t];
    atomicAdd(&out[cht], t0); atomicAdd(&out[c + cht], t1);
  }
}
// ---- reduce, U rows' loads issued before any is used
template <int kKind, int U>
__global__ void reduce_unroll(const T* x, const uint8_t* mask, const T* dy, long long rows, int c, const float* mean, double* out) {
  __shared__ float s0[kThreads * V], s1[kThreads * V];
  const int gx = blockDim.x, width = gx * V;
  const int ch = (blockIdx.x * gx + threadIdx.x) * V;
  float a0[V] = {}, a1[V] = {};
  if (ch < c) {
    float m[V];
    for (int v = 0; v < V; ++v) m[v] = kKind == 1 ? mean[ch + v] : 0.0f;
    const long long step = (long long)gridDim.y * blockDim.y;
    long long r = blockIdx.y * (long long)blockDim.y + threadIdx.y;
    for (; r + (U - 1) * step < rows; r += U * step) {
      Vec<V> xv[U], gv[U]; unsigned pass[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const long long i = (r + u * step) * c + ch;
        xv[u] = *reinterpret_cast<const Vec<V>*>(x + i);
        if (kKind == 1) { gv[u] = *reinterpret_cast<const Vec<V>*>(dy + i); pass[u] = mask[i / V]; }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (kKind == 0) { for (int v = 0; v < V; ++v) { float q = f(xv[u].v[v]); a0[v] += q; a1[v] += q * q; } }
        else for (int v = 0; v < V; ++v) { float g = (pass[u] >> v) & 1u ? f(gv[u].v[v]) : 0.f; a0[v] += g; a1[v] += g * (f(xv[u].v[v]) - m[v]); }
      }
    }
    for (; r < rows; r += step) {
      const long long i = r * c + ch;
      const Vec<V> xv = *reinterpret_cast<const Vec<V>*>(x + i);
      if (kKind == 0) { for (int v = 0; v < V; ++v) { float q = f(xv.v[v]); a0[v] += q; a1[v] += q * q; } }
      else { const Vec<V> gv = *reinterpret_cast<const Vec<V>*>(dy + i); const unsigned pass = mask[i / V];
        for (int v = 0; v < V; ++v) { float g = (pass >> v) & 1u ? f(gv.v[v]) : 0.f; a0[v] += g; a1[v] += g * (f(xv.v[v]) - m[v]); } }
    }
  }
  const int at = threadIdx.y * width + threadIdx.x * V;
  for (int v = 0; v < V; ++v) s0[at + v] = a0[v], s1[at + v] = a1[v];
  __syncthreads();
  const int t = threadIdx.y * gx + threadIdx.x, cht = blockIdx.x * width + t;
  if (t < width && cht < c) {
    double t0 = 0, t1 = 0;
    for (int k = 0; k < (int)blockDim.y; ++k) t0 += s0[k * width + t], t1 += s1[k * width + t];
    atomicAdd(&out[cht], t0); atomicAdd(&out[c + cht], t1);
  }
}
// ---- forward apply, as in the project (z, relu, mask)
__global__ void apply_base(const T* x, const T* z, T* y, uint8_t* mask, unsigned vectors, int c, const float* coef) {
  const unsigned groups = c / V;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < vectors; i += gridDim.x * blockDim.x) {
    const int ch = (int)(i % groups) * V;
    const Vec<V> xv = reinterpret_cast<const Vec<V>*>(x)[i];
    Vec<V> zv = reinterpret_cast<const Vec<V>*>(z)[i], o;
    for (int v = 0; v < V; ++v) { float q = f(xv.v[v]) * coef[ch + v] + coef[c + ch + v] + f(zv.v[v]); o.v[v] = __float2bfloat16_rn(fmaxf(q, 0.f)); }
    reinterpret_cast<Vec<V>*>(y)[i] = o;
    unsigned bits = 0; for (int v = 0; v < V; ++v) bits |= (f(o.v[v]) > 0.f ? 1u : 0u) << v;
    mask[i] = (uint8_t)bits;
  }
}
// ---- forward apply, a thread's channels fixed (stride a multiple of the groups): coefficients in registers, U vectors per iteration
template <int U>
__global__ void apply_fixed(const T* x, const T* z, T* y, uint8_t* mask, unsigned vectors, int c, const float* coef) {
  const unsigned groups = c / V;
  const unsigned first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;  // stride % groups == 0
  const int ch = (int)(first % groups) * V;
  float a[V], b[V];
  for (int v = 0; v < V; ++v) a[v] = coef[ch + v], b[v] = coef[c + ch + v];
  unsigned i = first;
  for (; i + (U - 1) * stride < vectors; i += U * stride) {
    Vec<V> xv[U], zv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { xv[u] = reinterpret_cast<const Vec<V>*>(x)[i + u * stride]; zv[u] = reinterpret_cast<const Vec<V>*>(z)[i + u * stride]; }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      Vec<V> o; unsigned bits = 0;
      for (int v = 0; v < V; ++v) { float q = fmaxf(f(xv[u].v[v]) * a[v] + b[v] + f(zv[u].v[v]), 0.f); o.v[v] = __float2bfloat16_rn(q); bits |= (f(o.v[v]) > 0.f ? 1u : 0u) << v; }
      reinterpret_cast<Vec<V>*>(y)[i + u * stride] = o; mask[i + u * stride] = (uint8_t)bits;
    }
  }
  for (; i < vectors; i += stride) {
    const Vec<V> xv = reinterpret_cast<const Vec<V>*>(x)[i], zv = reinterpret_cast<const Vec<V>*>(z)[i];
    Vec<V> o; unsigned bits = 0;
    for (int v = 0; v < V; ++v) { float q = fmaxf(f(xv.v[v]) * a[v] + b[v] + f(zv.v[v]), 0.f); o.v[v] = __float2bfloat16_rn(q); bits |= (f(o.v[v]) > 0.f ? 1u : 0u) << v; }
    reinterpret_cast<Vec<V>*>(y)[i] = o; mask[i] = (uint8_t)bits;
  }
}
// ---- backward apply, as in the project (mask, relu, dz written, no accumulation)
__global__ void bapply_base(const T* x, const uint8_t* mask, const T* dy, T* dx, T* dz, unsigned vectors, int c, const float* coef) {
  const unsigned groups = c / V;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < vectors; i += gridDim.x * blockDim.x) {
    const int ch = (int)(i % groups) * V;
    const Vec<V> xv = reinterpret_cast<const Vec<V>*>(x)[i], gv = reinterpret_cast<const Vec<V>*>(dy)[i];
    Vec<V> dzv, dxv; const unsigned pass = mask[i];
    for (int v = 0; v < V; ++v) { float g = (pass >> v) & 1u ? f(gv.v[v]) : 0.f; dzv.v[v] = __float2bfloat16_rn(g);
      dxv.v[v] = __float2bfloat16_rn(coef[ch + v] * g + coef[c + ch + v] * f(xv.v[v]) + coef[2 * c + ch + v]); }
    reinterpret_cast<Vec<V>*>(dz)[i] = dzv; reinterpret_cast<Vec<V>*>(dx)[i] = dxv;
  }
}
template <int U>
__global__ void bapply_fixed(const T* x, const uint8_t* mask, const T* dy, T* dx, T* dz, unsigned vectors, int c, const float* coef) {
  const unsigned groups = c / V;
  const unsigned first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  const int ch = (int)(first % groups) * V;
  float A[V], B[V], D[V];
  for (int v = 0; v < V; ++v) A[v] = coef[ch + v], B[v] = coef[c + ch + v], D[v] = coef[2 * c + ch + v];
  unsigned i = first;
  auto one = [&](const Vec<V>& xv, const Vec<V>& gv, unsigned pass, unsigned k) {
    Vec<V> dzv, dxv;
    for (int v = 0; v < V; ++v) { float g = (pass >> v) & 1u ? f(gv.v[v]) : 0.f; dzv.v[v] = __float2bfloat16_rn(g); dxv.v[v] = __float2bfloat16_rn(A[v] * g + B[v] * f(xv.v[v]) + D[v]); }
    reinterpret_cast<Vec<V>*>(dz)[k] = dzv; reinterpret_cast<Vec<V>*>(dx)[k] = dxv;
  };
  for (; i + (U - 1) * stride < vectors; i += U * stride) {
    Vec<V> xv[U], gv[U]; unsigned pass[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { unsigned k = i + u * stride; xv[u] = reinterpret_cast<const Vec<V>*>(x)[k]; gv[u] = reinterpret_cast<const Vec<V>*>(dy)[k]; pass[u] = mask[k]; }
#pragma unroll
    for (int u = 0; u < U; ++u) one(xv[u], gv[u], pass[u], i + u * stride);
  }
  for (; i < vectors; i += stride) one(reinterpret_cast<const Vec<V>*>(x)[i], reinterpret_cast<const Vec<V>*>(dy)[i], mask[i], i);
}
__global__ void copy_kernel(const uint4* a, uint4* b, size_t n) { for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i]; }

dim3 rblock(int c) { int gx = std::min(32, c / V); return dim3(gx, kThreads / gx); }
dim3 rgrid(long long rows, int c, int cap) { dim3 b = rblock(c); long long width = (long long)b.x * V; unsigned gx = (c + width - 1) / width;
  long long gy = std::clamp<long long>((rows + 8 * b.y - 1) / (8 * b.y), 1, std::max<long long>(1, cap / gx)); return dim3(gx, (unsigned)gy); }

template <typename F> float timeit(F&& fn) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) fn();
  std::vector<float> ms;
  for (int t = 0; t < 7; ++t) { cudaEventRecord(a); for (int i = 0; i < 10; ++i) fn(); cudaEventRecord(b); cudaEventSynchronize(b); float m; cudaEventElapsedTime(&m, a, b); ms.push_back(m / 10); }
  std::sort(ms.begin(), ms.end()); CK(cudaGetLastError()); return ms[3];
}

int main(int argc, char** argv) {
  const bool reduce_only = argc > 1 && std::string(argv[1]) == "reduce";
  int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const long long maxe = 802816LL * 256;
  T *x, *z, *y, *dy, *dx, *dz; uint8_t* mask; double* sums; float *coef, *mean;
  CK(cudaMalloc(&x, maxe * 2)); CK(cudaMalloc(&z, maxe * 2)); CK(cudaMalloc(&y, maxe * 2)); CK(cudaMalloc(&dy, maxe * 2));
  CK(cudaMalloc(&dx, maxe * 2)); CK(cudaMalloc(&dz, maxe * 2)); CK(cudaMalloc(&mask, maxe / 8));
  CK(cudaMalloc(&sums, 2 * 2048 * 8)); CK(cudaMalloc(&coef, 3 * 2048 * 4)); CK(cudaMalloc(&mean, 2048 * 4));
  CK(cudaMemset(x, 0x3c, maxe * 2)); CK(cudaMemset(z, 0x3c, maxe * 2)); CK(cudaMemset(dy, 0x3c, maxe * 2)); CK(cudaMemset(mask, 0x5a, maxe / 8));
  CK(cudaMemset(coef, 0, 3 * 2048 * 4)); CK(cudaMemset(mean, 0, 2048 * 4));
  { size_t n = maxe * 2 / 16; float ms = timeit([&] { copy_kernel<<<sms * 8, 256>>>((const uint4*)x, (uint4*)y, n); });
    printf("copy 411MB: %.3f ms, %.0f GB/s (read+write)\n", ms, 2.0 * maxe * 2 / ms / 1e6); }
  struct Shape { const char* name; long long rows; int c; } shapes[] = {{"56x56x256", 802816, 256}, {"56x56x64", 802816, 64}, {"28x28x512", 200704, 512}, {"14x14x1024", 50176, 1024}, {"7x7x2048", 12544, 2048}};
  for (auto& s : shapes) {
    const long long n = s.rows * s.c; const double mb = n * 2 / 1e6; const unsigned vecs = n / V;
    auto gbs = [&](double bytes_mb, float ms) { return bytes_mb / ms; };  // MB/ms = GB/s
    if (reduce_only) {
      for (int cap : {2048, sms * 8, sms * 4, sms * 2}) {
        float r0 = timeit([&] { reduce_base<0><<<rgrid(s.rows, s.c, cap), rblock(s.c)>>>(x, nullptr, nullptr, s.rows, s.c, mean, sums); });
        float r1 = timeit([&] { reduce_base<1><<<rgrid(s.rows, s.c, cap), rblock(s.c)>>>(x, mask, dy, s.rows, s.c, mean, sums); });
        dim3 g = rgrid(s.rows, s.c, cap);
        printf("%s (%.0f MB) cap %d (grid %ux%u): statistics %.4f ms (%.0f GB/s) | backward sums %.4f ms (%.0f GB/s)\n", s.name, mb, cap, g.x, g.y,
               r0, mb / r0, r1, (2 * mb + mb / 16) / r1);
      }
      continue;
    }
    float r0 = timeit([&] { reduce_base<0><<<rgrid(s.rows, s.c, 2048), rblock(s.c)>>>(x, nullptr, nullptr, s.rows, s.c, mean, sums); });
    float r0u = timeit([&] { reduce_unroll<0, 4><<<rgrid(s.rows, s.c, 2048), rblock(s.c)>>>(x, nullptr, nullptr, s.rows, s.c, mean, sums); });
    float r0u8 = timeit([&] { reduce_unroll<0, 4><<<rgrid(s.rows, s.c, 4096), rblock(s.c)>>>(x, nullptr, nullptr, s.rows, s.c, mean, sums); });
    float r1 = timeit([&] { reduce_base<1><<<rgrid(s.rows, s.c, 2048), rblock(s.c)>>>(x, mask, dy, s.rows, s.c, mean, sums); });
    float r1u = timeit([&] { reduce_unroll<1, 4><<<rgrid(s.rows, s.c, 2048), rblock(s.c)>>>(x, mask, dy, s.rows, s.c, mean, sums); });
    float r1u2 = timeit([&] { reduce_unroll<1, 2><<<rgrid(s.rows, s.c, 2048), rblock(s.c)>>>(x, mask, dy, s.rows, s.c, mean, sums); });
    const unsigned ab = std::min<long long>((vecs + 255) / 256, 132LL * 16);
    const unsigned groups = s.c / V; const unsigned fb = std::max(1u, std::min<unsigned>((vecs + 255) / 256, sms * 8));  // 256 % groups == 0 for these shapes
    float a0 = timeit([&] { apply_base<<<ab, 256>>>(x, z, y, mask, vecs, s.c, coef); });
    float a1 = timeit([&] { apply_fixed<1><<<fb, 256>>>(x, z, y, mask, vecs, s.c, coef); });
    float a2 = timeit([&] { apply_fixed<2><<<fb, 256>>>(x, z, y, mask, vecs, s.c, coef); });
    float b0 = timeit([&] { bapply_base<<<ab, 256>>>(x, mask, dy, dx, dz, vecs, s.c, coef); });
    float b1 = timeit([&] { bapply_fixed<1><<<fb, 256>>>(x, mask, dy, dx, dz, vecs, s.c, coef); });
    float b2 = timeit([&] { bapply_fixed<2><<<fb, 256>>>(x, mask, dy, dx, dz, vecs, s.c, coef); });
    (void)groups;
    printf("%s (%.0f MB): reduce0 base %.3f (%.0f GB/s) unroll4 %.3f (%.0f) unroll4-4096 %.3f | reduce1 base %.3f (%.0f) unroll4 %.3f (%.0f) unroll2 %.3f\n",
           s.name, mb, r0, gbs(mb, r0), r0u, gbs(mb, r0u), r0u8, r1, gbs(2 * mb + mb / 16, r1), r1u, gbs(2 * mb + mb / 16, r1u), r1u2);
    printf("   apply base %.3f (%.0f GB/s) fixed1 %.3f (%.0f) fixed2 %.3f (%.0f) | bapply base %.3f (%.0f) fixed1 %.3f (%.0f) fixed2 %.3f (%.0f)\n",
           a0, gbs(3 * mb + mb / 16, a0), a1, gbs(3 * mb + mb / 16, a1), a2, gbs(3 * mb + mb / 16, a2), b0, gbs(4 * mb + mb / 16, b0), b1, gbs(4 * mb + mb / 16, b1), b2, gbs(4 * mb + mb / 16, b2));
  }
  return 0;
}
