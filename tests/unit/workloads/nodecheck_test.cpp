// nodecheck: the kernel log's Xid lines, NVML's health readings through the stand-in libnvidia-ml
// (healthy nvswitch4, faulty degraded4), the records made of them, and the shipped rules' verdicts.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "accept/verdict.hpp"
#include "topology/nvml.hpp"
#include "workloads/nodecheck/kernel_log.hpp"
#include "workloads/nodecheck/node_checks.hpp"

#ifndef SCALEBENCH_FAKE_NVML
#error "link scalebench_topology_testing: it defines SCALEBENCH_FAKE_NVML, the path of the stand-in libnvidia-ml"
#endif

namespace scalebench {
namespace {

using nodecheck::NodeFacts;

const char* const kXidLog =
    "6,1234,5678901,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.86.15\n"
    "4,1301,9990001,-;NVRM: Xid (PCI:0000:19:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
    "[ 812.5] NVRM: Xid (PCI:0000:19:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error\n"
    "[ 900.1] NVRM: Xid (PCI:0000:3b:00): 13, pid=77, Graphics Exception\n";

TEST(KernelLog, CountsXidLinesPerGpu) {
  std::istringstream in(kXidLog);
  const auto scan = nodecheck::scan_xid_lines(in);
  EXPECT_TRUE(scan.known);
  EXPECT_EQ(nodecheck::xids_of(scan, "00000000:19:00.0"), 2);
  EXPECT_EQ(nodecheck::xids_of(scan, "0000:3B:00.0"), 1);
  EXPECT_EQ(nodecheck::xids_of(scan, "00000000:4C:00.0"), 0);
  ASSERT_EQ(scan.lines.size(), 3u);
  EXPECT_EQ(scan.lines[0].rfind("NVRM: Xid (PCI:0000:19:00): 79", 0), 0u) << "kmsg's header is cut";
}

TEST(KernelLog, AnUnreadableLogIsUnknown) {
  const auto scan = nodecheck::read_kernel_xids("/nonexistent/kmsg");
  EXPECT_FALSE(scan.known);
  EXPECT_NE(scan.why_unknown.find("No such file"), std::string::npos);
}

class NodeCheck : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("FAKE_NVML_SCENARIO"); }

