#include "analysis/variant_ratio.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "tests/unit/error_text.hpp"

namespace scalebench {
namespace {

Json record(const std::string& variant, int round, double value, std::uint64_t size = 1024,
            std::vector<double> samples = {}) {
  if (samples.empty()) samples = {value};
  return Json{{"experiment", "e"},
              {"workload", "collective"},
              {"variant", variant},
              {"round", round},
              {"params", {{"op", "all_reduce"}}},
              {"placement", {{"gpus", 4}, {"ranks", 4}}},
              {"point", {{"size", size}}},
              {"metric", "busbw"},
              {"unit", "GB/s"},
              {"status", "ok"},
              {"value", value},
              {"stats", {{"samples", samples}}}};
}

TEST(PairedRatio, IdenticalPairsGiveAZeroWidthInterval) {
  RatioCi ci = paired_ratio({10, 20, 40}, {5, 10, 20});
  EXPECT_DOUBLE_EQ(ci.ratio, 2.0);
  EXPECT_NEAR(ci.low, 2.0, 1e-12);
  EXPECT_NEAR(ci.high, 2.0, 1e-12);
}

TEST(PairedRatio, IsTheGeometricMeanWithAStudentTInterval) {
  // log ratios: ln 2 and ln 8 -> mean ln 4; sd = ln 4 / sqrt(2); half = t(1) * sd / sqrt(2).
  RatioCi ci = paired_ratio({2, 8}, {1, 1});
  EXPECT_NEAR(ci.ratio, 4.0, 1e-12);
  const double half = 12.7062047361747 * std::log(4.0) / 2;
  EXPECT_NEAR(std::log(ci.low), std::log(4.0) - half, 1e-9);
  EXPECT_NEAR(std::log(ci.high), std::log(4.0) + half, 1e-9);
}

TEST(PairedRatio, RejectsUnequalEmptyOrNonPositiveInput) {
  EXPECT_THROW(paired_ratio({1, 2}, {1}), Error);
  EXPECT_THROW(paired_ratio({}, {}), Error);
  EXPECT_THROW(paired_ratio({1, 0}, {1, 1}), Error);
}

// Reference values: R's qt(0.975, dof). 31 and 61 degrees of freedom fell between the rows of
// the table this replaced, which gave 2.000 and 1.980 there.
TEST(PairedRatio, TQuantilesAreStudentsT) {
  EXPECT_NEAR(t_quantile_975(1), 12.7062047, 1e-6);
  EXPECT_NEAR(t_quantile_975(9), 2.2621572, 1e-6);
  EXPECT_NEAR(t_quantile_975(31), 2.0395134, 1e-6);
  EXPECT_NEAR(t_quantile_975(61), 1.9996236, 1e-6);
  EXPECT_NEAR(t_quantile_975(1000), 1.9623391, 1e-6);
  EXPECT_THROW(t_quantile_975(0), Error);
}

TEST(VariantRatios, PairsRoundsOfTheSamePointAndDropsDrift) {
  // The machine slows down between rounds; each round's pair still has ratio 10.
  Json records = Json::array({record("nvlink", 1, 300), record("pcie", 1, 30), record("nvlink", 2, 200),
                              record("pcie", 2, 20), record("nvlink", 3, 100), record("pcie", 3, 10)});
  auto r = variant_ratios(records, "nvlink", "pcie", "busbw");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NEAR(r[0].ratio, 10.0, 1e-9);
  EXPECT_NEAR(r[0].ci_low, 10.0, 1e-9);
  EXPECT_NEAR(r[0].ci_high, 10.0, 1e-9);
  EXPECT_EQ(r[0].pairs, 3);
  EXPECT_EQ(r[0].paired_by, "rounds");
  EXPECT_DOUBLE_EQ(r[0].numerator, 200);
  EXPECT_DOUBLE_EQ(r[0].denominator, 20);
}

TEST(VariantRatios, KeepsSizesApartAndSkipsUnpairedOrFailedPoints) {
  Json failed = record("pcie", 1, 5, 2048);
  failed["status"] = "failed";
  Json records =
      Json::array({record("nvlink", 1, 300, 1024), record("pcie", 1, 30, 1024), record("nvlink", 1, 50, 2048), failed,
                   record("nvlink", 1, 7, 4096), record("other", 1, 1, 4096)});
  auto r = variant_ratios(records, "nvlink", "pcie", "busbw");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].key["point"], 1024);
}

TEST(VariantRatios, OneRoundPairsTheSamplesInOrder) {
  Json records =
      Json::array({record("nvlink", 1, 300, 1024, {300, 310, 290}), record("pcie", 1, 30, 1024, {30, 31, 29})});
  auto r = variant_ratios(records, "nvlink", "pcie", "busbw");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].paired_by, "samples");
  EXPECT_EQ(r[0].pairs, 3);
  EXPECT_NEAR(r[0].ratio, 10.0, 1e-9);
}

// A sample stored as null (NaN when it was written) stops the ratio with the record and the field
// named, not with the JSON library's type error.
TEST(VariantRatios, ANullSampleIsNamed) {
  Json a = record("nvlink", 1, 300, 1024, {300, 310, 290}), b = record("pcie", 1, 30, 1024, {30, 31, 29});
  b["stats"]["samples"][1] = nullptr;
  const std::string what = test_support::error_of([&] {
    variant_ratios(Json::array({a, b}), "nvlink", "pcie", "busbw");
  });
  EXPECT_NE(what.find("variant pcie"), std::string::npos) << what;
  EXPECT_NE(what.find("stats.samples[1] is null"), std::string::npos) << what;
}

TEST(VariantRatios, IgnoredParamsLetVariantsThatSetParametersPair) {
  Json a = record("graph", 1, 20), b = record("plain", 1, 10);
  a["params"]["cuda_graph"] = true;
  b["params"]["cuda_graph"] = false;
  EXPECT_TRUE(variant_ratios(Json::array({a, b}), "graph", "plain", "busbw").empty());
  auto r = variant_ratios(Json::array({a, b}), "graph", "plain", "busbw", {"cuda_graph"});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_DOUBLE_EQ(r[0].ratio, 2.0);
}

}  // namespace
}  // namespace scalebench
