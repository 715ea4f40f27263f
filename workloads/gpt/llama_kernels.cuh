#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "workloads/gpt/gpt_kernels.cuh"

// The Llama-style step's own kernels (RMSNorm shares LayerNorm's, norm_kernels.cu; the embedding
// is gpt's without positions). Activations are row-major bf16, arithmetic fp32.
namespace scalebench::gpt {

// Llama 3's rotary base (the training step's and the decoder's).
constexpr double kRopeTheta = 500000.0;

// SwiGLU on the fused gate/up projection: gu [rows, 2 x mlp] holds the gate in its first mlp
// columns and the up projection in the next (one GEMM over the gate and up weights, which lie
// one after the other in the parameter buffer); h [rows, mlp] = silu(gate) * up. mlp must be even.
void swiglu_forward(bf16* h, const bf16* gu, long long rows, int mlp, cudaStream_t s);
// dgu [rows, 2 x mlp] = (dh * up * silu'(gate), dh * silu(gate)) from dh [rows, mlp].
void swiglu_backward(bf16* dgu, const bf16* dh, const bf16* gu, long long rows, int mlp, cudaStream_t s);

// Rotary positions, half-split layout (GPT-NeoX / Hugging Face Llama): within a head of width hd,
// channel i < hd/2 pairs with i + hd/2 and turns by the angle t x theta^(-2i/hd) at position t.
// table [T, hd/2] holds (cos, sin) of each angle, computed once in double precision.
void rotary_table(float2* table, int T, int hd, double theta, cudaStream_t s);
// In place on the first `heads` heads of each row of x [B x T rows of `row_width` elements] (the
// query and key heads of the fused QKV projection's output): inverse = false turns them forward,
// inverse = true applies the transposed rotation (the backward pass on their gradients). Row r is
// at position r % T, or positions[r] where given (the decoder's rows). hd must be a multiple of 16.
void rotary(bf16* x, const float2* table, long long rows, int T, int heads, int hd, int row_width, bool inverse,
            cudaStream_t s, const int* positions = nullptr);

}  // namespace scalebench::gpt
