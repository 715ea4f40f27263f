#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

// The gpt workload's own kernels (everything that is not a cuBLASLt GEMM). Activations are
// row-major bf16 [rows, channels]; statistics, losses and optimizer state are fp32. Each launcher
// enqueues on `s` and checks the launch.
namespace scalebench::gpt {

using bf16 = __nv_bfloat16;
struct Tensor;  // gpt_config.hpp

// Parameters: fp32 master values and their bf16 copy. Normal(0, std) from a counter-based hash of
// (seed, index), so the values do not depend on the launch shape.
void init_normal(float* master, bf16* param, long long n, float std, unsigned long long seed, cudaStream_t s);
void init_constant(float* master, bf16* param, long long n, float value, cudaStream_t s);
// GPT-2's initialisation of tensor `t`, the `index`-th of the whole model's layout, in a model of
// `layers` blocks: norms' scales 1, biases 0, residual projections (attention out, MLP down)
// normal 0.02 / sqrt(2 layers), the rest normal 0.02, from seed + index x 0x9e3779b9. The training
// step and the decoder both start from it, so a seed gives them the same model. (Host code,
// initialisation.cpp: it reads the layout's tensor kinds.)
void init_tensor(float* master, bf16* param, const Tensor& t, std::size_t index, int layers, unsigned long long seed,
                 cudaStream_t s);
// bf16 copy of fp32 values (after loading master weights).
void to_bf16(bf16* out, const float* in, long long n, cudaStream_t s);

// Synthetic data: uniform random tokens below `vocab`; targets[b, t] = inputs[b, (t + 1) % T]. The
// rows are rows first_row .. first_row + B of one stream per seed (a dp rank's slice of the batch).
void random_tokens(int* inputs, int* targets, int B, int T, int vocab, unsigned long long seed, long long first_row,
                   cudaStream_t s);

// The embedding of `rows` token rows from row first_row of tokens [B x T] (a sequence-parallel
// rank's rows; all of them otherwise): x[i, :] = wte[tokens[first_row + i], :] + wpe[t, :] with t =
// (first_row + i) % T the row's position (wpe may be null: no learned positions).
void embedding_forward(bf16* x, const int* tokens, const bf16* wte, const bf16* wpe, long long rows,
                       long long first_row, int T, int C, cudaStream_t s);
// dwte[tokens[first_row + i], :] += dx[i, :] (atomic); dwpe[t, :] (+)= the sum of dx over the rows
// at position t.
void embedding_backward(bf16* dwte, bf16* dwpe, const bf16* dx, const int* tokens, long long rows, long long first_row,
                        int T, int C, bool accumulate_positions, cudaStream_t s);

// LayerNorm over the last dimension (eps 1e-5): out, and the mean and 1/std of each row. C must be a
// multiple of 8, at most 8192.
void layernorm_forward(bf16* out, float* mean, float* rstd, const bf16* x, const bf16* w, const bf16* b, int rows,
                       int C, cudaStream_t s);
// LayerNorm backward: dx_acc += the input gradient (the residual stream's gradient accumulates
// there); dw (+)= sum over rows of dout * xhat and db (+)= sum of dout, as bf16, added to what they
// hold when `accumulate` (db may be null). `partials` is scratch of layernorm_backward_partials(rows,
// C) floats. The sums are taken in a fixed order: the same inputs give the same bits. C must be a
// multiple of 8, at most 8192.
long long layernorm_backward_partials(int rows, int C);
void layernorm_backward(bf16* dx_acc, bf16* dw, bf16* db, bool accumulate, float* partials, const bf16* dout,
                        const bf16* x, const float* mean, const float* rstd, const bf16* w, int rows, int C,
                        cudaStream_t s);
// RMSNorm (Llama) runs the same kernels without the mean (eps 1e-5): out = x * rstd * w with
// rstd = 1 / sqrt(mean(x^2) + eps) saved per row; backward dx_acc += rstd * (dout * w - xhat *
// mean(dout * w * xhat)), dw (+)= sum over rows of dout * xhat.
void rmsnorm_forward(bf16* out, float* rstd, const bf16* x, const bf16* w, int rows, int C, cudaStream_t s);
void rmsnorm_backward(bf16* dx_acc, bf16* dw, bool accumulate, float* partials, const bf16* dout, const bf16* x,
                      const float* rstd, const bf16* w, int rows, int C, cudaStream_t s);
// dst += src (bf16, fp32 arithmetic).
void add_inplace(bf16* dst, const bf16* src, long long n, cudaStream_t s);
// y[rows, C] += residual (+ bias[C] on every row; bias may be null), fp32 arithmetic.
void add_residual(bf16* y, const bf16* residual, const bf16* bias, long long rows, int C, cudaStream_t s);

// qkv [B, T, 3, NH, hd] -> q, k, v [B, NH, T, hd].
void split_heads(bf16* q, bf16* k, bf16* v, const bf16* qkv, int B, int T, int NH, int hd, cudaStream_t s);
// The inverse: dq, dk, dv [B, NH, T, hd] -> dqkv [B, T, 3, NH, hd].
void merge_head_grads(bf16* dqkv, const bf16* dq, const bf16* dk, const bf16* dv, int B, int T, int NH, int hd,
                      cudaStream_t s);
// [B, NH, T, hd] <-> [B, T, NH, hd] (= [B*T, C]).
void heads_to_rows(bf16* out, const bf16* in, int B, int T, int NH, int hd, cudaStream_t s);
void rows_to_heads(bf16* out, const bf16* in, int B, int T, int NH, int hd, cudaStream_t s);
// Causal softmax of each [T, T] score matrix's rows, in place: row i reads columns 0..i, keeps
// their softmax and writes 0 after them up to the end of its block of `blk` rows (what the
// block's P V product reads); nothing further right is read or written. `count` matrices.
void causal_softmax_forward(bf16* p, int count, int T, int blk, cudaStream_t s);
// dS = P * (dP - rowsum(P * dP)), written over dP on the same columns.
void causal_softmax_backward(bf16* dp, const bf16* p, int count, int T, int blk, cudaStream_t s);

// Fused softmax cross-entropy over the vocabulary: logits [rows, Vp] (bf16) become, in place,
// d loss / d logits = (softmax - onehot(target)) x dscale on the first V columns and 0 on the
// padding; losses[row] = the row's loss in fp32. No fp32 copy of the logits is ever held.
void cross_entropy_fused(bf16* logits, float* losses, const int* targets, int rows, int V, int Vp, float dscale,
                         cudaStream_t s);
// out[0] (+)= sum of in[0..n) / of (of: the rows of the whole micro-batch, n of which are this
// rank's with sequence parallelism; = n otherwise).
void mean_into(float* out, const float* in, int n, long long of, bool accumulate, cudaStream_t s);

// out[0] = sum of squares of g (fp32).
void sum_of_squares(float* out, const bf16* g, long long n, cudaStream_t s);
// out[0] += weight x sum of squares of g (the parallel step's norm, range by range).
void add_sum_of_squares(float* out, const bf16* g, long long n, float weight, cudaStream_t s);
// The optimizer's step count on the device: ++*step, then bias_correction = (1 - beta1^step,
// 1 - beta2^step). On the device so that a step captured in a CUDA graph counts on when replayed.
void advance_adam_step(int* step, float* bias_correction, float beta1, float beta2, cudaStream_t s);
// AdamW (PyTorch's: decoupled weight decay lr x wd x p), with the gradient scaled by
// min(1, clip / ||g||) where ||g||^2 = *norm_sq (global-norm clipping; clip <= 0: off), and the
// moments divided by the bias corrections advance_adam_step left. Updates the fp32 master, its
// moments and the bf16 copy.
void adamw(float* master, bf16* param, const bf16* grad, float* m, float* v, long long n, float lr, float beta1,
           float beta2, float eps, float weight_decay, const float* bias_correction, const float* norm_sq, float clip,
           cudaStream_t s);

}  // namespace scalebench::gpt
