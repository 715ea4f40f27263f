// The gradient check's finite differences (directional_check.hpp) on functions whose gradient is
// known: what decides whether a train run's gradients are reported right or wrong.
#include "workloads/train/directional_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace scalebench::train {
namespace {

// A ReLU along the direction with its kink at 0.003: the first step (1e-2) crosses it and the
// difference is biased by 0.4 * 0.007 / 0.02 = 0.14 on a slope of 0.01; a step of 2.5e-3 does not.
double relu_loss(double e, double slope) { return 2.3 + slope * e + 0.4 * std::max(0.0, e - 0.003); }

constexpr double kUlp = 2.384185791015625e-07;  // 2^-22: the roundoff step of an fp32 loss in [2, 4)

TEST(DirectionalCheck, ASmoothLossMatchesItsGradientAtTheFirstStep) {
  const double norm = 0.05;
  const DirectionalCheck c = check_direction([&](double e) { return 2.3 + norm * e + 3 * e * e; }, norm, kUlp, 0.02);
  EXPECT_LT(c.rel_error, 0.02);
  EXPECT_DOUBLE_EQ(c.step, 2e-3);  // 1e-4 / 0.05
}

TEST(DirectionalCheck, AKinkTheFirstStepCrossesIsPassedAtASmallerStep) {
  const double norm = 0.01;
  auto loss = [&](double e) { return relu_loss(e, norm); };
  EXPECT_GT(std::fabs((loss(1e-2) - loss(-1e-2)) / 2e-2 - norm) / norm, 1.0);
  const DirectionalCheck c = check_direction(loss, norm, kUlp, 0.02);
  EXPECT_LE(c.rel_error, 0.02);
  EXPECT_LT(c.step, 1e-2);
}

TEST(DirectionalCheck, AWrongGradientFailsAtEveryStep) {
  const double true_slope = 0.01;
  for (const double reported : {0.008, 0.012, -0.01, 0.0}) {
    const DirectionalCheck c = check_direction([&](double e) { return 2.3 + true_slope * e; }, reported, kUlp, 0.02);
    EXPECT_GT(c.rel_error, 0.02) << "a gradient norm of " << reported << " for a slope of " << true_slope;
  }
}

TEST(DirectionalCheck, RoundoffOfTheLossIsAllowedForAndReported) {
  // The loss rounded to fp32 as the GPU's: at a tiny gradient the difference is mostly roundoff,
  // which the allowance covers; the step kept is reported.
  const double norm = 1e-3;
  const DirectionalCheck c = check_direction(
      [&](double e) { return static_cast<double>(static_cast<float>(2.3 + norm * e)); }, norm, kUlp, 0.02);
  EXPECT_LE(c.rel_error, 0.02);
  EXPECT_GT(c.step, 0.0);
}

}  // namespace
}  // namespace scalebench::train
