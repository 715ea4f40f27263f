#include "workloads/gpu/quant_conv_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "workloads/gpu/half_bits.hpp"

namespace scalebench::gpu {

std::string QuantConvShape::invalid(QuantFormat f) const {
  for (std::int64_t v : {n, c, h, w, k, r, s, stride})
    if (v < 1) return "every dimension and the stride must be at least 1: " + text();
  if (pad < 0) return "padding must not be negative: " + text();
  if (h + 2 * pad < r || w + 2 * pad < s) return "the filter is larger than the padded input: " + text();
  // cuDNN reads NHWC channels of 8-bit data in vectors: int8 in 4s (its Tensor Core engines take
  // 16s), E4M3 in 16s (16-byte rows for the FP8 Tensor Cores).
  const std::int64_t multiple = f == QuantFormat::kInt8 ? 4 : 16;
  if (c % multiple != 0 || k % multiple != 0)
    return std::string(name(f)) + " convolutions in cuDNN need input and output channels (C=" + std::to_string(c) +
           ", K=" + std::to_string(k) + ") that are multiples of " + std::to_string(multiple) +
           "; pad the channels with zeros (a 3-channel image to " + std::to_string(multiple) + ")";
  return "";
}

std::string QuantConvShape::text() const {
  return std::to_string(k) + "x" + std::to_string(c) + "x" + std::to_string(r) + "x" + std::to_string(s) + "@" +
         std::to_string(h) + "x" + std::to_string(w) + " s" + std::to_string(stride) + " p" + std::to_string(pad) +
         " n" + std::to_string(n);
}

double reference_acc(const QuantConvShape& sh, QuantFormat f, const std::uint8_t* x, const std::uint8_t* w,
                     std::int64_t n, std::int64_t k, std::int64_t p, std::int64_t q) {
  double acc = 0;
  for (std::int64_t r = 0; r < sh.r; ++r) {
    const std::int64_t ih = p * sh.stride - sh.pad + r;
    if (ih < 0 || ih >= sh.h) continue;
    for (std::int64_t s = 0; s < sh.s; ++s) {
      const std::int64_t iw = q * sh.stride - sh.pad + s;
      if (iw < 0 || iw >= sh.w) continue;
      const std::uint8_t* xs = x + ((n * sh.h + ih) * sh.w + iw) * sh.c;
      const std::uint8_t* ws = w + ((k * sh.r + r) * sh.s + s) * sh.c;
      for (std::int64_t c = 0; c < sh.c; ++c) acc += decode(f, xs[c]) * decode(f, ws[c]);
    }
  }
  return acc;
}

const char* name(QuantOutput o) {
  switch (o) {
    case QuantOutput::kInt8:
      return "int8";
    case QuantOutput::kE4M3:
      return "fp8e4m3";
    case QuantOutput::kFp16:
      return "fp16";
    case QuantOutput::kFp32:
      break;
  }
  return "fp32";
}

int output_bytes(QuantOutput o) { return o == QuantOutput::kFp32 ? 4 : o == QuantOutput::kFp16 ? 2 : 1; }

double decode_output(QuantOutput o, const void* data, std::int64_t index) {
  const auto* bytes = static_cast<const std::uint8_t*>(data) + index * output_bytes(o);
  switch (o) {
    case QuantOutput::kInt8:
      return decode(QuantFormat::kInt8, bytes[0]);
    case QuantOutput::kE4M3:
      return decode(QuantFormat::kE4M3, bytes[0]);
    case QuantOutput::kFp16: {
      std::uint16_t h = 0;
      std::memcpy(&h, bytes, sizeof h);
      return half_to_float(h);
    }
    case QuantOutput::kFp32:
      break;
  }
  float f = 0;
  std::memcpy(&f, bytes, sizeof f);
  return f;
}

bool output_matches(QuantOutput o, QuantFormat input, double got, double expected, double magnitude) {
  if (!std::isfinite(got)) return false;
  const double sums = input == QuantFormat::kE4M3 ? 2e-3 * magnitude : 0.0;
  const double scale = std::max(std::fabs(expected), magnitude);
  switch (o) {
    case QuantOutput::kInt8:
      return std::fabs(got - quantize_int8(expected)) <= 1.0 + sums;
    case QuantOutput::kE4M3:
      return std::fabs(got - std::clamp(expected, -448.0, 448.0)) <= e4m3_step(expected) + sums;
    case QuantOutput::kFp16:
      return std::fabs(got - expected) <= 2e-3 * scale + sums;
    case QuantOutput::kFp32:
      break;
  }
  return std::fabs(got - expected) <= 5e-4 * scale + sums;
}

}  // namespace scalebench::gpu
