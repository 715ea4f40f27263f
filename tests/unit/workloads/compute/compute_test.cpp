#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "record/record.hpp"
#include "workloads/compute/compute_records.hpp"
#include "workloads/compute/peak.hpp"
#include "workloads/compute/precision.hpp"

using namespace scalebench;
using namespace scalebench::compute;

TEST(Precision, NamesRoundTripAndUnknownIsNamed) {
  for (const char* n : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "int8"})
    EXPECT_STREQ(name(parse_precision(n)), n);
  try {
    parse_precision("fp4");
    FAIL() << "fp4 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'fp4'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);
  }
  EXPECT_EQ(element_bytes(Precision::kTf32), 4);
  EXPECT_EQ(element_bytes(Precision::kFp8E5M2), 1);
}

TEST(Precision, HardwareSupportByComputeCapability) {
  EXPECT_EQ(unsupported_on(Precision::kFp8E4M3, 9, 0), "");
  EXPECT_EQ(unsupported_on(Precision::kFp8E5M2, 8, 9), "");
  const std::string a100 = unsupported_on(Precision::kFp8E4M3, 8, 0);
  EXPECT_NE(a100.find("8.9"), std::string::npos) << a100;
  EXPECT_NE(a100.find("this GPU is 8.0"), std::string::npos) << a100;
  EXPECT_EQ(unsupported_on(Precision::kBf16, 8, 0), "");
  EXPECT_NE(unsupported_on(Precision::kBf16, 7, 5), "");
  EXPECT_NE(unsupported_on(Precision::kTf32, 7, 0), "");
  EXPECT_EQ(unsupported_on(Precision::kFp64, 6, 0), "");
}

TEST(Precision, ToleranceScalesWithTheOutputAndIsExactForInt8) {
  // bf16: 4% of max(|ref|, scale).
  EXPECT_TRUE(within_tolerance(Precision::kBf16, 103, 100, 10));
  EXPECT_FALSE(within_tolerance(Precision::kBf16, 105, 100, 10));
  // A result near zero is judged against the typical output size, not against itself.
  EXPECT_TRUE(within_tolerance(Precision::kFp16, 0.04, 0.0, 10));
  EXPECT_FALSE(within_tolerance(Precision::kFp16, 0.06, 0.0, 10));
  // fp32 on CUDA cores is far tighter than tf32.
  EXPECT_FALSE(within_tolerance(Precision::kFp32, 100.01, 100, 1));
  EXPECT_TRUE(within_tolerance(Precision::kTf32, 100.01, 100, 1));
  EXPECT_TRUE(within_tolerance(Precision::kInt8, 4096, 4096, 100));
  EXPECT_FALSE(within_tolerance(Precision::kInt8, 4097, 4096, 100));
  EXPECT_FALSE(within_tolerance(Precision::kFp32, std::nan(""), 1, 1));
  EXPECT_FALSE(within_tolerance(Precision::kFp32, std::numeric_limits<double>::infinity(), 1, 1));
}

namespace {
Json context() {
  Json c{{"schema_version", kRecordSchemaVersion},
         {"run_id", 7},
         {"experiment", "e"},
         {"workload", "gemm"},
         {"params", Json::object()}};
  return c;
}

RankOutcome measured(std::vector<double> seconds, long long wrong = 0) {
  RankOutcome o;
  o.seconds = std::move(seconds);
  o.wrong = wrong;
  o.checked = 1000;
  return o;
}

const Json* find(const std::vector<Json>& rs, const std::string& metric, const Json& gpu) {
  for (const Json& r : rs)
    if (r["metric"] == metric && r["point"]["gpu"] == gpu) return &r;
  return nullptr;
}
}  // namespace

TEST(ComputeRecords, TableRowSaysWhenAGpuWasHeldDownByItsLimits) {
  const Throughput tp{1e12, 1e-12, "TFLOP/s"};
  RankOutcome calm = measured({0.01}), capped = measured({0.01});
  calm.details["clock_limits"] = {{"window_ms", 1000.0}, {"power_capped_ms", 2.0}, {"thermal_capped_ms", 0.0}};
  capped.details["clock_limits"] = {{"window_ms", 1000.0}, {"power_capped_ms", 310.0}, {"thermal_capped_ms", 0.0}};
  const std::string row = table_row(Json{{"m", 1}}, tp, {calm, capped});
  EXPECT_NE(row.find("per-GPU 100 TFLOP/s"), std::string::npos) << row;
  EXPECT_NE(row.find("clocks limited 31% of the point"), std::string::npos) << row;
  // Under 1%, or no NVML: nothing is said.
  EXPECT_EQ(table_row(Json{{"m", 1}}, tp, {calm, measured({0.01})}).find("clocks limited"), std::string::npos);
}

TEST(ComputeRecords, OneGpuHasTimeAndThroughputOnly) {
  const Throughput tp{2e12, 1e-12, "TFLOP/s"};  // 2 TFLOP per operation
  const auto rs = point_records(context(), Json{{"m", 8192}}, tp, {measured({0.01, 0.02, 0.01})});
  ASSERT_EQ(rs.size(), 2u);
  const Json* t = find(rs, "throughput", 0);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ((*t)["value"].get<double>(), 200.0);  // median of 200, 100, 200
  EXPECT_EQ((*t)["unit"], "TFLOP/s");
  EXPECT_EQ((*t)["point"]["m"], 8192);
  EXPECT_EQ((*t)["status"], "ok");
  EXPECT_EQ((*t)["correctness"]["passed"], true);
  EXPECT_DOUBLE_EQ((*find(rs, "time", 0))["value"].get<double>(), 10000.0);  // us
  for (const Json& r : rs) EXPECT_EQ(validate_record(r), "") << r.dump();
}

TEST(ComputeRecords, AllGpusSumSampleBySampleAndReportTheSpread) {
  const Throughput tp{1e12, 1e-12, "TFLOP/s"};
  // GPU 0: 100 TFLOP/s throughout; GPU 1: 50 then 80 (a throttling GPU), one sample fewer.
  const auto rs = point_records(context(), Json{{"m", 1}}, tp,
                                {measured({0.01, 0.01, 0.01}), measured({0.02, 1.0 / 80, 1.0 / 80})});
  ASSERT_EQ(rs.size(), 6u);
  const Json* total = find(rs, "throughput_total", "all");
  ASSERT_TRUE(total);
  EXPECT_EQ((*total)["stats"]["samples"].size(), 3u);
  EXPECT_NEAR((*total)["stats"]["samples"][0].get<double>(), 150.0, 1e-9);
  EXPECT_NEAR((*total)["value"].get<double>(), 180.0, 1e-9);
  EXPECT_EQ((*total)["point"]["gpus"], 2);
  EXPECT_EQ((*total)["correctness"]["elements"], 2000);
  const Json* spread = find(rs, "gpu_spread", "all");
  ASSERT_TRUE(spread);
  // Per-GPU medians 100 and 80: (100 - 80) / 90.
  EXPECT_NEAR((*spread)["value"].get<double>(), 100.0 * 20 / 90, 1e-9);
  EXPECT_EQ((*spread)["unit"], "%");
  EXPECT_EQ((*spread)["better"], "lower");
  EXPECT_EQ((*spread)["details"]["slowest_gpu"], 1);
  for (const Json& r : rs) EXPECT_EQ(validate_record(r), "") << r.dump();
}

TEST(ComputeRecords, WrongOutputFailsItsGpuAndTheTotal) {
  const Throughput tp{1e9, 1, "samples/s"};
  const auto rs = point_records(context(), Json{{"h", 128}}, tp, {measured({1, 1, 1}), measured({1, 1, 1}, 3)});
  EXPECT_EQ((*find(rs, "throughput", 0))["status"], "ok");
  const Json& bad = *find(rs, "throughput", 1);
  EXPECT_EQ(bad["status"], "failed");
  EXPECT_EQ(bad["reason"], "3 of 1000 checked output elements off the reference");
  EXPECT_EQ(bad["correctness"]["passed"], false);
  const Json& total = *find(rs, "throughput_total", "all");
  EXPECT_EQ(total["status"], "failed");
  EXPECT_EQ(total["correctness"]["wrong"], 3);
  EXPECT_NE(total["reason"].get<std::string>().find("GPU 1:"), std::string::npos);
}

TEST(ComputeRecords, SkippedOrFailedBeforeMeasuringIsOneStatusRecordWithThePoint) {
  const Throughput tp{1, 1, "TFLOP/s"};
  RankOutcome skip;
  skip.status = "skipped";
  skip.reason = "fp8e4m3 needs compute capability 8.9";
  auto rs = point_records(context(), Json{{"precision", "fp8e4m3"}}, tp, {skip, skip});
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0]["status"], "skipped");
  EXPECT_EQ(rs[0]["reason"], skip.reason);
  EXPECT_EQ(rs[0]["point"]["precision"], "fp8e4m3");
  EXPECT_EQ(validate_record(rs[0]), "");

  RankOutcome oom;
  oom.status = "failed";
  oom.reason = "out of memory";
  rs = point_records(context(), Json{{"m", 1}}, tp, {measured({1, 1, 1}), oom});
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0]["status"], "failed");
  EXPECT_EQ(rs[0]["reason"], "out of memory");
}

TEST(ComputeRecords, OutcomeTravelsBetweenRanksIntact) {
  RankOutcome o = measured({0.5, 0.25}, 2);
  o.details = Json{{"algorithm", 3}};
  const RankOutcome back = RankOutcome::from_json(Json::parse(o.to_json().dump()));
  EXPECT_EQ(back.seconds, o.seconds);
  EXPECT_EQ(back.wrong, 2);
  EXPECT_EQ(back.checked, 1000);
  EXPECT_EQ(back.details["algorithm"], 3);
}

TEST(Peak, HopperAndAmpereDensePeaksAtTheMaximumClock) {
  // H200: 132 SMs at 1980 MHz. bf16 dense: 4096 FLOP per SM per clock = 1070.5 TFLOP/s.
  EXPECT_NEAR(peak_ops_per_second(Precision::kBf16, 9, 0, 132, 1980) / 1e12, 1070.5, 0.1);
  EXPECT_NEAR(peak_ops_per_second(Precision::kFp32, 9, 0, 132, 1980) / 1e12, 66.9, 0.1);
  EXPECT_DOUBLE_EQ(peak_ops_per_second(Precision::kFp8E4M3, 9, 0, 132, 1980),
                   2 * peak_ops_per_second(Precision::kFp16, 9, 0, 132, 1980));
  EXPECT_DOUBLE_EQ(peak_ops_per_second(Precision::kTf32, 9, 0, 132, 1980),
                   peak_ops_per_second(Precision::kFp16, 9, 0, 132, 1980) / 2);
  // A100 SXM: 108 SMs at 1410 MHz: the data sheet's 312 TFLOP/s fp16, 19.5 fp64.
  EXPECT_NEAR(peak_ops_per_second(Precision::kFp16, 8, 0, 108, 1410) / 1e12, 311.9, 0.1);
  EXPECT_NEAR(peak_ops_per_second(Precision::kFp64, 8, 0, 108, 1410) / 1e12, 19.5, 0.1);
  EXPECT_EQ(peak_ops_per_second(Precision::kFp8E4M3, 8, 0, 108, 1410), 0);  // no fp8 on A100
  EXPECT_EQ(peak_ops_per_second(Precision::kFp16, 7, 5, 40, 1590), 0);      // not in the table
}
