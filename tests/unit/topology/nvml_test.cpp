#include "topology/nvml.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <regex>
#include <string>

#include "tests/unit/topology/fake_nvml.hpp"
#include "tests/unit/topology/nvidia_smi_outputs.hpp"

namespace scalebench {
namespace {

using namespace scalebench::smi_outputs;

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

// NVML_CHECK's message: file:line, the call as written and NVML's own error string with its code.
TEST_F(TopologyNvml, FailedCallNamesFileLineCallAndNvmlError) {
  NvmlLibrary nvml = open_scenario("lost2");
  const std::string e = error_of([&] { nvml.read_topology(); });
  EXPECT_TRUE(std::regex_match(
      e, std::regex(".*topology/nvml\\.cpp:[0-9]+: nvmlDeviceGetUUID\\(d\\.handle, uuid, abi::kUuidBufferSize\\): "
                    "GPU is lost \\(15\\)")))
      << e;
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

}  // namespace
}  // namespace scalebench
