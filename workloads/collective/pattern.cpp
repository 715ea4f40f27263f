#include "workloads/collective/pattern.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "workloads/gpu/half_bits.hpp"

namespace scalebench::collective {

using gpu::bf16_to_float;
using gpu::half_to_float;

namespace {
std::uint16_t float_to_half(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (exp <= 0) return static_cast<std::uint16_t>(sign);  // our patterns never need subnormals
  std::uint32_t h = sign | (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
  std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // round to nearest even
  return static_cast<std::uint16_t>(h);
}
std::uint16_t float_to_bf16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(x >> 16);
}

}  // namespace

double input_value(DType t, RedOp r, int nranks, int rank, std::size_t i) {
  return formula::input_value(t, r, nranks, rank, i);
}

void encode(DType t, double v, std::byte* base, std::size_t i) {
  switch (t) {
    case DType::kF32:
      reinterpret_cast<float*>(base)[i] = static_cast<float>(v);
      break;
    case DType::kF64:
      reinterpret_cast<double*>(base)[i] = v;
      break;
    case DType::kF16:
      reinterpret_cast<std::uint16_t*>(base)[i] = float_to_half(static_cast<float>(v));
      break;
    case DType::kBf16:
      reinterpret_cast<std::uint16_t*>(base)[i] = float_to_bf16(static_cast<float>(v));
      break;
    case DType::kI32:
      reinterpret_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(v);
      break;
    case DType::kI64:
      reinterpret_cast<std::int64_t*>(base)[i] = static_cast<std::int64_t>(v);
      break;
    case DType::kI8:
      reinterpret_cast<std::int8_t*>(base)[i] = static_cast<std::int8_t>(v);
      break;
    case DType::kU8:
      reinterpret_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(v);
      break;
    default:  // fp8: not a collective's type (parse_dtype refuses it)
      throw Error(std::string("collective: no ") + gpu::dtype_name(t) + " data");
  }
}

double decode(DType t, const std::byte* base, std::size_t i) {
  switch (t) {
    case DType::kF32:
      return reinterpret_cast<const float*>(base)[i];
    case DType::kF64:
      return reinterpret_cast<const double*>(base)[i];
    case DType::kF16:
      return half_to_float(reinterpret_cast<const std::uint16_t*>(base)[i]);
    case DType::kBf16:
      return bf16_to_float(reinterpret_cast<const std::uint16_t*>(base)[i]);
    case DType::kI32:
      return reinterpret_cast<const std::int32_t*>(base)[i];
    case DType::kI64:
      return static_cast<double>(reinterpret_cast<const std::int64_t*>(base)[i]);
    case DType::kI8:
      return reinterpret_cast<const std::int8_t*>(base)[i];
    case DType::kU8:
      return reinterpret_cast<const std::uint8_t*>(base)[i];
    default:  // fp8: not a collective's type (parse_dtype refuses it)
      throw Error(std::string("collective: no ") + gpu::dtype_name(t) + " data");
  }
}

std::vector<std::byte> make_input(const Config& c, const Layout& l, int nranks, int rank) {
  std::vector<std::byte> buf(l.send_count * c.element_bytes());
  for (std::size_t i = 0; i < l.send_count; ++i)
    encode(c.dtype, input_value(c.dtype, c.redop, nranks, rank, i), buf.data(), i);
  return buf;
}

std::optional<double> expected_output(const Config& c, const Layout& l, int n, int rank, std::size_t j) {
  double want = 0;
  if (!formula::expected_value(check_shape(c, l, n, rank), j, &want)) return std::nullopt;
  return want;
}

std::size_t count_wrong(const Config& c, const Layout& l, int n, int rank, const std::vector<std::byte>& out) {
  const formula::CheckShape shape = check_shape(c, l, n, rank);
  const double tol = formula::relative_tolerance(c.dtype, c.redop);
  std::size_t wrong = 0;
  double want = 0;
  for (std::size_t j = 0; j < l.recv_count; ++j)
    if (formula::expected_value(shape, j, &want) && !formula::matches(decode(c.dtype, out.data(), j), want, tol))
      ++wrong;
  return wrong;
}

formula::CheckShape check_shape(const Config& c, const Layout& l, int nranks, int rank) {
  return formula::CheckShape{c.op, c.dtype, c.redop, c.root, nranks, rank, l.chunk};
}

}  // namespace scalebench::collective
