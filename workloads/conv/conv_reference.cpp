#include "workloads/conv/conv_reference.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/conv/conv_values.hpp"

namespace scalebench::conv {

Dims input_dims(const ConvShape& s) { return {s.n, s.c, s.h, s.w}; }
Dims filter_dims(const ConvShape& s) { return {s.k, s.c / s.groups, s.r, s.s}; }
Dims output_dims(const ConvShape& s) { return {s.n, s.k, s.p(), s.q()}; }

Dims result_dims(const ConvShape& s, ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward:
      return output_dims(s);
    case ConvPass::kBackwardData:
      return input_dims(s);
    case ConvPass::kBackwardFilter:
      return filter_dims(s);
  }
  return {};
}

long long element_count(const Dims& d) { return d[0] * d[1] * d[2] * d[3]; }

long long storage_offset(const Dims& d, Layout layout, const Index& i) {
  if (layout == Layout::kNchw) return ((i[0] * d[1] + i[1]) * d[2] + i[2]) * d[3] + i[3];
  return ((i[0] * d[2] + i[2]) * d[3] + i[3]) * d[1] + i[1];
}

long long logical_index(const Dims& d, const Index& i) { return storage_offset(d, Layout::kNchw, i); }

std::vector<Index> sample_indices(const Dims& d, long long count) {
  const long long total = element_count(d);
  count = std::clamp(count, 1LL, total);
  std::vector<Index> out;
  long long last = -1;
  for (long long j = 0; j < count; ++j) {
    // Evenly spaced linear positions; an odd multiplier would alias with power-of-two extents,
    // spacing them keeps every channel and image in reach as count grows.
    const long long lin = count == 1 ? 0 : j * (total - 1) / (count - 1);
    if (lin == last) continue;
    last = lin;
    Index i;
    long long t = lin;
    for (int a = 3; a >= 0; --a) {
      i[a] = t % d[a];
      t /= d[a];
    }
    out.push_back(i);
  }
  return out;
}

double reduction_length(const ConvShape& s, ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward:
      return static_cast<double>(s.c / s.groups) * s.r * s.s;
    case ConvPass::kBackwardData:
      return std::max(1.0, static_cast<double>(s.k / s.groups) * s.r * s.s / (s.stride_h * s.stride_w));
    case ConvPass::kBackwardFilter:
      return static_cast<double>(s.n) * s.p() * s.q();
  }
  return 1;
}

double result_scale(const ConvShape& s, ConvPass pass, bool transform_algorithm) {
  const double terms = reduction_length(s, pass);
  if (transform_algorithm) return terms * kGridMeanAbs * kGridMeanAbs;
  return std::sqrt(terms) * kGridRms * kGridRms;
}

long long sample_count(const ConvShape& s, ConvPass pass) {
  constexpr double kTermBudget = 8e6;  // products summed on the host per checked point
  return static_cast<long long>(std::clamp(kTermBudget / reduction_length(s, pass), 16.0, 256.0));
}

double reference_element(const ConvShape& s, ConvPass pass, const Index& i) {
  const Dims xd = input_dims(s), wd = filter_dims(s), yd = output_dims(s);
  const long long cg = s.c / s.groups, kg = s.k / s.groups, P = s.p(), Q = s.q();
  auto x = [&](long long n, long long c, long long h, long long w) {
    return static_cast<double>(grid_value(TensorRole::kInput, logical_index(xd, {n, c, h, w})));
  };
  auto f = [&](long long k, long long c, long long r, long long t) {
    return static_cast<double>(grid_value(TensorRole::kFilter, logical_index(wd, {k, c, r, t})));
  };
  auto dy = [&](long long n, long long k, long long p, long long q) {
    return static_cast<double>(grid_value(TensorRole::kOutputGrad, logical_index(yd, {n, k, p, q})));
  };
  double sum = 0;
  switch (pass) {
    case ConvPass::kForward: {  // y[n,k,p,q] = sum over c, r, s of x[n, c, p*u-pad+r*d, ...] w[k,c,r,s]
      const long long n = i[0], k = i[1], p = i[2], q = i[3], g = k / kg;
      for (long long c = 0; c < cg; ++c)
        for (long long r = 0; r < s.r; ++r) {
          const long long h = p * s.stride_h - s.pad_h + r * s.dil_h;
          if (h < 0 || h >= s.h) continue;
          for (long long t = 0; t < s.s; ++t) {
            const long long w = q * s.stride_w - s.pad_w + t * s.dil_w;
            if (w < 0 || w >= s.w) continue;
            sum += x(n, g * cg + c, h, w) * f(k, c, r, t);
          }
        }
      break;
    }
    case ConvPass::kBackwardData: {  // dx[n,c,h,w]: every y element whose window covered x[n,c,h,w]
      const long long n = i[0], c = i[1], h = i[2], w = i[3], g = c / cg;
      for (long long kk = 0; kk < kg; ++kk)
        for (long long r = 0; r < s.r; ++r) {
          const long long ph = h + s.pad_h - r * s.dil_h;
          if (ph < 0 || ph % s.stride_h != 0 || ph / s.stride_h >= P) continue;
          for (long long t = 0; t < s.s; ++t) {
            const long long qw = w + s.pad_w - t * s.dil_w;
            if (qw < 0 || qw % s.stride_w != 0 || qw / s.stride_w >= Q) continue;
            const long long k = g * kg + kk;
            sum += dy(n, k, ph / s.stride_h, qw / s.stride_w) * f(k, c - g * cg, r, t);
          }
        }
      break;
    }
    case ConvPass::kBackwardFilter: {  // dw[k,c,r,s] = sum over n, p, q of dy[n,k,p,q] x[n, c, ...]
      const long long k = i[0], c = i[1], r = i[2], t = i[3], g = k / kg;
      for (long long n = 0; n < s.n; ++n)
        for (long long p = 0; p < P; ++p) {
          const long long h = p * s.stride_h - s.pad_h + r * s.dil_h;
          if (h < 0 || h >= s.h) continue;
          for (long long q = 0; q < Q; ++q) {
            const long long w = q * s.stride_w - s.pad_w + t * s.dil_w;
            if (w < 0 || w >= s.w) continue;
            sum += dy(n, k, p, q) * x(n, g * cg + c, h, w);
          }
        }
      break;
    }
  }
  return sum;
}

}  // namespace scalebench::conv
