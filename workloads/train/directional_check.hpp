#pragma once
// The finite-difference check of one parameter tensor's gradient, apart from the GPU that
// evaluates the loss: the central difference of the loss along the gradient's own direction v =
// g / |g| must equal |g|. One parameter at a time drowns in the fp32 loss's roundoff; along v the
// whole tensor moves.
#include <functional>

namespace scalebench::train {

struct DirectionalCheck {
  double finite_difference = 0;  // (L(w + e v) - L(w - e v)) / 2e at the step kept
  double step = 0;               // e
  double rel_error = 0;          // |fd - |g|| against |g| plus the roundoff allowance
};

// `loss_at(e)` is the loss at w + e v; `norm` is |g|; `loss_ulp` the loss's roundoff step; `tol`
// the relative bound. Kinks (ReLU, max-pool ties) that a step crosses bias the difference in
// proportion to the step and roundoff in inverse proportion, so three steps are tried: a right
// gradient matches at one of them, a wrong one (scale, sign, direction) at none. Returns the
// step with the smallest error.
DirectionalCheck check_direction(const std::function<double(double)>& loss_at, double norm, double loss_ulp,
                                 double tol);

}  // namespace scalebench::train
