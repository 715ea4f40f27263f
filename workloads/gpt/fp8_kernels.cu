// FP8 casts with their amax, the delayed scales' update, GELU and the bias gradient for the FP8
// GEMMs (fp8_kernels.cuh).
#include <cuda_fp8.h>

#include <string>

#include "workloads/gpt/fp8_kernels.cuh"
#include "workloads/gpt/fp8_scaling.hpp"
#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

__device__ __forceinline__ unsigned char to_fp8(float v, Fp8Format f) {
  return __nv_cvt_float_to_fp8(v, __NV_SATFINITE, f == Fp8Format::kE4M3 ? __NV_E4M3 : __NV_E5M2);
}

// d gelu(x) / dx, of the tanh form.
__device__ __forceinline__ float gelu_grad(float x) {
  const float t = tanhf(gelu_inner(x));
  return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * kSqrt2OverPi * (1.f + 3.f * 0.044715f * x * x);
}

// The casts' and transposes' tiles: 64 x 64, 256 threads, 8 elements a thread's access.
constexpr int kCastTile = 64, kCastThreads = 256, kVec = 8;

// The tile of input rows r0.., columns c0.. into out [cols, rows]: output row c0 + i takes its
// bytes r0 + j .. r0 + j + 7 from tile rows j .., 8 consecutive bytes a thread.
using CastTile = unsigned char[kCastTile][kCastTile + kVec];
__device__ __forceinline__ void write_tile_transposed(const CastTile& tile, long long r0, int c0, long long rows,
                                                      int cols, unsigned char* out) {
  constexpr int kRowLanes = kCastThreads / (kCastTile / kVec);
  const int lane_col = (threadIdx.x % (kCastTile / kVec)) * kVec;
  for (int i = threadIdx.x / (kCastTile / kVec); i < kCastTile; i += kRowLanes) {
    const int c = c0 + i;
    const long long r = r0 + lane_col;
    if (c >= cols || r >= rows) continue;
    unsigned char q[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) q[k] = tile[lane_col + k][i];
    *reinterpret_cast<uint2*>(out + static_cast<long long>(c) * rows + r) = *reinterpret_cast<const uint2*>(q);
  }
}

// One 64 x 64 tile, 256 threads: each thread reads 8 consecutive bf16 (16 bytes) of a row and
// writes their 8 FP8 bytes as they lie; the tile's bytes go through shared memory to be written
// transposed, 8 consecutive bytes of an output row a thread. The block's amax joins *amax with
// one atomic. With `gelu_input`, x is first multiplied by gelu'(gelu_input), rounded to bf16 as
// the kernel apart would store it. cols and rows must be multiples of 8 (the launcher's caller
// asks 16).
__global__ void __launch_bounds__(kCastThreads)
    cast_fp8_kernel(const bf16* x, long long rows, int cols, Fp8Format f, const float* scale, unsigned char* out,
                    unsigned char* out_t, float* amax, float* column_sums, const bf16* gelu_input) {
  constexpr int kRowLanes = kCastThreads / (kCastTile / kVec);  // 32 threads share a column group
  __shared__ CastTile tile;
  __shared__ float warp_amax[kCastThreads / kWarp];
  __shared__ float lane_sums[kRowLanes][kCastTile];
  const float sc = *scale;
  const long long r0 = static_cast<long long>(blockIdx.y) * kCastTile;
  const int c0 = blockIdx.x * kCastTile;
  const int lane_col = (threadIdx.x % (kCastTile / kVec)) * kVec;  // 8 threads a row
  const int first_row = threadIdx.x / (kCastTile / kVec);          // 32 rows a pass
  float mx = 0.f, sum[kVec] = {};
  for (int i = first_row; i < kCastTile; i += kRowLanes) {
    const long long r = r0 + i;
    const int c = c0 + lane_col;
    if (r >= rows || c >= cols) continue;
    uint4 raw = *reinterpret_cast<const uint4*>(x + r * cols + c);
    bf16* v = reinterpret_cast<bf16*>(&raw);
    if (gelu_input) {
      const uint4 in_raw = *reinterpret_cast<const uint4*>(gelu_input + r * cols + c);
      const bf16* in = reinterpret_cast<const bf16*>(&in_raw);
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        v[k] = __float2bfloat16(__bfloat162float(v[k]) * gelu_grad(__bfloat162float(in[k])));
    }
    unsigned char q[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float val = __bfloat162float(v[k]);
      mx = fmaxf(mx, fabsf(val));
      sum[k] += val;
      q[k] = to_fp8(val * sc, f);
      tile[i][lane_col + k] = q[k];
    }
    if (out) *reinterpret_cast<uint2*>(out + r * cols + c) = *reinterpret_cast<const uint2*>(q);
  }
  if (column_sums) {
    // The tile's column sums: each thread's rows, then the 32 row lanes in a fixed order.
#pragma unroll
    for (int k = 0; k < kVec; ++k) lane_sums[first_row][lane_col + k] = sum[k];
    __syncthreads();
    if (threadIdx.x < kCastTile && c0 + static_cast<int>(threadIdx.x) < cols) {
      float total = 0.f;
      for (int j = 0; j < kRowLanes; ++j) total += lane_sums[j][threadIdx.x];
      column_sums[static_cast<long long>(blockIdx.y) * cols + c0 + threadIdx.x] = total;
    }
  }
  if (out_t) {
    __syncthreads();
    write_tile_transposed(tile, r0, c0, rows, cols, out_t);
  }
  mx = warp_max(mx);
  if (threadIdx.x % kWarp == 0) warp_amax[threadIdx.x / kWarp] = mx;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int j = 1; j < kCastThreads / kWarp; ++j) mx = fmaxf(mx, warp_amax[j]);
  // Magnitudes are non-negative, so their float bits order as unsigned integers.
  if (mx > 0.f) atomicMax(reinterpret_cast<unsigned int*>(amax), __float_as_uint(mx));
}

