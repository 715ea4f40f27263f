#include "workloads/compute/precision.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "common/error.hpp"

namespace scalebench::compute {

namespace {
constexpr std::array<std::pair<Precision, const char*>, 8> kNames{{{Precision::kFp64, "fp64"},
                                                                   {Precision::kFp32, "fp32"},
                                                                   {Precision::kTf32, "tf32"},
                                                                   {Precision::kFp16, "fp16"},
                                                                   {Precision::kBf16, "bf16"},
                                                                   {Precision::kFp8E4M3, "fp8e4m3"},
                                                                   {Precision::kFp8E5M2, "fp8e5m2"},
                                                                   {Precision::kInt8, "int8"}}};
}  // namespace

Precision parse_precision(std::string_view text) {
  for (const auto& [p, n] : kNames)
    if (text == n) return p;
  std::string all;
  for (const auto& [p, n] : kNames) all += (all.empty() ? "" : ", ") + std::string(n);
  throw Error("unknown precision '" + std::string(text) + "' (one of " + all + ")");
}

const char* name(Precision p) {
  for (const auto& [q, n] : kNames)
    if (q == p) return n;
  return "?";
}

gpu::DType element_dtype(Precision p) {
  switch (p) {
    case Precision::kFp64:
      return gpu::DType::kF64;
    case Precision::kFp16:
      return gpu::DType::kF16;
    case Precision::kBf16:
      return gpu::DType::kBf16;
    case Precision::kFp8E4M3:
      return gpu::DType::kE4M3;
    case Precision::kFp8E5M2:
      return gpu::DType::kE5M2;
    case Precision::kInt8:
      return gpu::DType::kI8;
    case Precision::kFp32:
    case Precision::kTf32:
      break;
  }
  return gpu::DType::kF32;
}

int element_bytes(Precision p) { return gpu::dtype_bytes(element_dtype(p)); }

std::string unsupported_on(Precision p, int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  auto needs = [&](int min_cc, const char* gpus) {
    if (cc >= min_cc) return std::string();
    return std::string(name(p)) + " needs compute capability " + std::to_string(min_cc / 10) + "." +
           std::to_string(min_cc % 10) + " or newer (" + gpus + "); this GPU is " + std::to_string(cc_major) + "." +
           std::to_string(cc_minor);
  };
  switch (p) {
    case Precision::kTf32:
    case Precision::kBf16:
      return needs(80, "Ampere and later");
    case Precision::kFp8E4M3:
    case Precision::kFp8E5M2:
      return needs(89, "Ada, Hopper and later");
    case Precision::kInt8:
      return needs(75, "Turing and later");  // int8 Tensor Cores (IMMA)
    case Precision::kFp16:
      return needs(70, "Volta and later");  // fp16 Tensor Cores (HMMA)
    case Precision::kFp64:
    case Precision::kFp32:
      return "";
  }
  return "";
}

// About ten times the unit roundoff of the precision's inputs (or of its output format, whichever
// is coarser): inputs are generated on the precision's grid, so this only has to cover rounding
// of products, sums and the stored output. fp8 keeps its output in 16 bits (bf16/fp16), so its
// bound is bf16's; tf32 has fp16's 10-bit mantissa.
double rel_tolerance(Precision p) {
  switch (p) {
    case Precision::kFp64:
      return 1e-12;
    case Precision::kFp32:
      return 1e-5;
    case Precision::kTf32:
    case Precision::kFp16:
      return 5e-3;
    case Precision::kBf16:
    case Precision::kFp8E4M3:
    case Precision::kFp8E5M2:
      return 4e-2;
    case Precision::kInt8:
      return 0;
  }
  return 0;
}

bool within_tolerance(Precision p, double got, double ref, double scale) {
  if (!std::isfinite(got)) return false;
  return std::fabs(got - ref) <= rel_tolerance(p) * std::max(std::fabs(ref), scale);
}

}  // namespace scalebench::compute
