#include "analysis/scaling_model.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/bus_bandwidth.hpp"

namespace scalebench {

AlphaBetaFit fit_alpha_beta(const std::vector<double>& sizes, const std::vector<double>& times) {
  AlphaBetaFit fit;
  // Weighted normal equations for t = a + b s with w = 1/t^2.
  double sw = 0, sws = 0, swt = 0, swss = 0, swst = 0;
  int n = 0;
  for (std::size_t i = 0; i < sizes.size() && i < times.size(); ++i) {
    if (!(times[i] > 0)) continue;
    const double w = 1.0 / (times[i] * times[i]);
    sw += w, sws += w * sizes[i], swt += w * times[i], swss += w * sizes[i] * sizes[i], swst += w * sizes[i] * times[i];
    ++n;
  }
  fit.points = n;
  const double det = sw * swss - sws * sws;
  if (n < 2 || det <= 0) return fit;
  fit.beta_us_per_byte = (sw * swst - sws * swt) / det;
  fit.alpha_us = (swt - fit.beta_us_per_byte * sws) / sw;
  if (fit.alpha_us < 0) {  // a negative start-up time is noise: refit the slope through the origin
    fit.alpha_us = 0;
    fit.beta_us_per_byte = swst / swss;
  }
  const double mean_t = swt / sw;
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < sizes.size() && i < times.size(); ++i) {
    if (!(times[i] > 0)) continue;
    const double w = 1.0 / (times[i] * times[i]);
    const double r = times[i] - (fit.alpha_us + fit.beta_us_per_byte * sizes[i]);
    ss_res += w * r * r;
    ss_tot += w * (times[i] - mean_t) * (times[i] - mean_t);
  }
  fit.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  return fit;
}

int ring_steps(const std::string& op, int n) {
  if (n < 2) return 0;
  if (op == "all_reduce") return 2 * (n - 1);
  if (op == "sendrecv") return 1;
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall" || op == "broadcast" || op == "reduce")
    return n - 1;
  return 0;
}

double predict_busbw(const AlphaBetaFit& fit, const std::string& op, int n_fit, int n, double size) {
  if (!fit.ok() || ring_steps(op, n_fit) == 0 || ring_steps(op, n) == 0) return 0;
  const auto parsed = analysis::parse_op(op);
  const double factor_fit = analysis::busbw_factor(parsed, n_fit), factor = analysis::busbw_factor(parsed, n);
  if (factor_fit <= 0 || factor <= 0) return 0;
  const double bus_bytes_per_us = factor_fit / fit.beta_us_per_byte;
  const double alpha_step = fit.alpha_us / ring_steps(op, n_fit);
  const double t_us = alpha_step * ring_steps(op, n) + size * factor / bus_bytes_per_us;
  return size / t_us * factor / 1e3;  // bytes/us = MB/s; /1e3 = GB/s
}

ThroughputModel fit_throughput(const std::vector<int>& workers, const std::vector<double>& throughput) {
  ThroughputModel m;
  // Per-worker time per item at each worker count.
  std::vector<std::pair<int, double>> t;
  for (std::size_t i = 0; i < workers.size() && i < throughput.size(); ++i)
    if (workers[i] > 0 && throughput[i] > 0) t.emplace_back(workers[i], workers[i] / throughput[i]);
  std::sort(t.begin(), t.end());
  if (t.size() < 2) return m;
  m.points = static_cast<int>(t.size());
  // t1 from the smallest count (1 worker when measured); c, d from the rest by least squares on
  // x1 = 2(N-1)/N - 2(n0-1)/n0 and x2 = (N-1) - (n0-1), both terms kept non-negative.
  const int n0 = t.front().first;
  const double t0 = t.front().second;
  auto bw = [](int n) { return 2.0 * (n - 1) / n; };
  double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0;
  int extra = 0;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const double x1 = bw(t[i].first) - bw(n0), x2 = (t[i].first - 1) - (n0 - 1), y = t[i].second - t0;
    s11 += x1 * x1, s12 += x1 * x2, s22 += x2 * x2, s1y += x1 * y, s2y += x2 * y;
    ++extra;
  }
  double c = 0, d = 0;
  const double det = s11 * s22 - s12 * s12;
  if (extra >= 2 && det > 1e-12 * s11 * s22) {
    c = (s22 * s1y - s12 * s2y) / det;
    d = (s11 * s2y - s12 * s1y) / det;
  }
  if (extra < 2 || c < 0 || d < 0) {  // too few points, or a term came out negative: one term only
    c = s11 > 0 ? std::max(0.0, s1y / s11) : 0;
    d = 0;
  }
  m.c = c, m.d = d;
  m.t1 = t0 - c * bw(n0) - d * (n0 - 1);
  if (m.t1 <= 0) m.t1 = t0, m.c = 0, m.d = 0;
  double mean = 0;
  for (const auto& [n, time] : t) mean += n / time / t.size();
  double res = 0, tot = 0;
  for (const auto& [n, time] : t) {
    res += std::pow(n / time - predict_throughput(m, n), 2);
    tot += std::pow(n / time - mean, 2);
  }
  // Every count measured the same: explained when the model passes through them.
  m.r2 = tot > 0 ? 1 - res / tot : res <= 1e-12 * mean * mean ? 1.0 : 0.0;
  return m;
}

double predict_throughput(const ThroughputModel& m, int n) {
  if (!m.ok() || n < 1) return 0;
  return n / (m.t1 + m.c * 2.0 * (n - 1) / n + m.d * (n - 1));
}

double predict_efficiency(const ThroughputModel& m, int n) {
  if (!m.ok() || n < 1) return 0;
  return predict_throughput(m, n) / (n * predict_throughput(m, 1));
}

}  // namespace scalebench