  // What nodecheck reads, with the counters read 0.3 s apart and this kernel log.
  NodeFacts read(const char* scenario, const std::string& kernel_log) {
    setenv("FAKE_NVML_SCENARIO", scenario, 1);
    NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
    EXPECT_TRUE(nvml.available()) << nvml.unavailable_reason();
    const std::string path = ::testing::TempDir() + "/kmsg.txt";
    std::ofstream(path) << kernel_log;
    NodeFacts f;
    f.host = "node-a";
    f.system = nvml.read_system();
    f.xids = nodecheck::read_kernel_xids(path);
    f.watch_s = 0.3;
    f.before = nvml.read_health();
    f.numa_nodes.assign(f.before.size(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    f.after = nvml.read_health();
    return f;
  }

  static const Json& find(const std::vector<Json>& records, const std::string& check, int gpu) {
    for (const Json& r : records)
      if (r["metric"] == check && r["point"]["gpu"] == gpu) return r;
    static const Json none;
    ADD_FAILURE() << "no " << check << " record of GPU " << gpu;
    return none;
  }

  static accept::RuleSet shipped() {
    return accept::load_rules(std::string(SCALEBENCH_TEST_DATA) + "/../../deploy/accept/rules.yaml");
  }
};

TEST_F(NodeCheck, ReadsHealthThroughNvml) {
  const NodeFacts f = read("degraded4", "");
  ASSERT_EQ(f.before.size(), 4u);
  EXPECT_EQ(f.system.driver_version, "570.86.15");
  EXPECT_EQ(f.system.cuda_driver_version, 12080);
  EXPECT_EQ(f.before[0].persistence_mode, true);
  EXPECT_EQ(f.before[2].persistence_mode, false);
  EXPECT_EQ(f.before[2].remap_pending, true);
  EXPECT_EQ(f.before[2].pcie_width, 8);
  EXPECT_EQ(f.before[2].pcie_width_max, 16);
  EXPECT_FALSE(f.before[0].retired_pages_pending) << "Hopper answers NOT_SUPPORTED";
  EXPECT_EQ(f.before[3].nvlinks, 18);
  EXPECT_EQ(f.before[3].nvlinks_up, 16);
  EXPECT_EQ(f.before[0].nvlink_speed_mbps, 26562u) << "Hopper: read link by link";
  EXPECT_EQ(f.before[2].nvlink_speed_mbps, 13281u) << "the slowest link";
  EXPECT_EQ(f.before[3].power_limit_mw, 500000u);
  EXPECT_EQ(f.before[0].default_power_limit_mw, 700000u);
  EXPECT_LT(f.before[1].nvlink_errors->replay, f.after[1].nvlink_errors->replay) << "GPU1's replays rise";
  EXPECT_EQ(f.before[1].nvlink_errors->crc, f.after[1].nvlink_errors->crc) << "only its replays";
}

TEST_F(NodeCheck, OneRecordPerGpuAndCheck) {
  const auto records = nodecheck::check_records(Json{{"workload", "nodecheck"}}, read("degraded4", kXidLog));
  const Json& versions = find(records, "versions", -1);
  EXPECT_EQ(versions["details"]["driver"], "570.86.15");
  EXPECT_EQ(versions["details"]["cuda"], "12.8");
  EXPECT_EQ(find(records, "xid_events", 0)["value"], 2.0);
  EXPECT_EQ(find(records, "xid_events", 1)["value"], 1.0);
  const Json& width = find(records, "pcie_width", 2);
  EXPECT_EQ(width["value"], 8.0);
  EXPECT_EQ(width["details"]["max"], 16);
  EXPECT_EQ(width["point"]["host"], "node-a");
  EXPECT_EQ(width["point"]["model"], "NVIDIA H200");
  EXPECT_EQ(find(records, "row_remap_pending", 2)["value"], 1.0);
  EXPECT_GT(find(records, "nvlink_replay_errors", 1)["value"].get<double>(), 0);
  EXPECT_EQ(find(records, "nvlink_replay_errors", 0)["value"], 0.0);
  EXPECT_EQ(find(records, "nvlink_recovery_errors", 1)["value"], 0.0);
  const Json& crc = find(records, "nvlink_crc_errors", 3);
  EXPECT_GT(crc["details"]["count"].get<double>(), 0) << crc.dump();
  EXPECT_EQ(crc["unit"], "errors/s");
  for (const Json& r : records) {
    EXPECT_EQ(r["status"] == "ok", r["value"].is_number()) << r.dump();
    if (r["status"] == "ok") {
      EXPECT_EQ(r["stats"]["median"], r["value"]);
    }
  }
}

TEST_F(NodeCheck, AHealthyNodePassesTheShippedRules) {
  const auto records = nodecheck::check_records(Json{{"workload", "nodecheck"}}, read("nvswitch4", ""));
  const auto verdicts = accept::evaluate(shipped(), records);
  EXPECT_GT(verdicts.size(), 40u);
  for (const auto& v : verdicts) EXPECT_TRUE(v.outcome == "pass" || v.outcome == "skip") << accept::describe(v);
}

TEST_F(NodeCheck, EachFaultFailsItsRuleOnItsGpu) {
  const auto records = nodecheck::check_records(Json{{"workload", "nodecheck"}}, read("degraded4", kXidLog));
  std::map<std::string, std::set<int>> failed, warned;
  for (const auto& v : accept::evaluate(shipped(), records))
    if (v.outcome == "fail")
      failed[v.rule].insert(v.gpu);
    else if (v.outcome == "warn")
      warned[v.rule].insert(v.gpu);
  EXPECT_EQ(failed["xid-events"], (std::set<int>{0, 1}));
  EXPECT_EQ(failed["nvlink-replay-errors-not-rising"], (std::set<int>{1}));
  EXPECT_EQ(failed["pcie-width-at-max"], (std::set<int>{2}));
  EXPECT_EQ(failed["no-pending-row-remap"], (std::set<int>{2}));
  EXPECT_EQ(failed["nvlinks-up"], (std::set<int>{3}));
  EXPECT_EQ(failed["power-limit-at-default"], (std::set<int>{3}));
  EXPECT_EQ(failed["nvlink-speed"], (std::set<int>{2})) << "one link at half speed";
  EXPECT_EQ(failed.size(), 7u);
  EXPECT_EQ(warned["nvlink-crc-errors-quiet"], (std::set<int>{3})) << "a low CRC rate warns, as DCGM's health watch";
}

}  // namespace
}  // namespace scalebench
