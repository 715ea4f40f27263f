#include "workloads/collective/pattern.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace scalebench::collective {

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
float half_to_float(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) return std::ldexp(static_cast<float>(mant), -24) * (sign ? -1.f : 1.f);
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}
std::uint16_t float_to_bf16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(x >> 16);
}
float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// Largest integer the type holds exactly (and every integer under it).
int exact_limit(DType t) {
  switch (t) {
    case DType::kInt8:
      return 127;
    case DType::kUInt8:
      return 255;
    case DType::kBFloat16:
      return 256;
    case DType::kFloat16:
      return 2048;
    default:
      return 1 << 20;
  }
}

double reduce(RedOp r, double acc, double v) {
  switch (r) {
    case RedOp::kSum:
    case RedOp::kAvg:
      return acc + v;
    case RedOp::kProd:
      return acc * v;
    case RedOp::kMax:
      return std::max(acc, v);
    case RedOp::kMin:
      return std::min(acc, v);
  }
  return acc;
}
}  // namespace

double input_value(DType t, RedOp r, int nranks, int rank, std::size_t i) {
  const auto n = static_cast<std::size_t>(std::max(1, nranks));
  const bool marked = i % n == static_cast<std::size_t>(rank);  // one rank per element
  // prod: one 2 among ones, so the product is 2 on any number of ranks.
  if (r == RedOp::kProd) return marked ? 2.0 : 1.0;
  // Values up to m per rank keep the sum over all ranks exact; with too many ranks for even
  // ones, a single 1 among zeros still tells which rank's element landed where.
  const int m = std::min(13, exact_limit(t) / nranks);
  if (m < 1) return marked ? 1.0 : 0.0;
  return static_cast<double>((static_cast<std::size_t>(rank) * 7 + i * 3) % static_cast<std::size_t>(m) + 1);
}

void encode(DType t, double v, std::byte* base, std::size_t i) {
  switch (t) {
    case DType::kFloat32:
      reinterpret_cast<float*>(base)[i] = static_cast<float>(v);
      break;
    case DType::kFloat64:
      reinterpret_cast<double*>(base)[i] = v;
      break;
    case DType::kFloat16:
      reinterpret_cast<std::uint16_t*>(base)[i] = float_to_half(static_cast<float>(v));
      break;
    case DType::kBFloat16:
      reinterpret_cast<std::uint16_t*>(base)[i] = float_to_bf16(static_cast<float>(v));
      break;
    case DType::kInt32:
      reinterpret_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(v);
      break;
    case DType::kInt64:
      reinterpret_cast<std::int64_t*>(base)[i] = static_cast<std::int64_t>(v);
      break;
    case DType::kInt8:
      reinterpret_cast<std::int8_t*>(base)[i] = static_cast<std::int8_t>(v);
      break;
    case DType::kUInt8:
      reinterpret_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(v);
      break;
  }
}

double decode(DType t, const std::byte* base, std::size_t i) {
  switch (t) {
    case DType::kFloat32:
      return reinterpret_cast<const float*>(base)[i];
    case DType::kFloat64:
      return reinterpret_cast<const double*>(base)[i];
    case DType::kFloat16:
      return half_to_float(reinterpret_cast<const std::uint16_t*>(base)[i]);
    case DType::kBFloat16:
      return bf16_to_float(reinterpret_cast<const std::uint16_t*>(base)[i]);
    case DType::kInt32:
      return reinterpret_cast<const std::int32_t*>(base)[i];
    case DType::kInt64:
      return static_cast<double>(reinterpret_cast<const std::int64_t*>(base)[i]);
    case DType::kInt8:
      return reinterpret_cast<const std::int8_t*>(base)[i];
    case DType::kUInt8:
      return reinterpret_cast<const std::uint8_t*>(base)[i];
  }
  return 0;
}

std::vector<std::byte> make_input(const Config& c, const Layout& l, int nranks, int rank) {
  std::vector<std::byte> buf(l.send_count * dtype_size(c.dtype));
  for (std::size_t i = 0; i < l.send_count; ++i)
    encode(c.dtype, input_value(c.dtype, c.redop, nranks, rank, i), buf.data(), i);
  return buf;
}

std::optional<double> expected_output(const Config& c, const Layout& l, int n, int rank, std::size_t j) {
  auto in = [&](int r, std::size_t i) { return input_value(c.dtype, c.redop, n, r, i); };
  auto reduced = [&](std::size_t i) {
    double acc = in(0, i);
    for (int r = 1; r < n; ++r) acc = reduce(c.redop, acc, in(r, i));
    return c.redop == RedOp::kAvg ? acc / n : acc;
  };
  const std::size_t chunk = l.chunk;
  switch (c.op) {
    case Op::kAllReduce:
      return reduced(j);
    case Op::kReduce:
      return rank == c.root ? std::optional<double>(reduced(j)) : std::nullopt;
    case Op::kBroadcast:
      return in(c.root, j);
    case Op::kAllGather:
      return in(static_cast<int>(j / chunk), j % chunk);
    case Op::kReduceScatter:
      return reduced(static_cast<std::size_t>(rank) * chunk + j);
    case Op::kAllToAll:
      return in(static_cast<int>(j / chunk), static_cast<std::size_t>(rank) * chunk + j % chunk);
    case Op::kSendRecv:
      return in((rank - 1 + n) % n, j);
  }
  return std::nullopt;
}

std::size_t count_wrong(const Config& c, const Layout& l, int n, int rank, const std::vector<std::byte>& out) {
  // avg divides, so half types round: allow their precision; everything else must be exact.
  double tol = 0;
  if (c.redop == RedOp::kAvg) tol = (c.dtype == DType::kBFloat16) ? 1e-2 : (c.dtype == DType::kFloat16 ? 1e-3 : 1e-6);
  std::size_t wrong = 0;
  for (std::size_t j = 0; j < l.recv_count; ++j) {
    auto want = expected_output(c, l, n, rank, j);
    if (!want) continue;
    double got = decode(c.dtype, out.data(), j);
    if (!(std::fabs(got - *want) <= tol * std::fabs(*want))) ++wrong;
  }
  return wrong;
}

}  // namespace scalebench::collective
