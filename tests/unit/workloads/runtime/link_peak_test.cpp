#include "workloads/runtime/link_peak.hpp"

#include <gtest/gtest.h>

namespace scalebench {
namespace {

// n GPUs, Gen5 x16 each, every pair joined by `pair` (NVLINK with 18 v4 links, or a PCIe class).
Topology machine(int n, const std::string& pair) {
  Topology t;
  t.source = "nvml";
  for (int i = 0; i < n; ++i) {
    GpuInfo g;
    g.index = i;
    g.pcie_gen = g.pcie_gen_max = 5;
    g.pcie_width = g.pcie_width_max = 16;
    t.gpus.push_back(g);
  }
  t.links.assign(n, std::vector<Link>(n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      Link& l = t.links[i][j];
      l.kind = i == j ? "SELF" : pair;
      if (l.kind == "NVLINK") {
        l.nvlinks = 18;
        l.nvlink_version = 4;
        l.nvlink_GBps_per_link = 26.5625;
      }
    }
  return t;
}

TEST(PathPeak, P2pOverNvlinkIsTheNvlinkPeak) {
  Json p = path_peak(machine(4, "NVLINK"), {{"P2P", 48}});
  ASSERT_TRUE(p.is_object());
  EXPECT_EQ(p["path"], "NVLINK");
  EXPECT_DOUBLE_EQ(p["peak_GBps"].get<double>(), 18 * 26.5625);
}

TEST(PathPeak, ShmAndNetCrossPcie) {
  for (const char* tr : {"SHM", "NET"}) {
    Json p = path_peak(machine(4, "NVLINK"), {{tr, 8}});
    ASSERT_TRUE(p.is_object()) << tr;
    EXPECT_EQ(p["path"], "PCIe");
    EXPECT_NEAR(p["peak_GBps"].get<double>(), 16 * 3.938, 1e-9);
  }
  Json pix = path_peak(machine(2, "PIX"), {{"P2P", 8}});
  EXPECT_EQ(pix["path"], "PCIe") << "P2P between GPUs without NVLink goes over PCIe";
}

TEST(PathPeak, UnknownWithOneGpuOrNoConnections) {
  EXPECT_TRUE(path_peak(machine(1, "NVLINK"), {{"P2P", 1}}).is_null());
  EXPECT_TRUE(path_peak(machine(2, "NVLINK"), {}).is_null());
  Topology unknown = machine(2, "PIX");
  for (auto& g : unknown.gpus) g.pcie_gen = g.pcie_gen_max = g.pcie_width = g.pcie_width_max = 0;
  EXPECT_TRUE(path_peak(unknown, {{"SHM", 2}}).is_null());
}

TEST(TransportUnavailable, NvlinkNeedsEveryPairJoined) {
  EXPECT_EQ(transport_unavailable(machine(4, "NVLINK"), "nvlink"), "");
  Topology mixed = machine(3, "NVLINK");
  mixed.links[1][2].kind = mixed.links[2][1].kind = "SYS";
  EXPECT_EQ(transport_unavailable(mixed, "nvlink"),
            "transport nvlink needs NVLink-joined GPUs, but GPU1 and GPU2 are joined by SYS");
}

TEST(TransportUnavailable, P2pPcieCannotBeIsolatedWhereNvlinkJoinsThePair) {
  EXPECT_NE(transport_unavailable(machine(2, "NVLINK"), "p2p-pcie").find("GPU0 and GPU1 are joined by NV18"),
            std::string::npos);
  EXPECT_EQ(transport_unavailable(machine(2, "PXB"), "p2p-pcie"), "");
  EXPECT_EQ(transport_unavailable(machine(2, "NVLINK"), "pcie"), "") << "P2P off works on any machine";
  Topology none;
  EXPECT_EQ(transport_unavailable(none, "nvlink"), "") << "an unknown topology is not a reason to skip";
}

TEST(CopyPathPeak, PeerCopiesTakeThePairsPathOthersThePcieLink) {
  Topology t = machine(2, "NVLINK");
  Json nv = copy_path_peak(t, 0, 1, true);
  EXPECT_EQ(nv["path"], "NVLINK");
  EXPECT_DOUBLE_EQ(nv["peak_GBps"].get<double>(), 478.125);
  EXPECT_DOUBLE_EQ(copy_path_peak(t, 0, 1, true, 2)["peak_GBps"].get<double>(), 956.25) << "bidirectional sum";
  Json staged = copy_path_peak(t, 0, 1, false);
  EXPECT_EQ(staged["path"], "PCIe");
  EXPECT_NEAR(staged["peak_GBps"].get<double>(), 63.008, 1e-9);
  EXPECT_NEAR(copy_path_peak(t, -1, 1, false)["peak_GBps"].get<double>(), 63.008, 1e-9);
  EXPECT_NEAR(copy_path_peak(t, 0, -1, true)["peak_GBps"].get<double>(), 63.008, 1e-9);
  EXPECT_TRUE(copy_path_peak(t, 0, 0, true).is_null());
  EXPECT_TRUE(copy_path_peak(t, 0, 5, true).is_null());
  EXPECT_TRUE(copy_path_peak(Topology{}, -1, 0, true).is_null()) << "no topology: unknown, not an error";
}

}  // namespace
}  // namespace scalebench
