#include "topology/topology.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "agent/inventory.hpp"
#include "common/error.hpp"
#include "topology/discover.hpp"
#include "topology/nvidia_smi_parse.hpp"
#include "topology/nvml.hpp"

#ifndef SCALEBENCH_FAKE_NVML
#error "link scalebench_topology_testing: it defines SCALEBENCH_FAKE_NVML, the path of the stand-in libnvidia-ml"
#endif

namespace scalebench {
namespace {

// ---------------------------------------------------------------------------------------------
// Captured outputs.

// 8 x NVIDIA H100 80GB HBM3 (HGX, NVSwitch), 8 NICs, driver 570.124.06: `nvidia-smi topo -m` as
// printed by sglang's check_env in a public GitHub issue. Kept verbatim, with its ragged columns
// ("NIC3  NIC4     NIC5", "PIX   SYS") and the trailing space on the last NIC row.
const std::string kHgxH100 =
    R"(        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0    NIC1    NIC2    NIC3  NIC4     NIC5    NIC6    NIC7    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    NV18    NV18    NV18    NV18    NV18    NV18    PIX     PIX     NODE    NODE  SYS      SYS     SYS     SYS     0-47,96-143     0               N/A
GPU1    NV18     X      NV18    NV18    NV18    NV18    NV18    NV18    NODE    NODE    NODE    NODE  SYS      SYS     SYS     SYS     0-47,96-143     0               N/A
GPU2    NV18    NV18     X      NV18    NV18    NV18    NV18    NV18    NODE    NODE    PIX     PIX   SYS      SYS     SYS     SYS     0-47,96-143     0               N/A
GPU3    NV18    NV18    NV18     X      NV18    NV18    NV18    NV18    NODE    NODE    NODE    NODE  SYS      SYS     SYS     SYS     0-47,96-143     0               N/A
GPU4    NV18    NV18    NV18    NV18     X      NV18    NV18    NV18    SYS     SYS     SYS     SYS   PIX      PIX     NODE    NODE    48-95,144-191   1               N/A
GPU5    NV18    NV18    NV18    NV18    NV18     X      NV18    NV18    SYS     SYS     SYS     SYS   NODE     NODE    NODE    NODE    48-95,144-191   1               N/A
GPU6    NV18    NV18    NV18    NV18    NV18    NV18     X      NV18    SYS     SYS     SYS     SYS   NODE     NODE    PIX     PIX     48-95,144-191   1               N/A
GPU7    NV18    NV18    NV18    NV18    NV18    NV18    NV18     X      SYS     SYS     SYS     SYS   NODE     NODE    NODE    NODE    48-95,144-191   1               N/A
NIC0    PIX     NODE    NODE    NODE    SYS     SYS     SYS     SYS      X      PIX     NODE    NODE  SYS      SYS     SYS     SYS
NIC1    PIX     NODE    NODE    NODE    SYS     SYS     SYS     SYS     PIX      X      NODE    NODE  SYS      SYS     SYS     SYS
NIC2    NODE    NODE    PIX     NODE    SYS     SYS     SYS     SYS     NODE    NODE     X      PIX   SYS      SYS     SYS     SYS
NIC3    NODE    NODE    PIX     NODE    SYS     SYS     SYS     SYS     NODE    NODE    PIX      X    SYS      SYS     SYS     SYS
NIC4    SYS     SYS     SYS     SYS     PIX     NODE    NODE    NODE    SYS     SYS     SYS     SYS    X       PIX     NODE    NODE
NIC5    SYS     SYS     SYS     SYS     PIX     NODE    NODE    NODE    SYS     SYS     SYS     SYS   PIX       X      NODE    NODE
NIC6    SYS     SYS     SYS     SYS     NODE    NODE    PIX     NODE    SYS     SYS     SYS     SYS   NODE     NODE     X      PIX
NIC7    SYS     SYS     SYS     SYS     NODE    NODE    PIX     NODE    SYS     SYS     SYS     SYS   NODE     NODE    PIX      X 

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
  NIC2: mlx5_2
  NIC3: mlx5_3
  NIC4: mlx5_4
  NIC5: mlx5_5
  NIC6: mlx5_6
  NIC7: mlx5_7
)";

// 8 PCIe GPUs on two sockets behind PCIe switches, 6 NICs (`nvidia-smi topo -mp`, from a public
// write-up of GPU tools): PXB pairs, NODE within a socket, SYS across; no NV# line in the legend.
const std::string kPcieSwitches =
    R"(        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0    NIC1    NIC2    NIC3    NIC4    NIC5    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      PXB     NODE    NODE    SYS     SYS     SYS     SYS     PXB     NODE    NODE    NODE    SYS     SYS     0-31,64-95      0               N/A
GPU1    PXB      X      NODE    NODE    SYS     SYS     SYS     SYS     PXB     NODE    NODE    NODE    SYS     SYS     0-31,64-95      0               N/A
GPU2    NODE    NODE     X      PXB     SYS     SYS     SYS     SYS     NODE    PXB     PXB     PXB     SYS     SYS     0-31,64-95      0               N/A
GPU3    NODE    NODE    PXB      X      SYS     SYS     SYS     SYS     NODE    PXB     PXB     PXB     SYS     SYS     0-31,64-95      0               N/A
GPU4    SYS     SYS     SYS     SYS      X      PXB     NODE    NODE    SYS     SYS     SYS     SYS     PXB     NODE    32-63,96-127    1               N/A
GPU5    SYS     SYS     SYS     SYS     PXB      X      NODE    NODE    SYS     SYS     SYS     SYS     PXB     NODE    32-63,96-127    1               N/A
GPU6    SYS     SYS     SYS     SYS     NODE    NODE     X      PXB     SYS     SYS     SYS     SYS     NODE    PXB     32-63,96-127    1               N/A
GPU7    SYS     SYS     SYS     SYS     NODE    NODE    PXB      X      SYS     SYS     SYS     SYS     NODE    PXB     32-63,96-127    1               N/A
NIC0    PXB     PXB     NODE    NODE    SYS     SYS     SYS     SYS      X      NODE    NODE    NODE    SYS     SYS
NIC1    NODE    NODE    PXB     PXB     SYS     SYS     SYS     SYS     NODE     X      PIX     PIX     SYS     SYS
NIC2    NODE    NODE    PXB     PXB     SYS     SYS     SYS     SYS     NODE    PIX      X      PIX     SYS     SYS
NIC3    NODE    NODE    PXB     PXB     SYS     SYS     SYS     SYS     NODE    PIX     PIX      X      SYS     SYS
NIC4    SYS     SYS     SYS     SYS     PXB     PXB     NODE    NODE    SYS     SYS     SYS     SYS      X      NODE
NIC5    SYS     SYS     SYS     SYS     NODE    NODE    PXB     PXB     SYS     SYS     SYS     SYS     NODE     X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
  NIC2: mlx5_2
  NIC3: mlx5_3
  NIC4: mlx5_4
  NIC5: mlx5_5
)";

