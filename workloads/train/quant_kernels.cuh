#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "workloads/gpu/dtype.hpp"
#include "workloads/gpu/quant_scale.hpp"
#include "workloads/train/train_kernels.cuh"

// The kernels of quantized inference (quant_net.hpp) around cuDNN's 8-bit convolutions: tensors of
// one byte an element (int8, or E4M3's bits) with real value q x scale, NHWC. Built only with
// SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

using gpu::QuantFormat;

// The largest |x| of n elements of type t, folded into *amax (device; the caller zeroes it first).
void abs_max(const void* x, DType t, long long n, float* amax, cudaStream_t s);

// q = x / scale rounded and saturated to the format (int8: to nearest, ties to even, [-127, 127];
// E4M3: satfinite), for `rows` positions of c_in channels written as c_out >= c_in (the rest 0:
// cuDNN's 8-bit convolutions take channels in 4s or 16s).
void quantize_rows(const void* x, DType t, int c_in, std::uint8_t* q, int c_out, long long rows, float scale,
                   QuantFormat f, cudaStream_t s);

// q = (x + bias[channel], then max(0, .) with relu) / scale in the format, for `rows` positions
// of c channels of x in type t (a first convolution run in the trained precision, then quantized).
void bias_act_quantize(const void* x, DType t, const float* bias, bool relu, std::uint8_t* q, long long rows, int c,
                       float scale, QuantFormat f, cudaStream_t s);

// y = q x scale, n elements, as fp16 (an 8-bit tensor where only fp16 is taken: E4M3 residuals).
void dequantize_half(const std::uint8_t* q, QuantFormat f, float scale, void* y, long long n, cudaStream_t s);

// Max pooling over 8-bit tensors whose values are all >= 0 (after a ReLU): there, both formats'
// bytes order as their values do, so the scale is kept. A byte with its sign bit set counts as 0.
void maxpool_bytes(const std::uint8_t* x, std::uint8_t* y, const PoolShape& p, cudaStream_t s);

// y[n x c] = the mean over hw positions of q x scale, in fp32.
void global_avgpool_dequant(const std::uint8_t* q, QuantFormat f, float scale, float* y, int n, int hw, int c,
                            cudaStream_t s);

// y[n x c] = the mean over hw positions of x (type t), in fp32.
void global_avgpool_wide(const void* x, DType t, float* y, int n, int hw, int c, cudaStream_t s);

// y[n x out] += b, each row: the classifier's bias after its matmul.
void add_bias_rows(float* y, const float* b, int n, int out, cudaStream_t s);

}  // namespace scalebench::train
