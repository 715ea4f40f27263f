#include "agent/inventory.hpp"

#include <gtest/gtest.h>

namespace scalebench {
namespace {

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

}  // namespace
}  // namespace scalebench
