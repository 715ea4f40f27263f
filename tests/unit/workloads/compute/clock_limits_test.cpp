// Clock limits: NVML's power/thermal violation counters of one GPU (topology/nvml_telemetry.cpp)
// and their difference over a measured point (workloads/compute/clock_limits.cpp), read through
// the stand-in libnvidia-ml (GPU 0 of nvswitch4 is held at its power cap a quarter of the time).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/error.hpp"
#include "topology/nvml.hpp"
#include "workloads/compute/clock_limits.hpp"

#ifndef SCALEBENCH_FAKE_NVML
#error "link scalebench_topology_testing: it defines SCALEBENCH_FAKE_NVML, the path of the stand-in libnvidia-ml"
#endif

namespace scalebench {
namespace {

const char* const kGpu0 = "GPU-fa4e0000-0000-0000-0000-000000000000";
const char* const kGpu1 = "GPU-fa4e0000-0000-0000-0000-000000000001";

class ClockLimits : public ::testing::Test {
 protected:
  void SetUp() override { setenv("FAKE_NVML_SCENARIO", "nvswitch4", 1); }
  void TearDown() override { unsetenv("FAKE_NVML_SCENARIO"); }
};

TEST_F(ClockLimits, ReadsTheCountersOfTheGpuWithThatUuid) {
  NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available()) << nvml.unavailable_reason();
  const NvmlClockLimits a = nvml.read_clock_limits(kGpu0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const NvmlClockLimits b = nvml.read_clock_limits(kGpu0);
  ASSERT_TRUE(a.power_capped_ns && b.power_capped_ns);
  EXPECT_GT(*b.power_capped_ns, *a.power_capped_ns);  // capped while we slept
  ASSERT_TRUE(b.thermal_capped_ns);
  EXPECT_EQ(*b.thermal_capped_ns, 0u);
  const NvmlClockLimits other = nvml.read_clock_limits(kGpu1);
  EXPECT_EQ(other.power_capped_ns.value_or(1), 0u);
}

TEST_F(ClockLimits, AnUnknownUuidIsAnErrorNamingIt) {
  NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available());
  try {
    nvml.read_clock_limits("GPU-00000000-dead-beef-0000-000000000000");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU-00000000-dead-beef"), std::string::npos) << e.what();
  }
}

// What a burn watches each interval: its own GPU's clock and power, not every GPU's telemetry.
TEST_F(ClockLimits, ClockAndPowerOfOneGpu) {
  NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available());
  const NvmlClockPower r = nvml.read_clock_power(kGpu1);
  ASSERT_TRUE(r.sm_clock_mhz && r.power_mw);
  EXPECT_GE(*r.sm_clock_mhz, 1095u);
  EXPECT_LE(*r.sm_clock_mhz, 1980u);
  EXPECT_GE(*r.power_mw, 60000u);
  EXPECT_LE(*r.power_mw, 260000u);
  EXPECT_THROW(nvml.read_clock_power("GPU-00000000-dead-beef-0000-000000000000"), Error);
}

TEST_F(ClockLimits, ThermalCounterLeftEmptyWhereTheGpuDoesNotOfferIt) {
  setenv("FAKE_NVML_SCENARIO", "pcie3", 1);
  NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available());
  const NvmlClockLimits l = nvml.read_clock_limits(kGpu0);
  EXPECT_TRUE(l.power_capped_ns);
  EXPECT_FALSE(l.thermal_capped_ns);
}

TEST(ClockLimitsJson, DifferencesInMillisecondsOnlyWhereBothReadingsHaveThem) {
  NvmlClockLimits a, b;
  a.power_capped_ns = 1'000'000'000;
  b.power_capped_ns = 1'250'000'000;
  a.thermal_capped_ns = 5;  // absent after: left out
  Json j = compute::clock_limits_json(a, b, 1000.0);
  EXPECT_DOUBLE_EQ(j.at("power_capped_ms").get<double>(), 250.0);
  EXPECT_DOUBLE_EQ(j.at("window_ms").get<double>(), 1000.0);
  EXPECT_FALSE(j.contains("thermal_capped_ms"));
  // A counter that grew by more than the window (NVML updates on its own schedule) is capped.
  b.power_capped_ns = 1'000'000'000 + 1'500'000'000ull;
  EXPECT_DOUBLE_EQ(compute::clock_limits_json(a, b, 1000.0).at("power_capped_ms").get<double>(), 1000.0);
  // A counter that went backwards (driver reloaded between the readings) says nothing.
  b.power_capped_ns = 10;
  EXPECT_TRUE(compute::clock_limits_json(a, b, 1000.0).empty());
}

TEST_F(ClockLimits, WatchGivesTheCappedShareOfAMeasuredWindow) {
  compute::ClockLimitWatch capped(kGpu0, SCALEBENCH_FAKE_NVML);
  capped.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const Json j = capped.stop();
  ASSERT_TRUE(j.contains("power_capped_ms")) << j.dump();
  const double window = j.at("window_ms").get<double>();
  EXPECT_GE(window, 200.0);
  // The stand-in caps GPU 0 a quarter of the time.
  EXPECT_NEAR(j.at("power_capped_ms").get<double>(), window / 4, window / 20) << j.dump();
  EXPECT_DOUBLE_EQ(j.at("thermal_capped_ms").get<double>(), 0.0);

  compute::ClockLimitWatch free_running(kGpu1, SCALEBENCH_FAKE_NVML);
  free_running.start();
  EXPECT_DOUBLE_EQ(free_running.stop().at("power_capped_ms").get<double>(), 0.0);
}

TEST_F(ClockLimits, WatchIsSilentWithoutNvmlOrForAGpuItDoesNotKnow) {
  compute::ClockLimitWatch unknown("GPU-00000000-dead-beef-0000-000000000000", SCALEBENCH_FAKE_NVML);
  unknown.start();
  EXPECT_TRUE(unknown.stop().empty());
  compute::ClockLimitWatch no_library(kGpu0, "/nonexistent/libnvidia-ml.so.1");
  no_library.start();
  EXPECT_TRUE(no_library.stop().empty());
  setenv("FAKE_NVML_SCENARIO", "no_driver", 1);
  compute::ClockLimitWatch no_driver(kGpu0, SCALEBENCH_FAKE_NVML);
  no_driver.start();
  EXPECT_TRUE(no_driver.stop().empty());
}

}  // namespace
}  // namespace scalebench
