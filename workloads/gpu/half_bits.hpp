#pragma once
// The GPU's 16-bit floats read on the host. Every fp16 and bf16 value is exact in fp32.
#include <bit>
#include <cmath>
#include <cstdint>

namespace scalebench::gpu {

// IEEE binary16: sign, 5-bit exponent, 10-bit mantissa (subnormals, infinities and NaN included).
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) return std::ldexp(static_cast<float>(mant), -24) * (sign ? -1.f : 1.f);
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// bfloat16: the top half of an fp32.
inline float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

}  // namespace scalebench::gpu
