#pragma once
#include <cuda_runtime.h>

#include "workloads/gpt/gpt_kernels.cuh"

// A linear layer over a few rows (a decode step of a few sequences): y[n, out] = x[n, in] W^T
// (+ bias) (GELU'd) (+ y itself), W as PyTorch's [out, in]. At so few rows the layer is a read of W
// and little else; cuBLASLt's tiles, made for many rows, leave most SMs idle on the narrow layers
// (768 outputs: six 128-wide tiles), so here one warp, or a few for a layer of few outputs, reads
// each output's weights, all of the SMs at once, and does the epilogue itself.
namespace scalebench::gpt {

// The most rows the kernel takes: beyond them a weight is reused enough that cuBLASLt's tiles win.
constexpr int kSkinnyMaxRows = 8;

// Whether skinny_linear takes these: 1 to kSkinnyMaxRows rows, `in` a multiple of 8 and every
// pointer 16-byte aligned (its loads are 8 values wide).
bool skinny_linear_fits(int rows, int in, const bf16* y, const bf16* x, const bf16* w, const bf16* bias);

// y = x W^T + bias (null: none) (+ y's old value with `add`), then GELU (tanh form) with `gelu`:
// cuBLASLt's order for its epilogues (D = GELU(A B + C + bias)).
void skinny_linear(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int rows, int in, int out, bool add,
                   bool gelu, cudaStream_t s);

}  // namespace scalebench::gpt