// 8 PCIe GPUs in pairs behind one bridge each (a public server topology report, 2026): PIX, NODE, SYS.
const std::string kPciePairs =
    R"(        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      PIX     NODE    NODE    SYS     SYS     SYS     SYS     0-23,48-71      0               N/A
GPU1    PIX      X      NODE    NODE    SYS     SYS     SYS     SYS     0-23,48-71      0               N/A
GPU2    NODE    NODE     X      PIX     SYS     SYS     SYS     SYS     0-23,48-71      0               N/A
GPU3    NODE    NODE    PIX      X      SYS     SYS     SYS     SYS     0-23,48-71      0               N/A
GPU4    SYS     SYS     SYS     SYS      X      PIX     NODE    NODE    24-47,72-95     1               N/A
GPU5    SYS     SYS     SYS     SYS     PIX      X      NODE    NODE    24-47,72-95     1               N/A
GPU6    SYS     SYS     SYS     SYS     NODE    NODE     X      PIX     24-47,72-95     1               N/A
GPU7    SYS     SYS     SYS     SYS     NODE    NODE    PIX      X      24-47,72-95     1               N/A

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
)";

// 8 x RTX 4090 and 2 NICs, tab-separated with an empty cell before GPU NUMA ID
// (github.com/NVIDIA/go-gpuallocator/issues/17).
const std::string kRtx4090Tabs =
    "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU1\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU2\tSYS\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU3\tSYS\tSYS\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU4\tSYS\tSYS\tSYS\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "GPU5\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tSYS\tSYS\tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "GPU6\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tSYS\tPHB\tPHB\t56-111,168-223\t1\t\tN/A\n"
    "GPU7\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "NIC0\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPHB\tSYS\t X \tPIX\n"
    "NIC1\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPHB\tSYS\tPIX\t X\n";

