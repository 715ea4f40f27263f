#pragma once
#include <cstdint>
#include <string>

#include "workloads/gpu/quant_scale.hpp"

// The shape of a quantized convolution, what cuDNN requires of it, and its result recomputed on
// the host in double: the check of the quantized convolution graph (cudnn_quant_conv_graph.hpp)
// in its GPU test and in the conv workload. Pure: no CUDA.
namespace scalebench::gpu {

// One 2-D cross-correlation, NHWC activations and KRSC filters, no groups, no dilation.
struct QuantConvShape {
  std::int64_t n = 1, c = 1, h = 1, w = 1;  // input
  std::int64_t k = 1, r = 1, s = 1;         // filters
  std::int64_t pad = 0, stride = 1;         // both dimensions alike

  std::int64_t p() const { return (h + 2 * pad - r) / stride + 1; }
  std::int64_t q() const { return (w + 2 * pad - s) / stride + 1; }
  // Empty when cuDNN can run the shape with inputs in `f`, else what is wrong and what to do.
  std::string invalid(QuantFormat f) const;
  std::string text() const;  // "64x256x1x1@56x56 s1 p0 n64" (K x C x R x S @ H x W)
};

// The sum over c, r and s of x * w for output element (n, k, p, q) (zero padding), with x and w
// the stored 8-bit values as the numbers they stand for (decode): what the GPU accumulates in
// int32 (int8, exact) or fp32 (E4M3). x is N x H x W x C, w is K x R x S x C, both one byte each.
double reference_acc(const QuantConvShape& shape, QuantFormat f, const std::uint8_t* x, const std::uint8_t* w,
                     std::int64_t n, std::int64_t k, std::int64_t p, std::int64_t q);

// What the convolution writes: requantized to int8 or E4M3, or fp16, fp32.
enum class QuantOutput { kInt8, kE4M3, kFp16, kFp32 };
const char* name(QuantOutput o);  // "int8", "fp8e4m3", "fp16", "fp32"
int output_bytes(QuantOutput o);
// Element `index` of an output tensor on the host, as the number it stands for.
double decode_output(QuantOutput o, const void* data, std::int64_t index);

// Whether an output element the GPU wrote, `got`, is the reference: `expected` is the epilogue in
// the output's units computed in double from the same inputs, `magnitude` the output's typical
// size. int8: the reference requantized (quantize_int8), +-1 for the fp32 epilogue's rounding at a
// tie; E4M3: within one E4M3 step of the reference saturated at +-448; fp16 and fp32: within 2e-3
// and 5e-4 of max(|expected|, magnitude) (fp16's rounding 2^-11, and FP8 Tensor Cores' sums, which
// keep fewer bits than fp32). Every format also allows 2e-3 x magnitude for those sums with E4M3
// inputs; int8 inputs sum exactly.
bool output_matches(QuantOutput o, QuantFormat input, double got, double expected, double magnitude);

}  // namespace scalebench::gpu
