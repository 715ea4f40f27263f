#include "workloads/train/precision_split.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace scalebench::train {
namespace {

// ResNet-50's pattern at batch 256 on an H200 (us): the early convolutions slower in int8, the
// deep ones faster. The split keeps the slow prefix in fp16 and no more.
TEST(PrecisionSplit, KeepsTheSlowPrefixInSixteenBits) {
  const std::vector<ConvTimes> convs{{300, 300}, {124.7, 441.9}, {177.9, 210.2}, {88.8, 112.4}, {40, 20}, {30, 14}};
  EXPECT_EQ(cheapest_split(convs, 0), 4);
  EXPECT_DOUBLE_EQ(split_seconds(convs, 4), 300 + 124.7 + 177.9 + 88.8 + 20 + 14);
}

// A slower layer in the middle does not pull the faster ones before it into 16 bits unless the
// whole prefix pays: here 8 bits at the first two saves 30, 16 at the third saves 10.
TEST(PrecisionSplit, WeighsTheWholePrefix) {
  EXPECT_EQ(cheapest_split({{50, 35}, {50, 35}, {50, 60}, {50, 20}}, 0), 0);
  EXPECT_EQ(cheapest_split({{50, 45}, {50, 45}, {50, 80}, {50, 20}}, 0), 3);
}

// Equal sums take the fewer 16-bit layers; `at_least` is kept (the image's convolution).
TEST(PrecisionSplit, TiesAndTheFloor) {
  EXPECT_EQ(cheapest_split({{10, 10}, {10, 10}}, 0), 0);
  EXPECT_EQ(cheapest_split({{10, 5}, {10, 5}}, 1), 1);
  EXPECT_EQ(cheapest_split({{10, 5}, {10, 5}}, 2), 2);
}

// A convolution with no 8-bit graph (cuDNN's one int8 engine for a 4-channel image refused) must
// be in 16 bits, so every split before it is out; none at all is an error that says so.
TEST(PrecisionSplit, UntimedGraphsRuleSplitsOut) {
  EXPECT_EQ(cheapest_split({{10, -1}, {10, 1}}, 0), 1);
  EXPECT_LT(split_seconds({{10, -1}, {10, 1}}, 0), 0);
  EXPECT_THROW(cheapest_split({{-1, -1}}, 0), Error);
  EXPECT_THROW(cheapest_split({{1, 1}}, 2), Error);
}

}  // namespace
}  // namespace scalebench::train
