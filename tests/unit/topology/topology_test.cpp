#include "topology/topology.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/topology/nvidia_smi_outputs.hpp"
#include "topology/discover.hpp"

namespace scalebench {
namespace {

using namespace scalebench::smi_outputs;

TEST(TopologyPeaks, Tables) {
  EXPECT_EQ(pcie_lane_GBps(1), 0.25);
  EXPECT_EQ(pcie_lane_GBps(3), 0.985);
  EXPECT_EQ(pcie_lane_GBps(5), 3.938);
  EXPECT_EQ(pcie_lane_GBps(6), 7.877);
  EXPECT_EQ(pcie_lane_GBps(0), 0.0);
  EXPECT_EQ(pcie_lane_GBps(7), 0.0);
  EXPECT_EQ(nvlink_GBps_per_link(3), 25.0);
  EXPECT_EQ(nvlink_GBps_per_link(4), 26.5625);
  EXPECT_EQ(nvlink_GBps_per_link(5), 50.0);
  EXPECT_EQ(nvlink_GBps_per_link(0), 0.0);
  EXPECT_EQ(nvlink_version_for_model("NVIDIA A100-SXM4-80GB"), 3);
  EXPECT_EQ(nvlink_version_for_model("NVIDIA H100 80GB HBM3"), 4);
  EXPECT_EQ(nvlink_version_for_model("NVIDIA H200"), 4);
  EXPECT_EQ(nvlink_version_for_model("NVIDIA GH200 480GB"), 4);
  EXPECT_EQ(nvlink_version_for_model("NVIDIA B200"), 5);
  EXPECT_EQ(nvlink_version_for_model("NVIDIA GB200"), 5);
  EXPECT_EQ(nvlink_version_for_model("NVIDIA GeForce RTX 4090"), 0);
}

TEST(TopologyPeaks, HostLinkAndFallbacks) {
  GpuInfo g;
  g.pcie_gen = g.pcie_gen_max = 5;
  g.pcie_width = g.pcie_width_max = 16;
  EXPECT_NEAR(host_link_peak_GBps(g), 63.0, 0.01);
  g.pcie_gen_max = 0;  // max unknown: the current generation
  g.pcie_gen = 4;
  EXPECT_NEAR(host_link_peak_GBps(g), 31.504, 1e-9);
  g.pcie_width = 0;  // current width unknown: the maximum
  g.pcie_width_max = 8;
  EXPECT_NEAR(host_link_peak_GBps(g), 15.752, 1e-9);
  EXPECT_EQ(host_link_peak_GBps(GpuInfo{}), 0.0);
}

TEST(TopologyPeaks, PositionsOutOfRangeAreAnError) {
  Topology t = four_h200();
  EXPECT_EQ(error_of([&] { link_peak_GBps(t, 0, 4); }),
            "link_peak_GBps: GPU position 4 is out of range (the topology has 4 GPUs)");
  EXPECT_EQ(error_of([&] {
              nvlink_joined(t, {0, -1});
            }),
            "nvlink_joined: GPU position -1 is out of range (the topology has 4 GPUs)");
  EXPECT_TRUE(nvlink_joined(t, {}));
  EXPECT_TRUE(nvlink_joined(t, {2}));
}

TEST(TopologyIds, CanonicalPciBusId) {
  EXPECT_EQ(canonical_pci_bus_id("00000000:4C:00.0"), "0000:4c:00.0");
  EXPECT_EQ(canonical_pci_bus_id("0000:4c:00.0"), "0000:4c:00.0");
  EXPECT_EQ(canonical_pci_bus_id(" 4C:00.0 "), "0000:4c:00.0");
  EXPECT_EQ(canonical_pci_bus_id("00000001:0A:1F.7"), "0001:0a:1f.7");
  EXPECT_EQ(canonical_pci_bus_id("GPU-3f2a6c1e-8b1d-4e55-9c0a-1b2c3d4e5f60"), "");
  EXPECT_EQ(canonical_pci_bus_id("0000:4c:00"), "");
  EXPECT_EQ(canonical_pci_bus_id("0000:4c:20.0"), "");  // device > 31
  EXPECT_EQ(canonical_pci_bus_id("0000:4c:00.8"), "");  // function > 7
}

TEST(TopologyRestrict, PicksAndReordersByBusIdOrUuid) {
  Topology t = parse_nvidia_smi(kPcieSwitches, kL40sIdleCsv);
  Topology r = restrict_to(t, {"0000:c1:00.0", "gpu-0A", "00000000:3E:00.0"});
  EXPECT_EQ(r.source, "nvidia-smi");
  ASSERT_EQ(r.gpus.size(), 3u);
  EXPECT_EQ(r.gpus[0].index, 6);  // the node's index is kept
  EXPECT_EQ(r.gpus[1].index, 0);
  EXPECT_EQ(r.gpus[2].index, 3);
  ASSERT_EQ(r.links.size(), 3u);
  EXPECT_EQ(r.links[0][0].kind, "SELF");
  EXPECT_EQ(r.links[0][1].kind, "SYS");   // GPU6-GPU0
  EXPECT_EQ(r.links[1][2].kind, "NODE");  // GPU0-GPU3
  EXPECT_EQ(r.links[2][0].kind, "SYS");
  EXPECT_EQ(restrict_to(t, {}).gpus.size(), 0u);
}

TEST(TopologyRestrict, UnknownOrRepeatedIdsAreAnError) {
  Topology t = four_h200();
  EXPECT_EQ(error_of([&] {
              restrict_to(t, {"0000:19:00.0", "0000:9a:00.0"});
            }),
            "restrict_to: no GPU has the PCI bus id or UUID '0000:9a:00.0' (the topology has: 00000000:19:00.0, "
            "00000000:3B:00.0, 00000000:4C:00.0, 00000000:5D:00.0)");
  EXPECT_EQ(error_of([&] {
              restrict_to(t, {"GPU-3f2a6c1e-8b1d-4e55-9c0a-1b2c3d4e5f60", "19:00.0"});
            }),
            "restrict_to: '19:00.0' names GPU 00000000:19:00.0 a second time");
  EXPECT_EQ(error_of([] { restrict_to(Topology{}, {"0"}); }),
            "restrict_to: no GPU has the PCI bus id or UUID '0' (the topology has: no GPU)");
}

TEST(TopologyJson, ShapeAndRoundTrip) {
  Topology t = four_h200();
  Json j = to_json(t);
  EXPECT_EQ(j["source"], "nvidia-smi");
  EXPECT_EQ(j["gpus"][1].dump(),
            R"({"index":1,"name":"NVIDIA H200","uuid":"GPU-7d41b2a9-0c3e-4f21-8a6b-2c3d4e5f6071",)"
            R"("pci_bus_id":"00000000:3B:00.0","pcie_gen":5,"pcie_gen_max":5,"pcie_width":16,"pcie_width_max":16,)"
            R"("numa_node":0})");
  EXPECT_EQ(j["links"][0][0].dump(), R"({"kind":"SELF"})");
  EXPECT_EQ(j["links"][0][1].dump(),
            R"({"kind":"NVLINK","nvlinks":18,"nvlink_version":4,"nvlink_GBps_per_link":26.5625})");
  Topology back = topology_from_json(Json::parse(j.dump()));
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.links[3][2].nvlinks, 18);
  EXPECT_EQ(back.gpus[3].uuid, t.gpus[3].uuid);

