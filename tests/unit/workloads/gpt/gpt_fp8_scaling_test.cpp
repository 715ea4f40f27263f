// FP8 delayed scaling (workloads/gpt/fp8_scaling.hpp): the scale a window of amax gives, the
// margin, the window's rollover, and zero and non-finite amax. The GPU's update kernel runs the
// same functions.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "workloads/gpt/fp8_scaling.hpp"

using namespace scalebench::gpt;

TEST(GptFp8Scaling, ScaleFitsTheWindowsLargestAmaxIntoTheFormat) {
  // amax 2: E4M3's 448 / 2 = 224; a tensor of amax 2 then reaches exactly 448 after scaling.
  EXPECT_FLOAT_EQ(scale_from_amax(2.f, kE4M3Max, 0, 1.f), 224.f);
  EXPECT_FLOAT_EQ(scale_from_amax(0.001f, kE5M2Max, 0, 1.f), 57344.f / 0.001f);
  EXPECT_FLOAT_EQ(2.f * scale_from_amax(2.f, kE4M3Max, 0, 1.f), kE4M3Max);
}

TEST(GptFp8Scaling, MarginLeavesPowersOfTwoOfHeadroom) {
  EXPECT_FLOAT_EQ(scale_from_amax(2.f, kE4M3Max, 1, 1.f), 112.f);
  EXPECT_FLOAT_EQ(scale_from_amax(2.f, kE4M3Max, 3, 1.f), 28.f);
}

TEST(GptFp8Scaling, ZeroOrNonFiniteAmaxKeepsThePreviousScale) {
  EXPECT_EQ(scale_from_amax(0.f, kE4M3Max, 0, 5.f), 5.f);
  EXPECT_EQ(scale_from_amax(std::numeric_limits<float>::infinity(), kE4M3Max, 0, 5.f), 5.f);
  EXPECT_EQ(scale_from_amax(std::numeric_limits<float>::quiet_NaN(), kE4M3Max, 0, 5.f), 5.f);
  // So small an amax that the quotient overflows: the largest finite scale, never inf.
  EXPECT_EQ(scale_from_amax(1e-40f, kE5M2Max, 0, 5.f), FLT_MAX);
}

TEST(GptFp8Scaling, NonFiniteAmaxIsRecordedAsNothingLearnt) {
  std::vector<float> h(4, 0.f);
  roll_amax_history(h.data(), 4, 3.f);
  roll_amax_history(h.data(), 4, std::numeric_limits<float>::infinity());
  roll_amax_history(h.data(), 4, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(h, (std::vector<float>{0.f, 0.f, 3.f, 0.f}));
  // The window's largest finite amax still sets the scale.
  EXPECT_FLOAT_EQ(history_amax(h.data(), 4), 3.f);
  // A negative value (an amax is a magnitude) counts by its size.
  roll_amax_history(h.data(), 4, -8.f);
  EXPECT_FLOAT_EQ(history_amax(h.data(), 4), 8.f);
}

TEST(GptFp8Scaling, ASpikeSetsTheScaleUntilItRollsOutOfTheWindow) {
  const int len = 3;
  std::vector<float> h(len, 0.f);
  float scale = 1.f;
  // Steps of amax 1, then one spike of 16, then 1 again.
  const float amax[] = {1.f, 16.f, 1.f, 1.f, 1.f, 1.f};
  std::vector<float> scales;
  for (float a : amax) {
    scale = update_delayed_scale(h.data(), len, a, kE4M3Max, 0, scale);
    scales.push_back(scale);
  }
  // The spike holds the scale at 448 / 16 for `len` steps (it entered at step 1 and leaves the
  // 3-step window after step 3), then it is back to 448.
  EXPECT_EQ(scales, (std::vector<float>{448.f, 28.f, 28.f, 28.f, 448.f, 448.f}));
}

TEST(GptFp8Scaling, WindowOfOneFollowsTheLastStep) {
  float h = 0.f, scale = 1.f;
  scale = update_delayed_scale(&h, 1, 4.f, kE5M2Max, 0, scale);
  EXPECT_FLOAT_EQ(scale, kE5M2Max / 4.f);
  scale = update_delayed_scale(&h, 1, 0.5f, kE5M2Max, 0, scale);
  EXPECT_FLOAT_EQ(scale, kE5M2Max / 0.5f);
  // A step whose tensor was all zeros: the window holds only 0, the scale stays.
  scale = update_delayed_scale(&h, 1, 0.f, kE5M2Max, 0, scale);
  EXPECT_FLOAT_EQ(scale, kE5M2Max / 0.5f);
}

TEST(GptFp8Scaling, NothingSeenYetKeepsTheInitialScale) {
  std::vector<float> h(8, 0.f);
  EXPECT_EQ(update_delayed_scale(h.data(), 8, 0.f, kE4M3Max, 0, 1.f), 1.f);
}
