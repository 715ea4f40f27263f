// A linear layer over a few rows, a warp per output (skinny_linear.cuh).
#include <cstdint>
#include <string>

#include "workloads/gpt/gpt_kernel_common.cuh"
#include "workloads/gpt/skinny_linear.cuh"

namespace scalebench::gpt {

namespace {

constexpr int kSkinnyThreads = 256;
constexpr int kLoadsInFlight = 4;  // a lane's weight loads issued before the first is used

// Eight bf16 values of a 16-byte load, as floats.
__device__ __forceinline__ void unpack8(const uint4& raw, float (&v)[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    v[2 * i] = f.x;
    v[2 * i + 1] = f.y;
  }
}

// Warp `o` reads W's row o once, 16 bytes a lane, kLoadsInFlight loads at a time (the weights are
// read once a step: they bypass L1), and dots it with each of the R rows of x (read through L1:
// every warp of the grid reads them).
template <int R>
__global__ void __launch_bounds__(kSkinnyThreads)
    skinny_linear_kernel(bf16* __restrict__ y, const bf16* __restrict__ x, const bf16* __restrict__ w,
                         const bf16* __restrict__ bias, int in, int out, bool add, bool gelu_out) {
  const int o = (blockIdx.x * blockDim.x + threadIdx.x) / kWarp, lane = threadIdx.x % kWarp;
  if (o >= out) return;
  const int chunks = in / 8;
  const uint4* wrow = reinterpret_cast<const uint4*>(w + static_cast<long long>(o) * in);
  const uint4* xrows = reinterpret_cast<const uint4*>(x);
  float acc[R] = {};
  for (int c0 = lane; c0 < chunks; c0 += kLoadsInFlight * kWarp) {
    uint4 raw[kLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const int c = c0 + u * kWarp;
      raw[u] = c < chunks ? __ldcs(wrow + c) : uint4{0, 0, 0, 0};
    }
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const int c = c0 + u * kWarp;
      if (c >= chunks) break;
      float wv[8];
      unpack8(raw[u], wv);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float xv[8];
        unpack8(__ldg(xrows + static_cast<long long>(r) * chunks + c), xv);
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[r] = fmaf(wv[i], xv[i], acc[r]);
      }
    }
  }
  const float b = bias ? __bfloat162float(bias[o]) : 0.f;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float v = warp_sum(acc[r]) + b;
    if (lane != r) continue;
    if (gelu_out) v = gelu(v);
    bf16& to = y[static_cast<long long>(r) * out + o];
    if (add) v += __bfloat162float(to);
    to = __float2bfloat16(v);
  }
}

template <int R>
void launch(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out, bool add, bool gelu_out,
            cudaStream_t s) {
  constexpr int kWarpsPerBlock = kSkinnyThreads / kWarp;
  const unsigned blocks = static_cast<unsigned>((out + kWarpsPerBlock - 1) / kWarpsPerBlock);
  skinny_linear_kernel<R><<<blocks, kSkinnyThreads, 0, s>>>(y, x, w, bias, in, out, add, gelu_out);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

bool skinny_linear_fits(int rows, int in, const bf16* y, const bf16* x, const bf16* w, const bf16* bias) {
  return rows >= 1 && rows <= kSkinnyMaxRows && in % 8 == 0 && aligned16(y) && aligned16(x) && aligned16(w) &&
         (bias == nullptr || aligned16(bias));
}

void skinny_linear(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int rows, int in, int out, bool add,
                   bool gelu_out, cudaStream_t s) {
  if (!skinny_linear_fits(rows, in, y, x, w, bias))
    throw Error("skinny linear: " + std::to_string(rows) + " rows of " + std::to_string(in) + " (1 to " +
                std::to_string(kSkinnyMaxRows) + " rows, a multiple of 8 wide, 16-byte aligned)");
  switch (rows) {
    case 1:
      launch<1>(y, x, w, bias, in, out, add, gelu_out, s);
      break;
    case 2:
      launch<2>(y, x, w, bias, in, out, add, gelu_out, s);
      break;
    case 3:
      launch<3>(y, x, w, bias, in, out, add, gelu_out, s);
      break;
    case 4:
      launch<4>(y, x, w, bias, in, out, add, gelu_out, s);
      break;
    case 5:
      launch<5>(y, x, w, bias, in, out, add, gelu_out, s);
      break;
    case 6:
      launch<6>(y, x, w, bias, in, out, add, gelu_out, s);
      break;
    case 7:
      launch<7>(y, x, w, bias, in, out, add, gelu_out, s);
      break;
    default:
      launch<8>(y, x, w, bias, in, out, add, gelu_out, s);
      break;
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpt
