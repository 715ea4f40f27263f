#include "workloads/gemm/gemm_check.hpp"

#include <cmath>
#include <set>

#include "workloads/gemm/gemm_pattern.hpp"

namespace scalebench::gemm {

using compute::Precision;

double input_value(Precision p, unsigned which, long long row, long long col) {
  const int v = pattern_int(which, static_cast<unsigned long long>(row), static_cast<unsigned long long>(col));
  return p == Precision::kInt8 ? v : v * kFloatInputStep;
}

double reference(Precision p, const Shape& s, long long i, long long j) {
  double sum = 0;
  for (long long l = 0; l < s.k; ++l) sum += input_value(p, 0, i, l) * input_value(p, 1, l, j);
  return sum;
}

double output_scale(Precision p, const Shape& s) {
  const double rms2 = p == Precision::kInt8 ? 24.0 : 24.0 * kFloatInputStep * kFloatInputStep;
  return std::sqrt(static_cast<double>(s.k)) * rms2;
}

std::vector<std::pair<long long, long long>> sample_indices(const Shape& s, int count) {
  std::vector<std::pair<long long, long long>> out;
  std::set<std::pair<long long, long long>> seen;
  auto add = [&](long long i, long long j) {
    if (static_cast<int>(out.size()) < count && seen.insert({i, j}).second) out.push_back({i, j});
  };
  add(0, 0);
  add(s.m - 1, s.n - 1);
  add(s.m - 1, 0);
  add(0, s.n - 1);
  const long long total = s.m * s.n;
  unsigned long long x = 0x2545F4914F6CDD1DULL;
  for (int tries = 0; static_cast<int>(out.size()) < count && tries < 4 * count; ++tries) {
    x ^= x << 13;  // xorshift64: a fixed scatter, the same on every run
    x ^= x >> 7;
    x ^= x << 17;
    const long long e = static_cast<long long>(x % static_cast<unsigned long long>(total));
    add(e % s.m, e / s.m);
  }
  return out;
}

long long count_wrong(Precision p, const Shape& s, const std::vector<std::pair<long long, long long>>& at,
                      const std::vector<double>& got) {
  const double scale = output_scale(p, s);
  long long wrong = 0;
  for (std::size_t e = 0; e < at.size(); ++e)
    if (e >= got.size() || !compute::within_tolerance(p, got[e], reference(p, s, at[e].first, at[e].second), scale))
      ++wrong;
  return wrong;
}

}  // namespace scalebench::gemm
