#pragma once
#include <cstdint>
#include <vector>

// The arithmetic of quantized inference, shared by the quantized convolution graph
// (cudnn_quant_conv_graph.hpp), its checks and its benchmark: scales from calibration, the
// per-channel scale of a convolution's epilogue, and the two 8-bit formats read and written on the
// host. A quantized tensor holds q with real value q * scale. Pure: no CUDA.
namespace scalebench::gpu {

enum class QuantFormat { kInt8, kE4M3 };
const char* name(QuantFormat f);  // "int8", "fp8e4m3"

// The largest magnitude a format stores: 127 (int8, symmetric: -128 is left unused) and 448 (E4M3).
double format_max(QuantFormat f);

// Calibration: the scale that maps a tensor's largest magnitude `amax` onto the format's largest
// value (amax / 127, amax / 448). A tensor of zeros gets scale 1 (any scale stores it). Throws
// Error for a negative or non-finite amax.
double scale_from_amax(double amax, QuantFormat f);

// The largest magnitude of each of `channels` runs of `per_channel` values (a KRSC filter's K
// filters): what per-channel weight scales are calibrated from.
std::vector<double> amax_per_channel(const std::vector<float>& values, std::int64_t channels);

// The epilogue's multiplier of output channel k: the int32 (or fp32) sum of x_q * w_q is
// acc * x_scale * w_scale[k] in real units and acc * x_scale * w_scale[k] / y_scale in the
// output's. Throws Error unless every scale is positive and finite.
double channel_scale(double x_scale, double w_scale, double y_scale);
std::vector<float> channel_scales(double x_scale, const std::vector<double>& w_scales, double y_scale);

// The epilogue of one output element in the output's units, in double:
//   v = acc * scale + bias (+ residual * residual_scale), then max(v, 0) with relu.
// `residual_scale` is the residual's scale over the output's (1 when they share one).
double epilogue(double acc, double scale, double bias, bool has_residual, double residual, double residual_scale,
                bool relu);

// The graph runs the epilogue as one chain of pointwise nodes, each taking the chain's value and
// one tensor: with a residual it computes ((acc * scale' + bias') + residual) * residual_scale,
// which is the epilogue above with scale' = scale / residual_scale and bias' = bias / residual_scale.
// Throws Error unless residual_scale is positive and finite.
struct FoldedEpilogue {
  std::vector<float> scale, bias;
};
FoldedEpilogue fold_residual_scale(const std::vector<float>& scale, const std::vector<float>& bias,
                                   double residual_scale);

// Requantization to int8: round to nearest, ties to even (as the GPU's cvt.rni), saturated to
// [-128, 127]; NaN becomes 0.
std::int8_t quantize_int8(double v);

// OCP E4M3 (FN): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, 0x7f/0xff NaN, 448
// the largest. Encoding rounds to nearest (ties to even) and saturates at +-448 (satfinite).
std::uint8_t encode_e4m3(double v);
double decode_e4m3(std::uint8_t bits);
// The distance between consecutive E4M3 values at the magnitude of v (2^-9 among subnormals).
double e4m3_step(double v);

// A stored element of either format as the number it stands for (the integer for int8).
inline double decode(QuantFormat f, std::uint8_t bits) {
  return f == QuantFormat::kInt8 ? static_cast<double>(static_cast<std::int8_t>(bits)) : decode_e4m3(bits);
}

}  // namespace scalebench::gpu
