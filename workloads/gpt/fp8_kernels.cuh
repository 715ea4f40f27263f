#pragma once
#include <cuda_runtime.h>

#include "workloads/gpt/gpt_kernels.cuh"

// The kernels of the FP8 GEMMs (precision fp8, fp8_linear.*): casts with their amax (and the bias
// gradient's column sums), the delayed scales' update, and the epilogues' work for a GEMM whose
// epilogue cuBLASLt refuses (the bias, GELU and its derivative). Each launcher enqueues on `s` and checks the launch.
namespace scalebench::gpt {

enum class Fp8Format { kE4M3, kE5M2 };

// x [rows, cols] (bf16, row-major) times *scale, saturated to the format's largest finite value:
// into `out` [rows, cols] and/or `out_t` [cols, rows] (its transpose; either may be null), one
// byte each. *amax becomes the larger of itself and max |x| (of x before scaling). One pass: each
// 64 x 64 tile is read once and written in both layouts. With `column_sums` (scratch of
// cast_column_sums_size floats) also each tile's column sums of x, which add_column_sums adds up
// in a fixed order (the bias gradient, from the bf16 values). rows and cols: multiples of 8.
void cast_fp8(const bf16* x, long long rows, int cols, Fp8Format format, const float* scale, void* out, void* out_t,
              float* amax, float* column_sums, cudaStream_t s);
// cast_fp8 of d * gelu'(gelu_input) (d [rows, cols] as the GEMM before GELU' wrote it, gelu_input
// the forward pass's input of GELU): the GELU derivative and the cast in one pass, the product
// never stored in bf16.
void cast_fp8_gelu_grad(const bf16* d, const bf16* gelu_input, long long rows, int cols, Fp8Format format,
                        const float* scale, void* out, void* out_t, float* amax, float* column_sums, cudaStream_t s);
// in [rows, cols] (FP8 bytes, as a GEMM wrote them) into out [cols, rows]; *amax becomes the larger
// of itself and *amax_in (the amax the GEMM reported). rows and cols: multiples of 8.
void transpose_fp8(const void* in, long long rows, int cols, void* out, const float* amax_in, float* amax,
                   cudaStream_t s);
long long cast_column_sums_size(long long rows, int cols);
// db[c] (+)= the sum over the rows of x[r, c] from cast_fp8's column sums (fp32, the same bits every run).
void add_column_sums(bf16* db, const float* column_sums, long long rows, int cols, bool accumulate, cudaStream_t s);

// The end of a step for `slots` tensors: each one's amax into its window of `history` steps
// (history[slot x history ..]), its scale from the window (fp8_scaling.hpp, fp8_max[slot] its
// format's largest value), scale_inv[slot x scale_inv_stride] = 1 / scale (what the GEMM multiplies
// by), and its amax reset.
void update_fp8_scales(float* history, float* amax, float* scale, float* scale_inv, int scale_inv_stride,
                       const float* fp8_max, int slots, int history_len, int margin, cudaStream_t s);
// y[rows, cols] += bias[cols] on every row.
void add_bias(bf16* y, const bf16* bias, long long rows, int cols, cudaStream_t s);

// GELU (tanh form, as cuBLASLt's and PyTorch's approximate="tanh"): out = gelu(in), n elements.
void gelu_forward(bf16* out, const bf16* in, long long n, cudaStream_t s);
// d *= gelu'(in), in place.
void gelu_backward(bf16* d, const bf16* in, long long n, cudaStream_t s);

}  // namespace scalebench::gpt
