#include "analysis/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace scalebench {
namespace {

TEST(Median, OddCountIsTheMiddleOfTheSortedSamples) {
  std::vector<double> v{5, 1, 3};
  EXPECT_DOUBLE_EQ(median(v), 3);
  EXPECT_EQ(v, (std::vector<double>{5, 1, 3})) << "the input is left as it was";
}

TEST(Median, EvenCountAveragesTheTwoMiddleSamples) {
  EXPECT_DOUBLE_EQ(median(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{7, 7}), 7);
}

TEST(Median, EmptyAndSingle) {
  EXPECT_DOUBLE_EQ(median(std::vector<double>{}), 0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{42}), 42);
}

TEST(Mean, Basic) {
  EXPECT_DOUBLE_EQ(mean(std::vector<double>{1, 2, 3, 4}), 2.5);
  EXPECT_DOUBLE_EQ(mean(std::vector<double>{}), 0);
  EXPECT_DOUBLE_EQ(mean(std::vector<double>{-3, 3}), 0);
}

TEST(Stddev, IsTheSampleStandardDeviation) {
  // Sum of squared deviations from the mean 5 is 32; n-1 = 7.
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9}), std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{1, 3}), std::sqrt(2.0));
}

TEST(Stddev, ZeroBelowTwoSamplesOrWhenConstant) {
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{}), 0);
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{5}), 0);
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{5, 5, 5}), 0);
}

TEST(Summarize, FillsEveryField) {
  std::vector<double> v{9, 2, 4, 4, 5, 5, 7, 4};
  Summary s = summarize(v);
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(32.0 / 7.0) / 5);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
}

TEST(Summarize, EmptyIsAllZero) {
  Summary s = summarize(std::vector<double>{});
  EXPECT_EQ(s.n, 0u);
  EXPECT_DOUBLE_EQ(s.median, 0);
  EXPECT_DOUBLE_EQ(s.mean, 0);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_DOUBLE_EQ(s.min, 0);
  EXPECT_DOUBLE_EQ(s.max, 0);
}

TEST(Summarize, CvIsRelativeToTheMagnitudeOfTheMean) {
  Summary neg = summarize(std::vector<double>{-1, -3});
  EXPECT_DOUBLE_EQ(neg.mean, -2);
  EXPECT_DOUBLE_EQ(neg.cv, std::sqrt(2.0) / 2) << "cv is never negative";
  Summary zero_mean = summarize(std::vector<double>{-1, 1});
  EXPECT_DOUBLE_EQ(zero_mean.cv, 0) << "no division by a zero mean";
}

}  // namespace
}  // namespace scalebench
