// A linear layer over a few rows, one or a few warps per output (skinny_linear.cuh).
#include <cstdint>
#include <string>

#include "workloads/gpt/gpt_kernel_common.cuh"
#include "workloads/gpt/skinny_linear.cuh"

namespace scalebench::gpt {

namespace {

constexpr int kSkinnyThreads = 256;
constexpr int kWarpsPerBlock = kSkinnyThreads / kWarp;
constexpr int kLoadsInFlight = 4;       // a lane's weight loads issued before the first is used
constexpr int kTargetWarps = 132 * 32;  // an H100/H200's SMs, 32 warps each

// Output o is read by `parts` warps (a power of two to kWarpsPerBlock), each taking every
// parts-th run of 32 16-byte loads of W's row o, kLoadsInFlight loads at a time (the weights are
// read once a step: they bypass L1), and dotting them with each of the R rows of x (read through
// L1: every warp of the grid reads them). A layer of few outputs is split this way so that enough
// warps read at once to keep the memory busy; the parts meet in shared memory.
template <int R>
__global__ void __launch_bounds__(kSkinnyThreads)
    skinny_linear_kernel(bf16* __restrict__ y, const bf16* __restrict__ x, const bf16* __restrict__ w,
                         const bf16* __restrict__ bias, int in, int out, int parts, bool add, bool gelu_out) {
  __shared__ float sums[kWarpsPerBlock][R];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, part = warp % parts;
  const int o = blockIdx.x * (kWarpsPerBlock / parts) + warp / parts;
  const bool mine = o < out;  // no early return: every warp reaches the barrier
  const int chunks = in / 8;
  const uint4* wrow = reinterpret_cast<const uint4*>(w + static_cast<long long>(mine ? o : 0) * in);
  const uint4* xrows = reinterpret_cast<const uint4*>(x);
  float acc[R] = {};
  const int step = kLoadsInFlight * kWarp * parts;
  for (int c0 = part * kWarp + lane; mine && c0 - lane < chunks; c0 += step) {
    uint4 raw[kLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const int c = c0 + u * kWarp * parts;
      raw[u] = c < chunks ? __ldcs(wrow + c) : uint4{0, 0, 0, 0};
    }
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const int c = c0 + u * kWarp * parts;
      if (c >= chunks) continue;
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
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float v = warp_sum(acc[r]);
    if (lane == 0) sums[warp][r] = v;
  }
  __syncthreads();  // every warp reaches it: none returned early
  if (!mine || part != 0) return;
  const float b = bias ? __bfloat162float(bias[o]) : 0.f;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (lane != r) continue;
    float v = b;
    for (int p = 0; p < parts; ++p) v += sums[warp + p][r];
    bf16& to = y[static_cast<long long>(r) * out + o];
    if (add) v += __bfloat162float(to);
    if (gelu_out) v = gelu(v);
    to = __float2bfloat16(v);
  }
}

// Warps per output: the fewest that put kTargetWarps to work, as long as each still has a whole
// run of 32 loads.
int parts_for(int in, int out) {
  const int runs = in / 8 / kWarp;
  int parts = 1;
  while (parts < kWarpsPerBlock && static_cast<long long>(out) * parts < kTargetWarps && runs >= 2 * parts) parts *= 2;
  return parts;
}

template <int R>
void launch(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out, bool add, bool gelu_out,
            cudaStream_t s) {
  const int parts = parts_for(in, out), per_block = kWarpsPerBlock / parts;
  const unsigned blocks = static_cast<unsigned>((out + per_block - 1) / per_block);
  skinny_linear_kernel<R><<<blocks, kSkinnyThreads, 0, s>>>(y, x, w, bias, in, out, parts, add, gelu_out);
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