// in [rows, cols] of FP8 bytes into out [cols, rows], through 64 x 64 tiles of shared memory as
// cast_fp8_kernel writes its second layout; *amax joins the larger of itself and *amax_in.
__global__ void __launch_bounds__(kCastThreads)
    transpose_fp8_kernel(const unsigned char* in, long long rows, int cols, unsigned char* out, const float* amax_in,
                         float* amax) {
  constexpr int kRowLanes = kCastThreads / (kCastTile / kVec);
  __shared__ CastTile tile;
  const long long r0 = static_cast<long long>(blockIdx.y) * kCastTile;
  const int c0 = blockIdx.x * kCastTile;
  const int lane_col = (threadIdx.x % (kCastTile / kVec)) * kVec;
  for (int i = threadIdx.x / (kCastTile / kVec); i < kCastTile; i += kRowLanes) {
    const long long r = r0 + i;
    const int c = c0 + lane_col;
    if (r >= rows || c >= cols) continue;
    *reinterpret_cast<uint2*>(&tile[i][lane_col]) = *reinterpret_cast<const uint2*>(in + r * cols + c);
  }
  __syncthreads();
  write_tile_transposed(tile, r0, c0, rows, cols, out);
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && *amax_in > 0.f)
    atomicMax(reinterpret_cast<unsigned int*>(amax), __float_as_uint(*amax_in));
}

__global__ void update_fp8_scales_kernel(float* history, float* amax, float* scale, float* scale_inv, int stride,
                                         const float* fp8_max, int slots, int len, int margin) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= slots) return;
  const float sc =
      update_delayed_scale(history + static_cast<long long>(i) * len, len, amax[i], fp8_max[i], margin, scale[i]);
  scale[i] = sc;
  scale_inv[static_cast<long long>(i) * stride] = 1.f / sc;
  amax[i] = 0.f;
}

__global__ void gelu_forward_kernel(bf16* out, const bf16* in, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float x = __bfloat162float(in[i]);
    out[i] = __float2bfloat16(gelu(x));
  }
}

__global__ void gelu_backward_kernel(bf16* d, const bf16* in, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    d[i] = __float2bfloat16(__bfloat162float(d[i]) * gelu_grad(__bfloat162float(in[i])));
}

__global__ void add_bias_kernel(bf16* y, const bf16* bias, long long n, int cols) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(__bfloat162float(y[i]) + __bfloat162float(bias[i % cols]));
}