// An older driver: NICs named mlx5_* instead of NIC#, only a CPU Affinity column, and NVLink
// between some pairs only (4 GPUs of a public HPC cluster's notes, 2019), after a shell prompt.
const std::string kOldMlx = R"($ nvidia-smi topo -m
        GPU0    GPU1    GPU2    GPU3    mlx5_0  mlx5_1  mlx5_2  mlx5_3  CPU Affinity
GPU0     X      NV2     NV1     NODE    PIX     PIX     NODE    NODE    14-27
GPU1    NV2      X      NODE    NV2     PIX     PIX     NODE    NODE    14-27
GPU2    NV1     NODE     X      NV2     NODE    NODE    PIX     PIX     14-27
GPU3    NODE    NV2     NV2      X      NODE    NODE    PIX     PIX     14-27
mlx5_0  PIX     PIX     NODE    NODE     X      PIX     NODE    NODE
mlx5_1  PIX     PIX     NODE    NODE    PIX      X      NODE    NODE
mlx5_2  NODE    NODE    PIX     PIX     NODE    NODE     X      PIX
mlx5_3  NODE    NODE    PIX     PIX     NODE    NODE    PIX      X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
)";

// The lead's target machine, in the shape nvidia-smi prints it (written by hand, not captured):
// 4 x H200, every pair NV18, PCIe Gen5 x16, two NUMA nodes, 4 NICs.
const std::string k4xH200 =
    R"(        GPU0    GPU1    GPU2    GPU3    NIC0    NIC1    NIC2    NIC3    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    NV18    NV18    PIX     NODE    SYS     SYS     0-47,96-143     0               N/A
GPU1    NV18     X      NV18    NV18    NODE    PIX     SYS     SYS     0-47,96-143     0               N/A
GPU2    NV18    NV18     X      NV18    SYS     SYS     PIX     NODE    48-95,144-191   1               N/A
GPU3    NV18    NV18    NV18     X      SYS     SYS     NODE    PIX     48-95,144-191   1               N/A
NIC0    PIX     NODE    SYS     SYS      X      NODE    SYS     SYS
NIC1    NODE    PIX     SYS     SYS     NODE     X      SYS     SYS
NIC2    SYS     SYS     PIX     NODE    SYS     SYS      X      NODE
NIC3    SYS     SYS     NODE    PIX     SYS     SYS     NODE     X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
  NIC2: mlx5_2
  NIC3: mlx5_3
)";

// nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,
// pcie.link.width.current,pcie.link.width.max --format=csv,noheader on that machine.
const std::string k4xH200Csv =
    "0, NVIDIA H200, GPU-3f2a6c1e-8b1d-4e55-9c0a-1b2c3d4e5f60, 00000000:19:00.0, 5, 5, 16, 16\n"
    "1, NVIDIA H200, GPU-7d41b2a9-0c3e-4f21-8a6b-2c3d4e5f6071, 00000000:3B:00.0, 5, 5, 16, 16\n"
    "2, NVIDIA H200, GPU-a9e03c77-5f12-4b8d-b1c4-3d4e5f607182, 00000000:4C:00.0, 5, 5, 16, 16\n"
    "3, NVIDIA H200, GPU-c05d8e14-2a6f-4c90-9e3b-4e5f60718293, 00000000:5D:00.0, 5, 5, 16, 16\n";

