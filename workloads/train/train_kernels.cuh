#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "workloads/gpu/dtype.hpp"

// The train workload's own kernels: what cuDNN and cuBLASLt do not do (synthetic data, residual add
// and ReLU where cuDNN cannot fuse them, global average pooling, softmax cross-entropy, the fused
// SGD step over the flat parameter buffer, loss scaling, checksums), and what cuDNN does too slowly
// (depthwise convolution). Activations and gradients are in the compute type; master weights,
// momentum and BN parameters in fp32. Defined per kernel family: fill_, elementwise_, pooling_,
// softmax_loss_, batchnorm_, optimizer_, allreduce_ and depthwise_kernels.cu.
namespace scalebench::train {

// The compute type: gpu::DType's kF32, kF16 or kBf16 (its size: gpu::dtype_bytes).
using gpu::DType;

// Normal(mean, std) values from a counter-based hash of (seed, index): the same on every GPU and
// every run, whatever the launch shape.
void fill_normal(void* dst, DType t, long long n, float mean, float std, std::uint64_t seed, cudaStream_t s);
void fill_value(float* dst, long long n, float value, cudaStream_t s);
void fill_labels(int* dst, long long n, int classes, std::uint64_t seed, cudaStream_t s);

// dst = src converted to `t` (the compute copy of fp32 master weights, fp32 gradients into the
// flat gradient buffer).
void convert_from_float(const float* src, void* dst, DType t, long long n, cudaStream_t s);

// y = max(x, 0).
void relu_forward(const void* x, void* y, DType t, long long n, cudaStream_t s);
// dx = dy * (y > 0), or dx += that when accumulate.
void relu_backward(const void* y, const void* dy, void* dx, bool accumulate, DType t, long long n, cudaStream_t s);
// The bias of a conv or fc layer and the ReLU after it in one pass each way (VGG's layers): over rows
// x c (channels fastest), y = relu(x + bias[channel]); backward, dx = dy * (y > 0) and its
// per-channel sums added to `sums` (fp32, zeroed by the caller). Only where bias_relu_fusable(t, c):
// channels in whole 16-byte vectors, and at most kThreads vectors a row.
bool bias_relu_fusable(DType t, int c);
void bias_relu_forward(const void* x, const void* bias, void* y, DType t, long long rows, int c, cudaStream_t s);
void relu_backward_bias(const void* y, const void* dy, void* dx, DType t, long long rows, int c, float* sums,
                        cudaStream_t s);
// y = a + b (y may be a or b: the gradient of a sum added into what is there).
void add_forward(const void* a, const void* b, void* y, DType t, long long n, cudaStream_t s);
// dst = src, or dst += src when accumulate (a gradient written or added into what is there).
void add_into(void* dst, const void* src, bool accumulate, DType t, long long n, cudaStream_t s);

// Global average pooling of NHWC x (n images of hw positions by c channels) to y (n x c), and its
// gradient (dx = dy / hw at every position, or += when accumulate).
void avgpool_forward(const void* x, void* y, DType t, int n, int hw, int c, cudaStream_t s);
void avgpool_backward(const void* dy, void* dx, bool accumulate, DType t, int n, int hw, int c, cudaStream_t s);

// Max pooling of NHWC x (n images of h x w positions by c channels), a k x k window moved by
// `stride` over x padded by `pad` (padding never wins), to y (n x oh x ow x c).
struct PoolShape {
  int n = 0, h = 0, w = 0, c = 0, oh = 0, ow = 0, k = 1, stride = 1, pad = 0;
};
inline constexpr int kMaxPoolWindow = 15;  // k at most: a window position fits the byte `argmax` keeps
// Where `argmax` (one byte per output) is not null, it gets the row-major position of each
// output's maximum in its window, the first on ties: the backward pass reads it instead of
// comparing again (cuDNN's NHWC pooling backward took 1.5 ms of a 36 ms ResNet-50 step).
void maxpool_forward(const void* x, void* y, std::uint8_t* argmax, DType t, const PoolShape& p, cudaStream_t s);
// dx = the sum of dy over the outputs whose maximum each x is, or dx += that when accumulate.
void maxpool_backward(const void* dy, const std::uint8_t* argmax, void* dx, bool accumulate, DType t,
                      const PoolShape& p, cudaStream_t s);

// Average pooling over the same windows: y = the window's sum / k^2 (`count_pad`: the padding's
// zeros count, PyTorch's count_include_pad) or / the positions of the window inside x. Backward,
// each x gets dy / divisor from every output whose window holds it (dx = that, or += when
// accumulate).
void avgpool2d_forward(const void* x, void* y, DType t, const PoolShape& p, bool count_pad, cudaStream_t s);
void avgpool2d_backward(const void* dy, void* dx, bool accumulate, DType t, const PoolShape& p, bool count_pad,
                        cudaStream_t s);

// Subsampling of NHWC x (p.n images of p.h x p.w by p.c channels) to y (p.oh x p.ow): y at (oy,
// ox) = x at (offset + stride * oy, offset + stride * ox), 0 where that is past x's edge (k and
// pad unused). Backward, dx = dy at the positions taken and 0 elsewhere, or, when accumulate, dy
// added at the positions taken.
void subsample_forward(const void* x, void* y, DType t, const PoolShape& p, int offset, cudaStream_t s);
void subsample_backward(const void* dy, void* dx, bool accumulate, DType t, const PoolShape& p, int offset,
                        cudaStream_t s);

// Depthwise convolution over the same windows as pooling's (p: n images of h x w by c channels, a
// k x k window moved by `stride` over x padded by `pad` with zeros, to oh x ow): one filter per
// channel, w as the net keeps a grouped convolution's weights (KRSC with one input channel a
// group: c x k x k), sums in fp32, no bias. Ours rather than cuDNN's grouped convolution, whose
// legacy NHWC kernels took 655 ms of NASNet-A Mobile's 816 ms fp16 step at batch 512 (H200). k is
// 3, 5 or 7, the stride 1 or 2. w and dw may lie at any element offset; activations are read as
// 16-byte vectors where their alignment and the channel count allow.
bool depthwise_supported(int k, int stride);
// y[n, oy, ox, c] = sum over r, s of x[n, oy * stride - pad + r, ox * stride - pad + s, c] * w[c, r, s].
void depthwise_forward(const void* x, const void* w, void* y, DType t, const PoolShape& p, cudaStream_t s);
// dx = the sum of dy * the tap that joined them over the outputs whose window holds each x, or
// dx += that when accumulate.
void depthwise_backward_data(const void* dy, const void* w, void* dx, bool accumulate, DType t, const PoolShape& p,
                             cudaStream_t s);
// dw[c, r, s] = the sum over images and outputs of dy * the x under tap (r, s), written in t (the
// same bits every run: no atomics). `work`: depthwise_filter_work_bytes(p) bytes (fp32 partial
// sums), on the current device.
std::size_t depthwise_filter_work_bytes(const PoolShape& p);
void depthwise_backward_filter(const void* x, const void* dy, void* dw, DType t, const PoolShape& p, void* work,
                               cudaStream_t s);

// One input of a concatenation along channels: over `rows` positions, dst[r][dst_at + k] =
// src[r][src_at + k] for k < c, src rows `src_c` wide and dst rows `dst_c` (or += when
// accumulate). Forward copies an input into its slice of the output (src_at 0); backward copies
// the slice of dy back into that input's gradient (dst_at 0).
void copy_channels(const void* src, int src_c, int src_at, void* dst, int dst_c, int dst_at, int c, bool accumulate,
                   DType t, long long rows, cudaStream_t s);

// Softmax cross-entropy of logits (n x k) against labels: adds `weight` x the mean loss over the
// batch to *loss (fp64, zeroed by the caller) and, when dlogits is not null, writes
// dlogits = (softmax - onehot) * weight * loss_scale / n (loss_scale read from device memory;
// null: 1). With `smoothing` e the one-hot target becomes (1 - e) onehot + e / k (label
// smoothing). `weight`: an auxiliary loss's share of the total (Inception v3's 0.4).
void softmax_cross_entropy(const void* logits, const int* labels, void* dlogits, DType t, int n, int k,
                           const float* loss_scale, double* loss, cudaStream_t s, float smoothing = 0,
                           float weight = 1);

// Per-channel sums of dy (rows x c, channels fastest) added to sums (fp32, zeroed by the caller):
// the gradient of a bias added to every row.
void bias_grad(const void* dy, DType t, long long rows, int c, float* sums, cudaStream_t s);

// Batch norm over NHWC (rows = images x positions, c channels fastest), our own kernels: cuDNN's
// legacy NHWC batch norm outside its fused fp16 path took ~50 ms per ResNet-50 layer at batch 256.
// Training forward: per-channel batch mean and variance, then y = act(x * a + b (+ z)) with
// a = gamma / sqrt(var + eps), b = beta - mean * a; the batch mean and 1/sqrt(var + eps) are saved,
// the running statistics updated (momentum; 1 makes them the batch's). `work` holds 4c floats
// plus 2c doubles. With relu, `relu_mask` (bn_relu_mask_bytes) gets which y are > 0, a bit per
// element in a byte per vector of channels, for the backward pass, which then reads that instead
// of y (a sixteenth of y's bytes where the channels fill 16-byte vectors).
void bn_forward_train(const void* x, const void* z, void* y, DType t, long long rows, int c, const float* gamma,
                      const float* beta, float* saved_mean, float* saved_inv_std, float* running_mean,
                      float* running_var, double momentum, double eps, bool relu, std::uint8_t* relu_mask, void* work,
                      cudaStream_t s);
std::size_t bn_relu_mask_bytes(long long rows, int c, DType t);
// Inference: y = act(x * a + b (+ z)) from the running statistics.
void bn_forward_infer(const void* x, const void* z, void* y, DType t, long long rows, int c, const float* gamma,
                      const float* beta, const float* running_mean, const float* running_var, double eps, bool relu,
                      void* work, cudaStream_t s);
// Backward: g = dy, where relu masked by the forward's relu_mask; dz = g (or += when acc_dz; skipped when dz is null);
// dgamma = sum g * xhat, dbeta = sum g (fp32, into dparams[0..c) and [c..2c)); dx from the saved
// statistics (or += when acc_dx).
void bn_backward(const void* x, const std::uint8_t* relu_mask, const void* dy, void* dx, void* dz, bool acc_dx,
                 bool acc_dz, DType t, long long rows, int c, const float* gamma, const float* saved_mean,
                 const float* saved_inv_std, bool relu, float* dparams, void* work, cudaStream_t s);
std::size_t bn_work_bytes(int c);

// Sets *flag to 1 when any of the n gradients is inf or nan (flag left alone otherwise).
void find_nonfinite(const void* grad, DType t, long long n, int* flag, cudaStream_t s);

// The fused SGD step over a flat buffer, PyTorch's formulation (weight decay into the gradient,
// then momentum): g = grad / (divisor * loss_scale) + wd * w; v = momentum * v + g; w -= lr * v;
// and the compute copy (when not null) = w in `t`. Does nothing when *skip is set (a step whose
// gradients overflowed). `lr_device`: the rate read from device memory instead of `lr` (a schedule
// that a captured graph follows). `nesterov`: w -= lr * (g + momentum * v), PyTorch's Nesterov.
void sgd_step(float* master, float* velocity, const void* grad, void* compute_copy, DType t, long long n, float lr,
              float momentum, float weight_decay, float divisor, const float* loss_scale, const int* skip,
              cudaStream_t s, const float* lr_device = nullptr, bool nesterov = false);

// Dynamic loss scaling after a step: on overflow (*flag) halve the scale and restart the count,
// else double it after `interval` good steps in a row; then clear the flag. One thread.
void update_loss_scale(float* scale, int* good_steps, int* flag, int interval, bool dynamic, cudaStream_t s);

// Sum of the 32-bit patterns of n floats modulo 2^64 (order-free, so every rank's sum of equal
// weights is equal) and their fp64 sum, added to out[0] and out[1] (zeroed by the caller).
void checksum(const float* p, long long n, unsigned long long* bits, double* sum, cudaStream_t s);

// One rank's shard of an all-reduce: dst = the sum of `count` equal-length arrays (dst may be
// one of them), added in fp32 in source order and rounded once. Few thread blocks, so that it
// leaves most SMs to the backward pass it runs beside.
inline constexpr int kMaxShardSources = 8;
struct ShardSources {
  const void* p[kMaxShardSources] = {};
  int count = 0;
};
void sum_shards(void* dst, const ShardSources& src, DType t, long long n, cudaStream_t s);

// Small integers (-8 to 8) from (index, rank, round): any 8 ranks' sum is exact in every type, and
// each round differs from the last at every index, so a stale or missing shard is seen.
void fill_allreduce_pattern(void* dst, DType t, long long n, int rank, int round, cudaStream_t s);
// Adds to *wrong the elements of p that are not the sum of ranks 0..ranks-1's patterns of `round`.
void count_allreduce_errors(const void* p, DType t, long long n, int ranks, int round, unsigned long long* wrong,
                            cudaStream_t s);

}  // namespace scalebench::train
