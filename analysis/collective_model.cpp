#include "analysis/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/bus_bandwidth.hpp"
#include "analysis/scaling_model.hpp"

namespace scalebench {

namespace {
// busbw factor of `op` at n ranks; 0 for an op the collectives do not know.
double factor(const std::string& op, int n) {
  if (ring_steps(op, n) == 0) return 0;
  return analysis::busbw_factor(analysis::parse_op(op), n);
}
}  // namespace

double CollectiveModel::time_us(int ranks, double size) const {
  if (!ok() || ring_steps(op, ranks) == 0) return 0;
  // B GB/s = B * 1e3 bytes per microsecond.
  return ring_steps(op, ranks) * step_latency_us + factor(op, ranks) * size / (bus_bandwidth_gbps * 1e3);
}

double CollectiveModel::busbw_gbps(int ranks, double size) const {
  const double t = time_us(ranks, size);
  return t > 0 ? size / t * factor(op, ranks) / 1e3 : 0;  // bytes/us = MB/s; /1e3 = GB/s
}

CollectiveModel fit_collective_model(const std::string& op, const std::vector<CollectivePoint>& points) {
  CollectiveModel m;
  m.op = op;
  // t = a*x1 + c*x2 with x1 = steps(n), x2 = factor(n)*S, c = 1/B: weighted normal equations, w = 1/t^2.
  struct Row {
    double x1, x2, t;
  };
  std::vector<Row> rows;
  std::set<int> counts;
  for (const auto& p : points) {
    if (ring_steps(op, p.ranks) == 0 || !(p.time_us > 0) || !(p.size_bytes > 0)) continue;
    rows.push_back({double(ring_steps(op, p.ranks)), factor(op, p.ranks) * p.size_bytes, p.time_us});
    counts.insert(p.ranks);
  }
  m.points = static_cast<int>(rows.size());
  m.rank_counts = static_cast<int>(counts.size());
  double s11 = 0, s12 = 0, s22 = 0, s1t = 0, s2t = 0;
  for (const auto& r : rows) {
    const double w = 1 / (r.t * r.t);
    s11 += w * r.x1 * r.x1, s12 += w * r.x1 * r.x2, s22 += w * r.x2 * r.x2;
    s1t += w * r.x1 * r.t, s2t += w * r.x2 * r.t;
  }
  const double det = s11 * s22 - s12 * s12;
  if (rows.size() < 2 || !(s22 > 0)) return m;
  double a = 0, c = 0;
  if (det > 1e-12 * s11 * s22) {
    a = (s22 * s1t - s12 * s2t) / det;
    c = (s11 * s2t - s12 * s1t) / det;
  }
  if (a < 0 || !(det > 1e-12 * s11 * s22)) a = 0, c = s2t / s22;  // through the origin: bandwidth alone
  if (!(c > 0)) return m;
  m.step_latency_us = a;
  m.bus_bandwidth_gbps = 1 / c / 1e3;
  for (const auto& r : rows)
    m.max_fit_error_pct = std::max(m.max_fit_error_pct, std::fabs(a * r.x1 + c * r.x2 - r.t) / r.t * 100);
  return m;
}

}  // namespace scalebench