// The same query on 8 idle L40S (values as captured in a public write-up: the link idles at Gen1
// while its maximum is Gen4 x16).
const std::string kL40sIdleCsv =
    "0, NVIDIA L40S, GPU-0a, 00000000:1B:00.0, 1, 4, 16, 16\n"
    "1, NVIDIA L40S, GPU-1b, 00000000:1C:00.0, 1, 4, 16, 16\n"
    "2, NVIDIA L40S, GPU-2c, 00000000:3D:00.0, 1, 4, 16, 16\n"
    "3, NVIDIA L40S, GPU-3d, 00000000:3E:00.0, 1, 4, 16, 16\n"
    "4, NVIDIA L40S, GPU-4e, 00000000:9F:00.0, 1, 4, 16, 16\n"
    "5, NVIDIA L40S, GPU-5f, 00000000:A0:00.0, 1, 4, 16, 16\n"
    "6, NVIDIA L40S, GPU-60, 00000000:C1:00.0, 1, 4, 16, 16\n"
    "7, NVIDIA L40S, GPU-71, 00000000:C2:00.0, 1, 4, 16, 16\n";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string kinds_row(const TopoMatrix& m, std::size_t row) {
  std::string s;
  for (const Link& l : m.links[row])
    s += (s.empty() ? "" : " ") + (l.kind == "NVLINK" ? "NV" + std::to_string(l.nvlinks) : l.kind);
  return s;
}

Topology four_h200() { return parse_nvidia_smi(k4xH200, k4xH200Csv); }

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// The model: peaks, ids, JSON, rendering

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

// ---------------------------------------------------------------------------------------------
// NVML through the stand-in library (topology/fake_nvml/fake_nvml.cpp)

class TopologyNvml : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("FAKE_NVML_SCENARIO"); }
  static NvmlLibrary open_scenario(const char* scenario) {
    setenv("FAKE_NVML_SCENARIO", scenario, 1);
    return NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  }
};

TEST_F(TopologyNvml, NvSwitchNodeIsNv18EveryPair) {
  NvmlLibrary nvml = open_scenario("nvswitch4");
  ASSERT_TRUE(nvml.available()) << nvml.unavailable_reason();
  Topology t = nvml.read_topology();
  EXPECT_EQ(t.source, "nvml");
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.gpus[1].name, "NVIDIA H200");
  EXPECT_EQ(t.gpus[1].uuid, "GPU-fa4e0000-0000-0000-0000-000000000001");
  EXPECT_EQ(t.gpus[1].pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(t.gpus[1].pcie_gen, 5);
  EXPECT_EQ(t.gpus[1].pcie_width_max, 16);
  EXPECT_EQ(t.gpus[1].numa_node, -1);  // NVML does not say; discover_topology reads sysfs
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 4; ++k) {
      const Link& l = t.links[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)];
      EXPECT_EQ(l.kind, i == k ? "SELF" : "NVLINK");
      if (i == k) continue;
      EXPECT_EQ(l.nvlinks, 18);
      EXPECT_EQ(l.nvlink_version, 4);
      EXPECT_DOUBLE_EQ(link_peak_GBps(t, i, k), 478.125);
    }
}

TEST_F(TopologyNvml, DirectLinksAreCountedPerPair) {
  Topology t = open_scenario("direct4").read_topology();
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.links[0][1].kind, "NVLINK");
  EXPECT_EQ(t.links[0][1].nvlinks, 4);
  EXPECT_EQ(t.links[2][3].nvlinks, 4);
  EXPECT_EQ(t.links[0][1].nvlink_version, 3);  // NVML_NVLINK_VERSION_3_1
  EXPECT_DOUBLE_EQ(link_peak_GBps(t, 0, 3), 100.0);
}

