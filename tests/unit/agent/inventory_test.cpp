#include "agent/inventory.hpp"
#include "coordinator/request_checks.hpp"

#include <gtest/gtest.h>

#include "tests/unit/topology/nvidia_smi_outputs.hpp"
#include "topology/discover.hpp"

namespace scalebench {
namespace {

using smi_outputs::four_h200;

TEST(ParseGpuCsv, NvidiaSmiOutput) {
  const std::string csv =
      "0, NVIDIA H100 80GB HBM3, GPU-6f2e1c3a-0000-1111-2222-333344445555, 00000000:19:00.0, 81559, 550.54.15\n"
      "1, NVIDIA H100 80GB HBM3, GPU-7a3b2d4c-0000-1111-2222-333344445555, 00000000:3B:00.0, 81559, 550.54.15\n";
  Json gpus = parse_gpu_csv(csv);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]["index"], 0);
  EXPECT_EQ(gpus[0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[0]["uuid"], "GPU-6f2e1c3a-0000-1111-2222-333344445555");
  EXPECT_EQ(gpus[0]["pci_bus_id"], "00000000:19:00.0");
  EXPECT_EQ(gpus[0]["memory_mib"], 81559);
  EXPECT_EQ(gpus[0]["driver"], "550.54.15");
  EXPECT_EQ(gpus[1]["index"], 1);
  EXPECT_EQ(gpus[1]["pci_bus_id"], "00000000:3B:00.0");
}

TEST(ParseGpuCsv, EmptyOutputIsNoGpus) {
  EXPECT_EQ(parse_gpu_csv(""), Json::array());
  EXPECT_EQ(parse_gpu_csv("\n\n"), Json::array());
}

TEST(ParseGpuCsv, SkipsHeadersErrorsAndShortLines) {
  const std::string csv =
      "index, name, uuid, pci.bus_id, memory.total [MiB], driver_version\n"
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
      "0, NVIDIA A100-SXM4-40GB, GPU-a, 00000000:07:00.0\n"
      "3, NVIDIA A100-SXM4-40GB, GPU-b, 00000000:0F:00.0, 40960, 535.104.05\n";
  Json gpus = parse_gpu_csv(csv);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]["index"], 3);
  EXPECT_EQ(gpus[0]["uuid"], "GPU-b");
  EXPECT_EQ(gpus[0]["memory_mib"], 40960);
}

TEST(ParseGpuCsv, UnknownMemoryIsNull) {
  Json gpus = parse_gpu_csv("0, Some GPU, GPU-x, 00000000:01:00.0, [N/A], 550.00\n");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_TRUE(gpus[0]["memory_mib"].is_null());
  EXPECT_EQ(gpus[0]["driver"], "550.00");
}

TEST(ParseGpuCsv, WindowsLineEndingsAndExtraSpacesAreTrimmed) {
  Json gpus = parse_gpu_csv("0 ,  Tesla T4 , GPU-t4 , 00000000:00:04.0 , 15360 , 535.00\r\n");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]["name"], "Tesla T4");
  EXPECT_EQ(gpus[0]["uuid"], "GPU-t4");
  EXPECT_EQ(gpus[0]["memory_mib"], 15360);
  EXPECT_EQ(gpus[0]["driver"], "535.00");
}

TEST(ParseGpuCsv, LastLineWithoutNewline) {
  Json gpus = parse_gpu_csv("0, A, GPU-a, 0:1:0.0, 100, 1\n1, B, GPU-b, 0:2:0.0, 200, 1");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1]["name"], "B");
  EXPECT_EQ(gpus[1]["memory_mib"], 200);
}

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

// What the agent sends, the coordinator takes: a value no hardware has (an NVML error code read
// as a number, a NUMA node past 1023) goes as unknown instead of failing the registration.
TEST(InventoryFromTopology, IsARegistrationTheCoordinatorTakes) {
  Topology t = four_h200();
  t.gpus[1].numa_node = 99999;
  t.gpus[2].pcie_width = -1;  // 0xffffffff from the driver
  t.gpus[3].pcie_gen = 255;
  Json smi = parse_gpu_csv("0, NVIDIA H200, " + t.gpus[0].uuid + ", 00000000:19:00.0, 99999999999999, 570.86.15\n");
  Json gpus = gpu_inventory(t, smi);
  EXPECT_EQ(gpus[1]["numa_node"], -1);
  EXPECT_EQ(gpus[2]["pcie_width"], 0);
  EXPECT_EQ(gpus[3]["pcie_gen"], 0);
  EXPECT_TRUE(gpus[0]["memory_mib"].is_null());
  EXPECT_EQ(check_register_body(Json{{"name", "n1"}, {"gpus", gpus}}), "");
}

TEST(InventoryFromTopology, NoGpuIsAnEmptyList) {
  DiscoverOptions nowhere;
  nowhere.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  nowhere.nvidia_smi = "/nonexistent/nvidia-smi";
  Topology t = discover_topology(nowhere);
  EXPECT_EQ(gpu_inventory(t, Json::array()), Json::array());
  EXPECT_EQ(to_json(t)["source"], "none");
}

// An agent started with CUDA_VISIBLE_DEVICES offers the GPUs CUDA would show it, and no others.
TEST(VisibleGpus, ReadAsCudaReadsIt) {
  const Json gpus =
      Json::array({Json{{"index", 0}, {"uuid", "GPU-6f2e1c3a-0000"}}, Json{{"index", 1}, {"uuid", "GPU-7a3b2d4c-0000"}},
                   Json{{"index", 2}, {"uuid", "GPU-7a3b9999-0000"}}});
  auto indexes = [&](const char* value, std::string* ignored = nullptr) {
    std::vector<int> out;
    for (const Json& g : visible_gpus(gpus, value, ignored)) out.push_back(g["index"].get<int>());
    return out;
  };
  EXPECT_EQ(indexes(nullptr), (std::vector<int>{0, 1, 2})) << "unset: all";
  EXPECT_EQ(indexes(""), std::vector<int>{}) << "empty: none, as CUDA";
  EXPECT_EQ(indexes("2,0"), (std::vector<int>{2, 0})) << "ordinals, in the order given";
  EXPECT_EQ(indexes(" 1 "), (std::vector<int>{1}));
  EXPECT_EQ(indexes("GPU-6f2e,GPU-7a3b9"), (std::vector<int>{0, 2})) << "UUID prefixes";
  std::string ignored;
  EXPECT_EQ(indexes("1,7,0", &ignored), (std::vector<int>{1})) << "an entry naming no GPU ends the list";
  EXPECT_EQ(ignored, "7,0");
  ignored.clear();
  EXPECT_EQ(indexes("GPU-7a3b,0", &ignored), std::vector<int>{}) << "a prefix of two UUIDs names neither";
  EXPECT_EQ(ignored, "GPU-7a3b,0");
  EXPECT_EQ(indexes("0,0"), (std::vector<int>{0})) << "twice is once";
  EXPECT_EQ(indexes("MIG-1234,0"), std::vector<int>{});
}

}  // namespace
}  // namespace scalebench
