#include "topology/discover.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/topology/fake_nvml.hpp"
#include "tests/unit/topology/nvidia_smi_outputs.hpp"

namespace scalebench {
namespace {

using namespace scalebench::smi_outputs;

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

}  // namespace
}  // namespace scalebench
