#pragma once
// What the topology tests read: nvidia-smi's outputs as captured on real machines (or written in
// their shape), and small helpers over them.
#include <functional>
#include <string>

#include "common/error.hpp"
#include "tests/unit/error_text.hpp"
#include "topology/nvidia_smi_parse.hpp"
#include "topology/topology.hpp"

namespace scalebench::smi_outputs {

// 8 x NVIDIA H100 80GB HBM3 (HGX, NVSwitch), 8 NICs, driver 570.124.06: `nvidia-smi topo -m` as
// printed by sglang's check_env in a public GitHub issue. Kept verbatim, with its ragged columns
// ("NIC3  NIC4     NIC5", "PIX   SYS") and the trailing space on the last NIC row.
inline const std::string kHgxH100 =
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
inline const std::string kPcieSwitches =
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
inline const std::string kPciePairs =
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
inline const std::string kRtx4090Tabs =
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
inline const std::string kOldMlx = R"($ nvidia-smi topo -m
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
inline const std::string k4xH200 =
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
inline const std::string k4xH200Csv =
    "0, NVIDIA H200, GPU-3f2a6c1e-8b1d-4e55-9c0a-1b2c3d4e5f60, 00000000:19:00.0, 5, 5, 16, 16\n"
    "1, NVIDIA H200, GPU-7d41b2a9-0c3e-4f21-8a6b-2c3d4e5f6071, 00000000:3B:00.0, 5, 5, 16, 16\n"
    "2, NVIDIA H200, GPU-a9e03c77-5f12-4b8d-b1c4-3d4e5f607182, 00000000:4C:00.0, 5, 5, 16, 16\n"
    "3, NVIDIA H200, GPU-c05d8e14-2a6f-4c90-9e3b-4e5f60718293, 00000000:5D:00.0, 5, 5, 16, 16\n";

// The same query on 8 idle L40S (values as captured in a public write-up: the link idles at Gen1
// while its maximum is Gen4 x16).
inline const std::string kL40sIdleCsv =
    "0, NVIDIA L40S, GPU-0a, 00000000:1B:00.0, 1, 4, 16, 16\n"
    "1, NVIDIA L40S, GPU-1b, 00000000:1C:00.0, 1, 4, 16, 16\n"
    "2, NVIDIA L40S, GPU-2c, 00000000:3D:00.0, 1, 4, 16, 16\n"
    "3, NVIDIA L40S, GPU-3d, 00000000:3E:00.0, 1, 4, 16, 16\n"
    "4, NVIDIA L40S, GPU-4e, 00000000:9F:00.0, 1, 4, 16, 16\n"
    "5, NVIDIA L40S, GPU-5f, 00000000:A0:00.0, 1, 4, 16, 16\n"
    "6, NVIDIA L40S, GPU-60, 00000000:C1:00.0, 1, 4, 16, 16\n"
    "7, NVIDIA L40S, GPU-71, 00000000:C2:00.0, 1, 4, 16, 16\n";

using test_support::error_of;

inline std::string kinds_row(const TopoMatrix& m, std::size_t row) {
  std::string s;
  for (const Link& l : m.links[row])
    s += (s.empty() ? "" : " ") + (l.kind == "NVLINK" ? "NV" + std::to_string(l.nvlinks) : l.kind);
  return s;
}

inline Topology four_h200() { return parse_nvidia_smi(k4xH200, k4xH200Csv); }
}  // namespace scalebench::smi_outputs