  Topology pcie = parse_nvidia_smi(kPciePairs, kL40sIdleCsv);
  EXPECT_EQ(to_json(pcie)["links"][0][1].dump(), R"({"kind":"PIX"})");
  EXPECT_EQ(to_json(topology_from_json(to_json(pcie))), to_json(pcie));
  EXPECT_EQ(to_json(Topology{}).dump(), R"({"source":"none","gpus":[],"links":[]})");
  EXPECT_EQ(topology_from_json(to_json(Topology{})).source, "none");
}

TEST(TopologyJson, MalformedJsonNamesTheField) {
  Json j = to_json(four_h200());
  auto broken = [&](const std::function<void(Json&)>& edit) {
    Json copy = j;
    edit(copy);
    return error_of([&] { topology_from_json(copy); });
  };
  EXPECT_EQ(broken([](Json& c) { c.erase("gpus"); }), "topology.gpus: missing");
  EXPECT_EQ(broken([](Json& c) { c["source"] = "dcgm"; }),
            "topology.source: expected nvml, nvidia-smi or none, got 'dcgm'");
  EXPECT_EQ(broken([](Json& c) { c["gpus"][2]["pcie_gen"] = "5"; }),
            "topology.gpus[2].pcie_gen: expected an integer, got \"5\"");
  EXPECT_EQ(broken([](Json& c) { c["links"][1].erase(3); }),
            "topology.links: expected 4 x 4 (a row and a column per GPU)");
  EXPECT_EQ(broken([](Json& c) { c["links"][1][2]["kind"] = "NVSWITCH"; }),
            "topology.links[1][2].kind: unknown kind 'NVSWITCH'");
  EXPECT_EQ(broken([](Json& c) {
              c["links"][1][1] = Json{{"kind", "SYS"}};
            }),
            "topology.links[1][1].kind: SELF belongs on the diagonal and only there, got 'SYS'");
  EXPECT_EQ(broken([](Json& c) { c["links"][0][1].erase("nvlinks"); }), "topology.links[0][1].nvlinks: missing");
}

TEST(TopologyRender, MatrixLikeNvidiaSmi) {
  EXPECT_EQ(render_matrix(four_h200()),
            "        GPU0    GPU1    GPU2    GPU3    NUMA  PCIe      Name\n"
            "GPU0     X      NV18    NV18    NV18    0     Gen5 x16  NVIDIA H200\n"
            "GPU1    NV18     X      NV18    NV18    0     Gen5 x16  NVIDIA H200\n"
            "GPU2    NV18    NV18     X      NV18    1     Gen5 x16  NVIDIA H200\n"
            "GPU3    NV18    NV18    NV18     X      1     Gen5 x16  NVIDIA H200\n"
            "source: nvidia-smi; NV# = # NVLinks (v4, 26.5625 GB/s per link and direction)\n");
  Topology pcie = restrict_to(parse_nvidia_smi(kPcieSwitches, kL40sIdleCsv), {"GPU-0a", "GPU-1b", "GPU-4e"});
  EXPECT_EQ(render_matrix(pcie),
            "        GPU0    GPU1    GPU2    NUMA  PCIe      Name\n"
            "GPU0     X      PXB     SYS     0     Gen4 x16  NVIDIA L40S\n"
            "GPU1    PXB      X      SYS     0     Gen4 x16  NVIDIA L40S\n"
            "GPU2    SYS     SYS      X      1     Gen4 x16  NVIDIA L40S\n"
            "source: nvidia-smi\n");
  EXPECT_EQ(render_matrix(Topology{}), "no GPUs (source: none)\n");
}

}  // namespace
}  // namespace scalebench
