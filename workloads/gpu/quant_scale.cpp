#include "workloads/gpu/quant_scale.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"

namespace scalebench::gpu {

namespace {
void require_scale(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v))
    throw Error(std::string(what) + " must be positive and finite, got " + std::to_string(v));
}
}  // namespace

const char* name(QuantFormat f) { return f == QuantFormat::kInt8 ? "int8" : "fp8e4m3"; }

double format_max(QuantFormat f) { return f == QuantFormat::kInt8 ? 127.0 : 448.0; }

double scale_from_amax(double amax, QuantFormat f) {
  if (!(amax >= 0) || !std::isfinite(amax))
    throw Error("calibration: amax must be finite and not negative, got " + std::to_string(amax));
  return amax == 0 ? 1.0 : amax / format_max(f);
}

std::vector<double> amax_per_channel(const std::vector<float>& values, std::int64_t channels) {
  if (channels <= 0 || values.size() % static_cast<std::size_t>(channels) != 0)
    throw Error("amax_per_channel: " + std::to_string(values.size()) + " values do not split into " +
                std::to_string(channels) + " channels");
  const std::size_t per = values.size() / static_cast<std::size_t>(channels);
  std::vector<double> out(static_cast<std::size_t>(channels), 0.0);
  for (std::size_t i = 0; i < values.size(); ++i)
    out[i / per] = std::max(out[i / per], std::fabs(static_cast<double>(values[i])));
  return out;
}

double channel_scale(double x_scale, double w_scale, double y_scale) {
  require_scale(x_scale, "x_scale");
  require_scale(w_scale, "w_scale");
  require_scale(y_scale, "y_scale");
  return x_scale * w_scale / y_scale;
}

std::vector<float> channel_scales(double x_scale, const std::vector<double>& w_scales, double y_scale) {
  std::vector<float> out;
  out.reserve(w_scales.size());
  for (double w : w_scales) out.push_back(static_cast<float>(channel_scale(x_scale, w, y_scale)));
  return out;
}

double epilogue(double acc, double scale, double bias, bool has_residual, double residual, double residual_scale,
                bool relu) {
  double v = acc * scale + bias;
  if (has_residual) v += residual * residual_scale;
  return relu ? std::max(v, 0.0) : v;
}

FoldedEpilogue fold_residual_scale(const std::vector<float>& scale, const std::vector<float>& bias,
                                   double residual_scale) {
  require_scale(residual_scale, "residual_scale");
  if (scale.size() != bias.size())
    throw Error("epilogue: " + std::to_string(scale.size()) + " scales but " + std::to_string(bias.size()) +
                " biases; one of each per output channel");
  FoldedEpilogue f;
  for (float s : scale) f.scale.push_back(static_cast<float>(s / residual_scale));
  for (float b : bias) f.bias.push_back(static_cast<float>(b / residual_scale));
  return f;
}

std::int8_t quantize_int8(double v) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(std::clamp(v, -128.0, 127.0));  // default rounding: ties to even
  return static_cast<std::int8_t>(r);
}

double e4m3_step(double v) {
  const double a = std::fabs(v);
  const int e = a > 0 ? std::max(static_cast<int>(std::floor(std::log2(a))), -6) : -6;
  return std::ldexp(1.0, e - 3);
}

std::uint8_t encode_e4m3(double v) {
  if (std::isnan(v)) return 0x7f;
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  double a = std::fabs(v);
  if (a >= 448.0) return sign | 0x7e;
  // Round to a multiple of the step at a's binade; a value that rounds up into the next binade is
  // still a multiple of that binade's step, and at most 448 since a < 448 rounds to <= 448.
  a = std::nearbyint(a / e4m3_step(a)) * e4m3_step(a);
  if (a < std::ldexp(1.0, -6)) return sign | static_cast<std::uint8_t>(a / std::ldexp(1.0, -9));  // subnormal
  const int e = static_cast<int>(std::floor(std::log2(a)));
  const int mant = static_cast<int>(std::ldexp(a, -e) * 8.0) - 8;
  return sign | static_cast<std::uint8_t>(((e + 7) << 3) | mant);
}

double decode_e4m3(std::uint8_t bits) {
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  const int exp = (bits >> 3) & 0xf, mant = bits & 0x7;
  if (exp == 0xf && mant == 0x7) return std::nan("");
  if (exp == 0) return sign * std::ldexp(mant, -9);
  return sign * std::ldexp(8 + mant, exp - 7 - 3);
}

}  // namespace scalebench::gpu