// db[c] (+)= the tiles' column sums, added in the tiles' order.
__global__ void add_column_sums_kernel(bf16* db, const float* column_sums, int tiles, int cols, bool accumulate) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float total = accumulate ? __bfloat162float(db[c]) : 0.f;
  for (int j = 0; j < tiles; ++j) total += column_sums[static_cast<long long>(j) * cols + c];
  db[c] = __float2bfloat16(total);
}

// The grid of 64 x 64 tiles over [rows, cols]; Error naming `what` unless both are multiples of 8.
dim3 tile_grid(const char* what, long long rows, int cols) {
  if (cols % kVec != 0 || rows % kVec != 0)
    throw Error(std::string(what) + ": rows and columns must be multiples of 8, got " + std::to_string(rows) + " x " +
                std::to_string(cols));
  return dim3(static_cast<unsigned>((cols + kCastTile - 1) / kCastTile),
              static_cast<unsigned>((rows + kCastTile - 1) / kCastTile));
}

void launch_cast(const bf16* x, const bf16* gelu_input, long long rows, int cols, Fp8Format format, const float* scale,
                 void* out, void* out_t, float* amax, float* column_sums, cudaStream_t s) {
  cast_fp8_kernel<<<tile_grid("cast_fp8", rows, cols), kCastThreads, 0, s>>>(
      x, rows, cols, format, scale, static_cast<unsigned char*>(out), static_cast<unsigned char*>(out_t), amax,
      column_sums, gelu_input);
  CUDA_CHECK(cudaGetLastError());
}
}  // namespace

void cast_fp8(const bf16* x, long long rows, int cols, Fp8Format format, const float* scale, void* out, void* out_t,
              float* amax, float* column_sums, cudaStream_t s) {
  launch_cast(x, nullptr, rows, cols, format, scale, out, out_t, amax, column_sums, s);
}

void cast_fp8_gelu_grad(const bf16* d, const bf16* gelu_input, long long rows, int cols, Fp8Format format,
                        const float* scale, void* out, void* out_t, float* amax, float* column_sums, cudaStream_t s) {
  launch_cast(d, gelu_input, rows, cols, format, scale, out, out_t, amax, column_sums, s);
}

void transpose_fp8(const void* in, long long rows, int cols, void* out, const float* amax_in, float* amax,
                   cudaStream_t s) {
  transpose_fp8_kernel<<<tile_grid("transpose_fp8", rows, cols), kCastThreads, 0, s>>>(
      static_cast<const unsigned char*>(in), rows, cols, static_cast<unsigned char*>(out), amax_in, amax);
  CUDA_CHECK(cudaGetLastError());
}

long long cast_column_sums_size(long long rows, int cols) { return (rows + kCastTile - 1) / kCastTile * cols; }

void add_column_sums(bf16* db, const float* column_sums, long long rows, int cols, bool accumulate, cudaStream_t s) {
  add_column_sums_kernel<<<grid_for(cols, 256), 256, 0, s>>>(
      db, column_sums, static_cast<int>((rows + kCastTile - 1) / kCastTile), cols, accumulate);
  CUDA_CHECK(cudaGetLastError());
}

void update_fp8_scales(float* history, float* amax, float* scale, float* scale_inv, int scale_inv_stride,
                       const float* fp8_max, int slots, int history_len, int margin, cudaStream_t s) {
  update_fp8_scales_kernel<<<grid_for(slots, 128), 128, 0, s>>>(history, amax, scale, scale_inv, scale_inv_stride,
                                                                fp8_max, slots, history_len, margin);
  CUDA_CHECK(cudaGetLastError());
}

void add_bias(bf16* y, const bf16* bias, long long rows, int cols, cudaStream_t s) {
  add_bias_kernel<<<stride_grid(rows * cols, 256), 256, 0, s>>>(y, bias, rows * cols, cols);
  CUDA_CHECK(cudaGetLastError());
}

void gelu_forward(bf16* out, const bf16* in, long long n, cudaStream_t s) {
  gelu_forward_kernel<<<stride_grid(n, 256), 256, 0, s>>>(out, in, n);
  CUDA_CHECK(cudaGetLastError());
}

void gelu_backward(bf16* d, const bf16* in, long long n, cudaStream_t s) {
  gelu_backward_kernel<<<stride_grid(n, 256), 256, 0, s>>>(d, in, n);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpt
