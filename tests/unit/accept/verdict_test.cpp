// The rule engine over records: expected bands (peak x efficiency with the clock correction,
// fleet median and MAD, baseline, fixed, relative), unknown models, skipped records, the
// agreement by majority (a disagreeing GPU named) and the roll-up per GPU and node.
#include "accept/verdict.hpp"

#include <gtest/gtest.h>

namespace scalebench::accept {
namespace {

Json record(const std::string& workload, const std::string& metric, double value, const std::string& host, int gpu,
            const std::string& model, Json extra = Json::object()) {
  Json r{{"workload", workload},
         {"metric", metric},
         {"value", value},
         {"status", "ok"},
         {"better", "higher"},
         {"unit", "TFLOP/s"},
         {"point", Json{{"gpu", gpu}, {"host", host}, {"model", model}}}};
  for (const auto& [k, v] : extra.items()) r[k] = v;
  return r;
}

RuleSet rules(const std::string& yaml) { return parse_rules(yaml, "t.yaml"); }

const Verdict& only(const std::vector<Verdict>& v) {
  EXPECT_EQ(v.size(), 1u);
  return v.front();
}

TEST(Band, MedianAndMad) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(mad_of({1, 2, 3, 4, 100}), 1);  // the outlier does not widen it
}

TEST(Band, PeakTimesTheModelsEfficiency) {
  const RuleSet r = rules(
      "rules:\n  - name: g\n    select: {workload: gemm, metric: throughput}\n"
      "    band: {from: peak, efficiency: {H100: 0.7, H100 NVL: 0.6, default: 0.5}}\n");
  const Json peak{{"value", 1000.0}, {"unit", "TFLOP/s"}, {"basis", "132 SMs, 1980 MHz"}};
  auto v = evaluate(r, {record("gemm", "throughput", 690, "n1", 0, "NVIDIA H100 80GB HBM3", {{"peak", peak}})});
  EXPECT_EQ(only(v).outcome, "fail");
  EXPECT_DOUBLE_EQ(*only(v).band.lo, 700);
  EXPECT_NE(only(v).reason.find("690 TFLOP/s is below 700"), std::string::npos) << only(v).reason;
  // The longest name part wins; an unknown model takes the default.
  v = evaluate(r, {record("gemm", "throughput", 610, "n1", 0, "NVIDIA H100 NVL", {{"peak", peak}})});
  EXPECT_EQ(only(v).outcome, "pass");
  EXPECT_DOUBLE_EQ(*only(v).band.lo, 600);
  v = evaluate(r, {record("gemm", "throughput", 510, "n1", 0, "NVIDIA B300", {{"peak", peak}})});
  EXPECT_EQ(only(v).outcome, "pass");
  EXPECT_DOUBLE_EQ(*only(v).band.lo, 500);
}

TEST(Band, ThePeakFollowsTheClockTheRecordObserved) {
  const RuleSet r = rules(
      "rules:\n  - name: b\n    select: {workload: burn, metric: throughput}\n"
      "    band: {from: peak, efficiency: {default: 0.8}}\n");
  Json series = Json::array();
  for (double mhz : {1500.0, 1485.0, 1485.0}) series.push_back(Json{{"t_s", 1}, {"value", 1}, {"sm_clock_mhz", mhz}});
  const Json rec = record(
      "burn", "throughput", 620, "n1", 0, "NVIDIA H200",
      {{"peak", Json{{"value", 1000.0}, {"basis", "132 SMs, 1980 MHz"}}}, {"details", Json{{"series", series}}}});
  const Verdict& v = only(evaluate(r, {rec}));
  EXPECT_NEAR(*v.band.lo, 0.8 * 1000 * 1485 / 1980, 1e-9);  // 600
  EXPECT_EQ(v.outcome, "pass");
  EXPECT_NE(v.band.basis.find("observed 1485 of 1980 MHz"), std::string::npos) << v.band.basis;
}

TEST(Band, NoPeakAndNoEfficiencyIsAWarningNeverAPass) {
  const RuleSet r = rules(
      "rules:\n  - name: g\n    select: {workload: gemm, metric: throughput}\n"
      "    band: {from: peak, efficiency: {H100: 0.7}}\n");
  auto v = evaluate(r, {record("gemm", "throughput", 1, "n1", 0, "Some New GPU", {{"peak", Json{{"value", 10.0}}}})});
  EXPECT_EQ(only(v).outcome, "warn");
  EXPECT_NE(only(v).reason.find("no band known: no efficiency for GPU model 'Some New GPU'"), std::string::npos);
  v = evaluate(r, {record("gemm", "throughput", 1, "n1", 0, "NVIDIA H100")});
  EXPECT_EQ(only(v).outcome, "warn");
  EXPECT_NE(only(v).reason.find("states no peak"), std::string::npos);
}

TEST(Band, FleetMedianAndMadOverTheSameModelAndPoint) {
  const RuleSet r = rules(
      "rules:\n  - name: f\n    select: {workload: hbm, metric: bandwidth}\n"
      "    band: {from: fleet, k: 3, tolerance: 0.02}\n");
  std::vector<Json> recs;
  const double values[] = {3000, 3010, 2990, 3005, 2400};  // node n4 is slow
  for (int i = 0; i < 5; ++i) recs.push_back(record("hbm", "bandwidth", values[i], "n" + std::to_string(i), 0, "H100"));
  recs.push_back(record("hbm", "bandwidth", 1000, "n9", 0, "A100"));  // another model: its own group of one
  const auto v = evaluate(r, recs);
  ASSERT_EQ(v.size(), 6u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v[static_cast<std::size_t>(i)].outcome, "pass") << i;
  EXPECT_EQ(v[4].outcome, "fail");
  EXPECT_EQ(v[4].host, "n4");
  EXPECT_DOUBLE_EQ(*v[4].band.lo, 3000 - 0.02 * 3000);  // MAD 10 x 3 = 30 < 2% of 3000
  EXPECT_EQ(v[5].outcome, "warn") << "one A100 is no fleet";
}

TEST(Band, BaselineFixedAndRelative) {
  const RuleSet r = rules(R"(rules:
  - name: base
    select: {workload: collective, metric: busbw}
    band: {from: baseline, fraction: 0.5}
  - name: xid
    select: {workload: nodecheck, metric: xid_events}
    band: {from: fixed, max: 0}
  - name: width
    select: {workload: nodecheck, metric: pcie_width}
    band: {from: relative, field: details.max, min_fraction: 1.0}
)");
  Json bus = record("collective", "busbw", 4.0, "", -1, "", {{"point", Json{{"size", 1024}}}});
  Json old = bus;
  old["value"] = 10.0;
  Json xid = record("nodecheck", "xid_events", 2, "n1", 1, "H100");
  xid["better"] = "lower";
  Json width = record("nodecheck", "pcie_width", 8, "n1", 2, "H100", {{"details", Json{{"max", 16}}}});
  const auto v = evaluate(r, {bus, xid, width}, {old});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].outcome, "fail");
  EXPECT_DOUBLE_EQ(*v[0].band.lo, 5.0);
  EXPECT_EQ(v[1].outcome, "fail");
  EXPECT_NE(v[1].reason.find("is above 0"), std::string::npos);
  EXPECT_EQ(v[2].outcome, "fail");
  EXPECT_DOUBLE_EQ(*v[2].band.lo, 16);
  // Not in the baseline: no band known.
  EXPECT_EQ(only(evaluate(RuleSet{{r.rules[0]}}, {bus})).outcome, "warn");
}

TEST(Verdict, SkippedRecordsFollowOnSkipped) {
  const RuleSet r = rules(R"(rules:
  - name: xid
    select: {workload: nodecheck, metric: xid_events}
    band: {from: fixed, max: 0}
  - name: remap
    select: {workload: nodecheck, metric: row_remap_pending}
    on_skipped: skip
    band: {from: fixed, max: 0}
)");
  Json xid = record("nodecheck", "xid_events", 0, "n1", 0, "H100");
  xid["status"] = "skipped";
  xid["value"] = nullptr;
  xid["reason"] = "unknown: /dev/kmsg: Permission denied";
  Json remap = xid;
  remap["metric"] = "row_remap_pending";
  const auto v = evaluate(r, {xid, remap});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].outcome, "warn");
  EXPECT_EQ(v[0].reason, "skipped: unknown: /dev/kmsg: Permission denied");
  EXPECT_EQ(v[1].outcome, "skip");
  const auto nodes = node_rollup(v);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].outcome, "warn");
  // A failure after a warning still comes first among the node's reasons.
  Json remap_measured = record("nodecheck", "row_remap_pending", 1, "n1", 0, "H100");
  auto more = evaluate(r, {xid, remap_measured});
  const auto failed = node_rollup(more);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].outcome, "fail");
  ASSERT_EQ(failed[0].reasons.size(), 2u);
  EXPECT_EQ(failed[0].reasons[0].rfind("fail nodecheck.row_remap_pending", 0), 0u) << failed[0].reasons[0];
}

// The checksum comparison: no golden value, the majority of each GPU model wins.
TEST(Agreement, ADisagreeingGpuIsNamed) {
  const RuleSet r =
      rules("rules:\n  - name: sdc\n    select: {workload: checksum, metric: checksum}\n    agree: details.checksum\n");
  std::vector<Json> recs;
  for (int node = 0; node < 2; ++node)
    for (int gpu = 0; gpu < 4; ++gpu) {
      const bool bad = node == 1 && gpu == 2;
      recs.push_back(record("checksum", "checksum", 0, "node" + std::to_string(node), gpu, "NVIDIA H100",
                            {{"details", Json{{"checksum", bad ? "00000000deadbeef" : "0123456789abcdef"}}}}));
    }
  // Another model computes another checksum: not a disagreement.
  recs.push_back(record("checksum", "checksum", 0, "node2", 0, "NVIDIA A100",
                        {{"details", Json{{"checksum", "fedcba9876543210"}}}}));
  const auto v = evaluate(r, recs);
  ASSERT_EQ(v.size(), 9u);
  int fails = 0;
  for (const Verdict& x : v) {
    if (x.outcome != "fail") {
      EXPECT_EQ(x.outcome, "pass") << describe(x);
      continue;
    }
    ++fails;
    EXPECT_EQ(x.host, "node1");
    EXPECT_EQ(x.gpu, 2);
    EXPECT_NE(x.reason.find("00000000deadbeef differs from 0123456789abcdef, the value of 7 of 8 NVIDIA H100 GPUs"),
              std::string::npos)
        << x.reason;
  }
  EXPECT_EQ(fails, 1);
  const auto gpus = gpu_rollup(v);
  int failed_gpus = 0;
  for (const Rollup& g : gpus) failed_gpus += g.outcome == "fail";
  EXPECT_EQ(failed_gpus, 1);
  for (const Rollup& n : node_rollup(v)) EXPECT_EQ(n.outcome, n.host == "node1" ? "fail" : "pass") << n.host;
}

TEST(Agreement, NoMajorityWarnsEveryGpu) {
  const RuleSet r =
      rules("rules:\n  - name: sdc\n    select: {workload: checksum, metric: checksum}\n    agree: details.checksum\n");
  std::vector<Json> recs;
  for (int gpu = 0; gpu < 4; ++gpu)
    recs.push_back(record("checksum", "checksum", 0, "n", gpu, "H100",
                          {{"details", Json{{"checksum", gpu < 2 ? "aaaaaaaaaaaaaaaa" : "bbbbbbbbbbbbbbbb"}}}}));
  for (const Verdict& v : evaluate(r, recs)) {
    EXPECT_EQ(v.outcome, "warn");
    EXPECT_NE(v.reason.find("no majority among 4"), std::string::npos);
  }
}

}  // namespace
}  // namespace scalebench::accept
