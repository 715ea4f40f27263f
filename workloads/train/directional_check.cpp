#include "workloads/train/directional_check.hpp"

#include <algorithm>
#include <cmath>

namespace scalebench::train {

DirectionalCheck check_direction(const std::function<double(double)>& loss_at, double norm, double loss_ulp,
                                 double tol) {
  // The first step moves the loss by about 1e-4, well above its roundoff.
  const double e0 = std::clamp(1e-4 / std::max(norm, 1e-12), 1e-4, 1e-2);
  DirectionalCheck best{0, e0, INFINITY};
  for (const double e : {e0, e0 / 4, e0 / 16}) {
    const double fd = (loss_at(e) - loss_at(-e)) / (2 * e);
    // Beside the relative bound, 4 roundoff steps of the loss over the difference's width.
    const double rel = std::fabs(fd - norm) / (std::max(norm, 1e-12) + 4 * loss_ulp / (2 * e) / tol);
    if (!(rel >= best.rel_error)) best = {fd, e, rel};
    if (best.rel_error <= tol) break;
  }
  return best;
}

}  // namespace scalebench::train