TEST_F(TopologyNvml, PcieNodeUsesTheCommonAncestor) {
  Topology t = open_scenario("pcie3").read_topology();
  ASSERT_EQ(t.gpus.size(), 3u);
  EXPECT_EQ(t.links[0][1].kind, "PXB");
  EXPECT_EQ(t.links[0][2].kind, "SYS");
  EXPECT_EQ(t.gpus[0].pcie_gen, 1);
  EXPECT_EQ(t.gpus[0].pcie_gen_max, 4);
  EXPECT_NEAR(link_peak_GBps(t, 0, 1), 31.504, 1e-9);
  EXPECT_FALSE(nvlink_joined(t, {0, 1}));
}

TEST_F(TopologyNvml, InaccessibleGpuIsLeftOut) {
  Topology t = open_scenario("hidden3").read_topology();
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.gpus[0].index, 0);
  EXPECT_EQ(t.gpus[1].index, 2);
  EXPECT_EQ(t.links[0][1].kind, "PIX");
}

TEST_F(TopologyNvml, LinksToTheCpuAreNotGpuLinks) {
  Topology t = open_scenario("ibmnpu2").read_topology();
  EXPECT_EQ(t.links[0][1].nvlinks, 2);
  EXPECT_EQ(t.links[0][1].nvlink_version, 2);
}

TEST_F(TopologyNvml, NoGpuAndNoDriver) {
  EXPECT_TRUE(open_scenario("none").read_topology().gpus.empty());
  NvmlLibrary no_driver = open_scenario("no_driver");
  EXPECT_FALSE(no_driver.available());
  EXPECT_EQ(no_driver.unavailable_reason(), "nvmlInit_v2: Driver Not Loaded (9)");
  EXPECT_EQ(error_of([&] { no_driver.read_topology(); }), "NVML is not available: nvmlInit_v2: Driver Not Loaded (9)");
}

TEST_F(TopologyNvml, MissingLibraryOrSymbolsIsNotAvailable) {
  NvmlLibrary missing = NvmlLibrary::open("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(missing.available());
  EXPECT_EQ(missing.unavailable_reason().rfind("cannot open /nonexistent/libnvidia-ml.so.1: ", 0), 0u)
      << missing.unavailable_reason();
  NvmlLibrary not_nvml = NvmlLibrary::open("libm.so.6");  // opens, but has none of NVML's symbols
  EXPECT_FALSE(not_nvml.available());
  EXPECT_EQ(not_nvml.unavailable_reason().rfind("libm.so.6 lacks nvmlInit_v2, nvmlShutdown, nvmlErrorString", 0), 0u)
      << not_nvml.unavailable_reason();
}

TEST_F(TopologyNvml, ShutdownOnceWhenTheLastOwnerGoes) {
  void* fake = dlopen(SCALEBENCH_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);  // keeps it loaded to read its counter
  ASSERT_NE(fake, nullptr) << dlerror();
  auto live = reinterpret_cast<int (*)()>(dlsym(fake, "fake_nvml_live_inits"));
  ASSERT_NE(live, nullptr);
  {
    NvmlLibrary a = open_scenario("nvswitch4");
    EXPECT_EQ(live(), 1);
    NvmlLibrary b = std::move(a);
    EXPECT_FALSE(a.available());  // NOLINT(bugprone-use-after-move): moved-from is documented empty
    EXPECT_TRUE(b.available());
    EXPECT_EQ(live(), 1);
  }
  EXPECT_EQ(live(), 0);
  dlclose(fake);
}

TEST(TopologyNvmlValues, PathKindsAndVersions) {
  EXPECT_EQ(pcie_path_kind(0), "PIX");
  EXPECT_EQ(pcie_path_kind(10), "PIX");
  EXPECT_EQ(pcie_path_kind(20), "PXB");
  EXPECT_EQ(pcie_path_kind(30), "PHB");
  EXPECT_EQ(pcie_path_kind(40), "NODE");
  EXPECT_EQ(pcie_path_kind(50), "SYS");
  EXPECT_EQ(pcie_path_kind(60), "SYS");
  EXPECT_EQ(nvlink_major_version(4), 3);
  EXPECT_EQ(nvlink_major_version(5), 3);
  EXPECT_EQ(nvlink_major_version(6), 4);
  EXPECT_EQ(nvlink_major_version(7), 5);
  EXPECT_EQ(nvlink_major_version(0), 0);
}

// ---------------------------------------------------------------------------------------------
// discover_topology: the fallbacks, with stand-ins for NVML, nvidia-smi and sysfs

class TopologyDiscover : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/scalebench-topology-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    options_.nvml_library = dir_ + "/no-libnvidia-ml.so.1";
    options_.nvidia_smi = dir_ + "/no-nvidia-smi";
    options_.sysfs_root = dir_ + "/sys";
  }
  void TearDown() override {
    unsetenv("FAKE_NVML_SCENARIO");
    std::filesystem::remove_all(dir_);
  }
  void write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(dir_ + "/" + name).parent_path());
    std::ofstream(dir_ + "/" + name) << text;
  }
  // A nvidia-smi that prints `topo` for "topo -m" and `csv` for --query-gpu.
  void fake_nvidia_smi(const std::string& topo, const std::string& csv, const std::string& topo_exit = "0",
                       const std::string& delay = "0") {
    write("topo.txt", topo);
    write("query.csv", csv);
    write("nvidia-smi", "#!/bin/sh\nsleep " + delay + "\nif [ \"$1\" = topo ]; then cat '" + dir_ +
                            "/topo.txt'; exit " + topo_exit + "; fi\ncat '" + dir_ + "/query.csv'\n");
    chmod((dir_ + "/nvidia-smi").c_str(), 0755);
    options_.nvidia_smi = dir_ + "/nvidia-smi";
  }
  std::string dir_;
  DiscoverOptions options_;
};

TEST_F(TopologyDiscover, NothingThereIsNoneNotAnError) {
  Topology t = discover_topology(options_);
  EXPECT_EQ(t.source, "none");
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_TRUE(t.links.empty());
}

TEST_F(TopologyDiscover, NvmlFirstWithNumaFromSysfs) {
  setenv("FAKE_NVML_SCENARIO", "nvswitch4", 1);
  options_.nvml_library = SCALEBENCH_FAKE_NVML;
  fake_nvidia_smi(kPcieSwitches, kL40sIdleCsv);  // must not be used
  write("sys/bus/pci/devices/0000:19:00.0/numa_node", "0\n");
  write("sys/bus/pci/devices/0000:4c:00.0/numa_node", "1\n");
  write("sys/bus/pci/devices/0000:5d:00.0/numa_node", "-1\n");
  Topology t = discover_topology(options_);
  EXPECT_EQ(t.source, "nvml");
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.gpus[0].numa_node, 0);
  EXPECT_EQ(t.gpus[1].numa_node, -1);  // no file
  EXPECT_EQ(t.gpus[2].numa_node, 1);
  EXPECT_EQ(t.gpus[3].numa_node, -1);  // -1 in the file
}

TEST_F(TopologyDiscover, NvmlWithoutGpusIsNone) {
  setenv("FAKE_NVML_SCENARIO", "none", 1);
  options_.nvml_library = SCALEBENCH_FAKE_NVML;
  EXPECT_EQ(discover_topology(options_).source, "none");
}

