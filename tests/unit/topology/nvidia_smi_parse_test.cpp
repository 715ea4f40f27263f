#include "topology/nvidia_smi_parse.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/topology/nvidia_smi_outputs.hpp"

namespace scalebench {
namespace {

using namespace scalebench::smi_outputs;

// nvidia-smi topo -m

TEST(NvidiaSmiTopo, HgxH100EightGpusNv18NicsIgnored) {
  TopoMatrix m = parse_topo_matrix(kHgxH100);
  ASSERT_EQ(m.links.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    ASSERT_EQ(m.links[i].size(), 8u) << "row " << i;
    for (std::size_t k = 0; k < 8; ++k) {
      EXPECT_EQ(m.links[i][k].kind, i == k ? "SELF" : "NVLINK") << i << "," << k;
      EXPECT_EQ(m.links[i][k].nvlinks, i == k ? 0 : 18) << i << "," << k;
    }
  }
  EXPECT_EQ(m.numa_nodes, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(NvidiaSmiTopo, PcieSwitchesPxbNodeSys) {
  TopoMatrix m = parse_topo_matrix(kPcieSwitches);
  ASSERT_EQ(m.links.size(), 8u);
  EXPECT_EQ(kinds_row(m, 0), "SELF PXB NODE NODE SYS SYS SYS SYS");
  EXPECT_EQ(kinds_row(m, 3), "NODE NODE PXB SELF SYS SYS SYS SYS");
  EXPECT_EQ(kinds_row(m, 6), "SYS SYS SYS SYS NODE NODE SELF PXB");
  EXPECT_EQ(m.numa_nodes, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(NvidiaSmiTopo, PciePairsPixNodeSys) {
  TopoMatrix m = parse_topo_matrix(kPciePairs);
  ASSERT_EQ(m.links.size(), 8u);
  EXPECT_EQ(kinds_row(m, 0), "SELF PIX NODE NODE SYS SYS SYS SYS");
  EXPECT_EQ(kinds_row(m, 7), "SYS SYS SYS SYS NODE NODE PIX SELF");
  EXPECT_EQ(m.numa_nodes[4], 1);
}

TEST(NvidiaSmiTopo, TabsAndAnEmptyCellAreWhitespace) {
  TopoMatrix m = parse_topo_matrix(kRtx4090Tabs);
  ASSERT_EQ(m.links.size(), 8u);
  EXPECT_EQ(kinds_row(m, 6), "SYS SYS SYS SYS SYS SYS SELF SYS");  // its PHB cells are to NICs
  EXPECT_EQ(m.numa_nodes, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(NvidiaSmiTopo, OldDriverMlxColumnsAndMixedNvlink) {
  TopoMatrix m = parse_topo_matrix(kOldMlx);
  ASSERT_EQ(m.links.size(), 4u);
  EXPECT_EQ(kinds_row(m, 0), "SELF NV2 NV1 NODE");
  EXPECT_EQ(kinds_row(m, 2), "NV1 NODE SELF NV2");
  EXPECT_EQ(m.numa_nodes, (std::vector<int>{-1, -1, -1, -1}));  // no NUMA Affinity column
}

TEST(NvidiaSmiTopo, EmptyCpuAffinityAndSocRightAlign) {
  // A VM prints no CPU affinity; drivers before 384 wrote SOC for SYS.
  const std::string text =
      "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      SOC     PIX             1               N/A\n"
      "GPU1    SOC      X      NODE            1               N/A\n"
      "NIC0    PIX     NODE     X\n";
  TopoMatrix m = parse_topo_matrix(text);
  EXPECT_EQ(kinds_row(m, 0), "SELF SYS");
  EXPECT_EQ(m.numa_nodes, (std::vector<int>{1, 1}));
}

TEST(NvidiaSmiTopo, OneGpu) {
  TopoMatrix m = parse_topo_matrix(
      "        GPU0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      0-31            0               N/A\n");
  ASSERT_EQ(m.links.size(), 1u);
  EXPECT_EQ(m.links[0][0].kind, "SELF");
  EXPECT_EQ(m.numa_nodes, std::vector<int>{0});
}

TEST(NvidiaSmiTopo, MalformedInputNamesWhatIsWrong) {
  EXPECT_EQ(error_of([] { parse_topo_matrix(""); }),
            "nvidia-smi topo -m: no header line (one that starts with GPU0) in the output (it is empty)");
  EXPECT_EQ(
      error_of([] { parse_topo_matrix("NVIDIA-SMI has failed because it couldn't communicate with the driver\n"); }),
      "nvidia-smi topo -m: no header line (one that starts with GPU0) in the output");
  std::string bad_cell = k4xH200;
  bad_cell.replace(bad_cell.find("NV18"), 4, "NVXX");
  EXPECT_EQ(error_of([&] { parse_topo_matrix(bad_cell); }),
            "nvidia-smi topo -m: line 2: GPU0 to GPU1: unknown connection 'NVXX' (expected NV#, PIX, PXB, PHB, NODE or "
            "SYS)");
  EXPECT_EQ(error_of([] { parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tNV0\nGPU1\tNV0\t X\n"); }),
            "nvidia-smi topo -m: line 2: GPU0 to GPU1: 'NV0' names no NVLink");
  EXPECT_EQ(error_of([] { parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \tSYS\nGPU1\tSYS\tSYS\n"); }),
            "nvidia-smi topo -m: line 3: GPU1 to itself is 'SYS' where X was expected");
  EXPECT_EQ(error_of([] { parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X \t X\nGPU1\tSYS\t X\n"); }),
            "nvidia-smi topo -m: line 2: GPU0 to GPU1: 'X' (self) off the diagonal");
  EXPECT_EQ(error_of([] { parse_topo_matrix("\tGPU0\tGPU1\tNIC0\nGPU0\t X \tSYS\nGPU1\tSYS\t X\tPIX\n"); }),
            "nvidia-smi topo -m: line 2: GPU0 has 2 cells where the header has 3 matrix columns");
  EXPECT_EQ(error_of([] { parse_topo_matrix("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tSYS\tSYS\nGPU1\tSYS\t X\tSYS\n"); }),
            "nvidia-smi topo -m: the header names 3 GPUs but 2 GPU rows follow");
  EXPECT_EQ(error_of([] { parse_topo_matrix("\tGPU0\tGPU1\nGPU1\tSYS\t X\nGPU0\t X \tSYS\n"); }),
            "nvidia-smi topo -m: line 2: row 'GPU1' where GPU0 was expected");
  EXPECT_EQ(error_of([] { parse_topo_matrix("\tGPU0\tGPU2\nGPU0\t X \tSYS\n"); }),
            "nvidia-smi topo -m: line 1: header column 'GPU2' where GPU1 was expected");
  EXPECT_EQ(error_of([] { parse_topo_matrix("GPU0\t X \tSYS\n"); }),
            "nvidia-smi topo -m: line 1: a GPU0 row comes before any header line (expected '\tGPU0\tGPU1 ... CPU "
            "Affinity')");
  EXPECT_EQ(error_of([] { parse_topo_matrix("\tGPU0\tCPU Affinity\nGPU0\t X \t0-3\t7\n"); }),
            "nvidia-smi topo -m: line 2: GPU0 has 2 values after the matrix where the header names 1 columns");
}

// nvidia-smi --query-gpu

TEST(NvidiaSmiCsv, FourH200) {
  std::vector<GpuInfo> gpus = parse_query_gpu_csv(k4xH200Csv);
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[2].index, 2);
  EXPECT_EQ(gpus[2].name, "NVIDIA H200");
  EXPECT_EQ(gpus[2].uuid, "GPU-a9e03c77-5f12-4b8d-b1c4-3d4e5f607182");
  EXPECT_EQ(gpus[2].pci_bus_id, "00000000:4C:00.0");
  EXPECT_EQ(gpus[2].pcie_gen, 5);
  EXPECT_EQ(gpus[2].pcie_gen_max, 5);
  EXPECT_EQ(gpus[2].pcie_width, 16);
  EXPECT_EQ(gpus[2].pcie_width_max, 16);
  EXPECT_EQ(gpus[2].numa_node, -1);  // not in the CSV
}

TEST(NvidiaSmiCsv, NotAvailableIsZeroAndBlankLinesAndCrlfAreFine) {
  std::vector<GpuInfo> gpus = parse_query_gpu_csv(
      "\n0, NVIDIA H100 80GB HBM3, GPU-x, 00000000:00:05.0, [N/A], [N/A], [N/A], [N/A]\r\n"
      "1 ,\tNVIDIA A10G , GPU-y , 00000000:00:1E.0 , 1 , 4 , 8 , [Not Supported]\r\n\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].pcie_gen, 0);
  EXPECT_EQ(gpus[0].pcie_width_max, 0);
  EXPECT_EQ(gpus[1].name, "NVIDIA A10G");
  EXPECT_EQ(gpus[1].pcie_gen_max, 4);
  EXPECT_EQ(gpus[1].pcie_width, 8);
  EXPECT_EQ(gpus[1].pcie_width_max, 0);
  EXPECT_TRUE(parse_query_gpu_csv("").empty());
}

TEST(NvidiaSmiCsv, MalformedLinesNameTheLineAndField) {
  EXPECT_EQ(error_of([] { parse_query_gpu_csv("0, NVIDIA H200, GPU-a, 00000000:19:00.0, 5, 5\n"); }),
            "nvidia-smi --query-gpu: line 1: expected 8 comma-separated fields (index, name, uuid, pci.bus_id, "
            "pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max), got 6: '0, "
            "NVIDIA H200, GPU-a, 00000000:19:00.0, 5, 5'");
  EXPECT_EQ(
      error_of([] { parse_query_gpu_csv(k4xH200Csv + "4, NVIDIA H200, GPU-e, 00000000:9A:00.0, 5, Gen5, 16, 16\n"); }),
      "nvidia-smi --query-gpu: line 5: pcie.link.gen.max: expected a number or [N/A], got 'Gen5'");
  EXPECT_EQ(error_of([] { parse_query_gpu_csv("No devices were found\n"); })
                .rfind("nvidia-smi --query-gpu: line 1: "
                       "expected 8 comma-separated fields",
                       0),
            0u);
  EXPECT_EQ(error_of([] { parse_query_gpu_csv("GPU0, NVIDIA H200, GPU-a, 00000000:19:00.0, 5, 5, 16, 16\n"); }),
            "nvidia-smi --query-gpu: line 1: index: expected a number, got 'GPU0'");
}

TEST(NvidiaSmi, FourH200JoinedIntoATopology) {
  Topology t = four_h200();
  EXPECT_EQ(t.source, "nvidia-smi");
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.gpus[3].pci_bus_id, "00000000:5D:00.0");
  EXPECT_EQ(t.gpus[0].numa_node, 0);
  EXPECT_EQ(t.gpus[3].numa_node, 1);
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 4; ++k) {
      const Link& l = t.links[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)];
      if (i == k) {
        EXPECT_EQ(l.kind, "SELF");
        EXPECT_EQ(link_peak_GBps(t, i, k), 0.0);
        continue;
      }
      EXPECT_EQ(l.kind, "NVLINK");
      EXPECT_EQ(l.nvlinks, 18);
      EXPECT_EQ(l.nvlink_version, 4);
      EXPECT_EQ(l.nvlink_GBps_per_link, 26.5625);
      EXPECT_DOUBLE_EQ(link_peak_GBps(t, i, k), 478.125);
    }
  for (const GpuInfo& g : t.gpus) EXPECT_NEAR(host_link_peak_GBps(g), 63.0, 0.01);  // Gen5 x16
  EXPECT_TRUE(nvlink_joined(t, {0, 1, 2, 3}));
}

TEST(NvidiaSmi, IdlePcieNodeUsesTheMaximumGeneration) {
  Topology t = parse_nvidia_smi(kPcieSwitches, kL40sIdleCsv);
  ASSERT_EQ(t.gpus.size(), 8u);
  EXPECT_EQ(t.links[0][1].kind, "PXB");
  EXPECT_EQ(t.gpus[0].pcie_gen, 1);
  EXPECT_NEAR(link_peak_GBps(t, 0, 1), 31.504, 1e-9);  // Gen4 x16, not the idle Gen1 x16 (4 GB/s)
  EXPECT_NEAR(link_peak_GBps(t, 0, 7), 31.504, 1e-9);  // SYS: the formula is the same
  EXPECT_FALSE(nvlink_joined(t, {0, 1}));
}

TEST(NvidiaSmi, NvlinkOfUnknownModelsHasNoSpeed) {
  const std::string csv =
      "0, Tesla V100-SXM2-32GB, GPU-0, 00000000:1A:00.0, 3, 3, 16, 16\n"
      "1, Tesla V100-SXM2-32GB, GPU-1, 00000000:1B:00.0, 3, 3, 16, 16\n"
      "2, Tesla V100-SXM2-32GB, GPU-2, 00000000:88:00.0, 3, 3, 16, 16\n"
      "3, Tesla V100-SXM2-32GB, GPU-3, 00000000:89:00.0, 3, 3, 16, 16\n";
  Topology t = parse_nvidia_smi(kOldMlx, csv);
  EXPECT_EQ(t.links[0][1].nvlinks, 2);
  EXPECT_EQ(t.links[0][1].nvlink_version, 0);
  EXPECT_EQ(link_peak_GBps(t, 0, 1), 0.0);            // unknown, not guessed
  EXPECT_NEAR(link_peak_GBps(t, 0, 3), 15.76, 1e-9);  // NODE: Gen3 x16
  EXPECT_TRUE(nvlink_joined(t, {0, 1}));
  EXPECT_TRUE(nvlink_joined(t, {3, 1}));
  EXPECT_TRUE(nvlink_joined(t, {2, 3, 2}));   // a GPU named twice is one GPU
  EXPECT_FALSE(nvlink_joined(t, {0, 1, 2}));  // GPU1-GPU2 is NODE
}

TEST(NvidiaSmi, OutputsThatDisagreeAreAnError) {
  EXPECT_EQ(error_of([] { parse_nvidia_smi(kHgxH100, k4xH200Csv); }),
            "nvidia-smi: topo -m shows 8 GPUs but --query-gpu lists 4");
  EXPECT_EQ(error_of([] {
              parse_nvidia_smi(k4xH200,
                               "1, NVIDIA H200, GPU-a, 00000000:19:00.0, 5, 5, 16, 16\n"
                               "2, NVIDIA H200, GPU-b, 00000000:3B:00.0, 5, 5, 16, 16\n");
            }),
            "nvidia-smi --query-gpu: GPU indices are not 0..1 (found index 1 at position 0)");
  Topology none = parse_nvidia_smi("", "");
  EXPECT_EQ(none.source, "none");
  EXPECT_TRUE(none.gpus.empty());
}

}  // namespace
}  // namespace scalebench
