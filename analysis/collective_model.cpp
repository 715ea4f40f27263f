#include "analysis/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

bool CollectiveModel::ok() const {
  if (rank_counts < 2 || points < 2 || bus_bandwidth_gbps.empty()) return false;
  for (const auto& [size, b] : bus_bandwidth_gbps)
    if (!(b > 0) || (std::isinf(b) && !(step_latency_us > 0))) return false;  // a time of 0 is no model
  return true;
}

double CollectiveModel::bandwidth_gbps(double size) const {
  const auto it = bus_bandwidth_gbps.find(size);
  return it == bus_bandwidth_gbps.end() ? 0 : it->second;
}

double CollectiveModel::time_us(int ranks, double size) const {
  const double b = bandwidth_gbps(size);
  if (!ok() || ring_steps(op, ranks) == 0 || !(b > 0)) return 0;
  // B GB/s = B * 1e3 bytes per microsecond.
  return ring_steps(op, ranks) * step_latency_us + factor(op, ranks) * size / (b * 1e3);
}

double CollectiveModel::busbw_gbps(int ranks, double size) const {
  const double t = time_us(ranks, size);
  return t > 0 ? size / t * factor(op, ranks) / 1e3 : 0;  // bytes/us = MB/s; /1e3 = GB/s
}

CollectiveModel fit_collective_model(const std::string& op, const std::vector<CollectivePoint>& points) {
  CollectiveModel m;
  m.op = op;
  // Per point t = a*x1 + c_S*x2 with x1 = steps(n), x2 = factor(n)*S, c_S = 1/B(S); weights w = 1/t^2.
  struct Row {
    double x1, x2, t;
  };
  // Per size: its rows, their rank counts and the weighted sums of the normal equations.
  struct Size {
    std::vector<Row> rows;
    std::set<int> counts;
    double s11 = 0, s12 = 0, s22 = 0, s1t = 0, s2t = 0;
  };
  std::map<double, Size> sizes;
  std::set<int> counts;
  for (const auto& p : points) {
    if (ring_steps(op, p.ranks) == 0 || !(p.time_us > 0) || !(p.size_bytes > 0) || !std::isfinite(p.time_us) ||
        !std::isfinite(p.size_bytes))
      continue;
    Size& s = sizes[p.size_bytes];
    s.rows.push_back({double(ring_steps(op, p.ranks)), factor(op, p.ranks) * p.size_bytes, p.time_us});
    s.counts.insert(p.ranks);
    counts.insert(p.ranks);
    ++m.points;
  }
  m.rank_counts = static_cast<int>(counts.size());
  bool over_counts = false;  // a size measured at 2 rank counts or more
  double scale = 0;
  for (auto& [size, s] : sizes) {
    for (const auto& r : s.rows) {
      const double w = 1 / (r.t * r.t);
      s.s11 += w * r.x1 * r.x1, s.s12 += w * r.x1 * r.x2, s.s22 += w * r.x2 * r.x2;
      s.s1t += w * r.x1 * r.t, s.s2t += w * r.x2 * r.t;
    }
    scale += s.s11;
    over_counts = over_counts || s.counts.size() >= 2;
  }
  if (m.points < 2 || !over_counts) return m;
  // Given a, each c_S minimizes its size's sum alone: c_S = (s2t - a*s12) / s22. Put back, the
  // sum over sizes is a quadratic in a whose minimum is a = sum(s1t - s12*s2t/s22) /
  // sum(s11 - s12^2/s22): each size's Schur complement, 0 for a size at one rank count.
  // A size whose c_S comes out negative is one whose time the latency alone explains (a small
  // size, within its noise; or times that grow with n far more than a ring's): its c_S is held
  // at 0 and a refitted with it, until no other size turns negative. Its B(S) is infinite: no
  // bandwidth term, t = steps(n) * a.
  std::set<double> latency_only;
  double a = 0;
  std::map<double, double> c;
  for (bool changed = true; changed;) {
    changed = false;
    double num = 0, den = 0;
    for (const auto& [size, s] : sizes) {
      if (latency_only.count(size)) {
        num += s.s1t, den += s.s11;
      } else {
        num += s.s1t - s.s12 * s.s2t / s.s22;
        den += s.s11 - s.s12 * s.s12 / s.s22;
      }
    }
    // A latency the points do not tell apart from bandwidth (x1 proportional to x2 within every
    // size, as for sendrecv: one step and factor 1 at every n) changes no prediction: 0.
    a = den > 1e-12 * scale ? num / den : 0;
    if (!(a > 0)) a = 0;  // negative (noise): bandwidths alone
    for (const auto& [size, s] : sizes) {
      c[size] = latency_only.count(size) ? 0 : (s.s2t - a * s.s12) / s.s22;
      if (!latency_only.count(size) && !(c[size] > 0)) latency_only.insert(size), changed = true;
    }
  }
  m.step_latency_us = a;
  for (const auto& [size, s] : sizes) {
    m.bus_bandwidth_gbps[size] = c[size] > 0 ? 1 / c[size] / 1e3 : std::numeric_limits<double>::infinity();
    for (const auto& r : s.rows)
      m.max_fit_error_pct = std::max(m.max_fit_error_pct, std::fabs(a * r.x1 + c[size] * r.x2 - r.t) / r.t * 100);
  }
  return m;
}

}  // namespace scalebench