TEST_F(TopologyDiscover, NvidiaSmiWhenNvmlCannotStart) {
  setenv("FAKE_NVML_SCENARIO", "no_driver", 1);
  options_.nvml_library = SCALEBENCH_FAKE_NVML;
  fake_nvidia_smi(k4xH200, k4xH200Csv);
  Topology t = discover_topology(options_);
  EXPECT_EQ(t.source, "nvidia-smi");
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_TRUE(nvlink_joined(t, {0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(link_peak_GBps(t, 1, 2), 478.125);
  EXPECT_EQ(t.gpus[2].numa_node, 1);
}

TEST_F(TopologyDiscover, NumaNotAvailableInTopoIsReadFromSysfs) {
  fake_nvidia_smi(
      "        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      PHB     0-95            N/A             N/A\n"
      "GPU1    PHB      X      0-95            N/A             N/A\n",
      "0, NVIDIA A10, GPU-a, 00000000:17:00.0, 4, 4, 16, 16\n1, NVIDIA A10, GPU-b, 00000000:CA:00.0, 4, 4, 16, 16\n");
  write("sys/bus/pci/devices/0000:ca:00.0/numa_node", "1\n");
  Topology t = discover_topology(options_);
  EXPECT_EQ(t.links[0][1].kind, "PHB");
  EXPECT_EQ(t.gpus[0].numa_node, -1);
  EXPECT_EQ(t.gpus[1].numa_node, 1);
}

TEST_F(TopologyDiscover, FailingTopoMeansSysPairs) {
  fake_nvidia_smi("", k4xH200Csv, "1");
  Topology t = discover_topology(options_);
  EXPECT_EQ(t.source, "nvidia-smi");
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.links[0][0].kind, "SELF");
  EXPECT_EQ(t.links[0][1].kind, "SYS");
  EXPECT_FALSE(nvlink_joined(t, {0, 1}));
}

TEST_F(TopologyDiscover, MalformedNvidiaSmiOutputIsNone) {
  fake_nvidia_smi(k4xH200, "0, NVIDIA H200\n");
  EXPECT_EQ(discover_topology(options_).source, "none");
}

TEST_F(TopologyDiscover, HungNvidiaSmiTimesOut) {
  fake_nvidia_smi(k4xH200, k4xH200Csv, "0", "5");
  options_.nvidia_smi_timeout = std::chrono::milliseconds(300);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(discover_topology(options_).source, "none");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(TopologyDiscoverSysfs, ReadPciNumaNode) {
  EXPECT_EQ(read_pci_numa_node("not a bus id"), -1);
  EXPECT_EQ(read_pci_numa_node("00000000:19:00.0", "/nonexistent"), -1);
}

// ---------------------------------------------------------------------------------------------
// The agent's inventory, built from the topology

TEST(InventoryFromTopology, KeepsTheCoordinatorFieldsAndAddsPcieAndNuma) {
  Topology t = four_h200();
  Json smi = parse_gpu_csv(
      "1, NVIDIA H200, GPU-7d41b2a9-0c3e-4f21-8a6b-2c3d4e5f6071, 00000000:3B:00.0, 143771, 570.86.15\n"
      "0, NVIDIA H200, GPU-3f2a6c1e-8b1d-4e55-9c0a-1b2c3d4e5f60, 00000000:19:00.0, 143771, 570.86.15\n");
  Json gpus = gpu_inventory(t, smi);
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[1].dump(), R"({"index":1,"name":"NVIDIA H200","uuid":"GPU-7d41b2a9-0c3e-4f21-8a6b-2c3d4e5f6071",)"
                            R"("pci_bus_id":"00000000:3B:00.0","memory_mib":143771,"driver":"570.86.15","pcie_gen":5,)"
                            R"("pcie_gen_max":5,"pcie_width":16,"pcie_width_max":16,"numa_node":0})");
  EXPECT_EQ(gpus[0]["memory_mib"], 143771);
  EXPECT_TRUE(gpus[3]["memory_mib"].is_null());  // not in nvidia-smi's list
  EXPECT_EQ(gpus[3]["driver"], "");
  EXPECT_EQ(gpus[3]["index"], 3);
}

TEST(InventoryFromTopology, NoGpuIsAnEmptyList) {
  DiscoverOptions nowhere;
  nowhere.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  nowhere.nvidia_smi = "/nonexistent/nvidia-smi";
  Topology t = discover_topology(nowhere);
  EXPECT_EQ(gpu_inventory(t, Json::array()), Json::array());
  EXPECT_EQ(to_json(t)["source"], "none");
}

}  // namespace
}  // namespace scalebench
