// GPU telemetry: NVML's units to base units, rates from counters, labels and the text format;
// reading through the stand-in libnvidia-ml (topology/fake_nvml/fake_nvml.cpp); the sampler and
// the agent's /metrics endpoint.
#include "agent/gpu_telemetry.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "agent/metrics_endpoint.hpp"
#include "common/error.hpp"
#include "http/http_client.hpp"
#include "topology/nvml.hpp"

#ifndef SCALEBENCH_FAKE_NVML
#error "link scalebench_topology_testing: it defines SCALEBENCH_FAKE_NVML, the path of the stand-in libnvidia-ml"
#endif

namespace scalebench {
namespace {

// Lines of `text` (samples, not comments) for metric `name` that contain every one of `parts`.
std::vector<std::string> lines_of(const std::string& text, const std::string& name,
                                  const std::vector<std::string>& parts = {}) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + "{", 0) != 0 && line.rfind(name + " ", 0) != 0) continue;
    bool all = true;
    for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) out.push_back(line);
  }
  return out;
}

double value_of(const std::string& line) { return std::stod(line.substr(line.rfind(' ') + 1)); }

NvmlGpuReading reading() {
  NvmlGpuReading r;
  r.index = 2;
  r.uuid = "GPU-2";
  r.name = "NVIDIA H200";
  r.pci_bus_id = "00000000:19:00.0";
  r.power_mw = 123456;
  r.sm_clock_mhz = 1980;
  r.gpu_utilization_pct = 55;
  r.memory_utilization_pct = 7;
  r.memory_used_bytes = 5ull << 30;
  r.memory_total_bytes = 143771ull << 20;
  r.pcie_tx_kBps = 1000;
  r.pcie_rx_kBps = 250;
  r.nvlink_tx_kib = 3048;
  r.nvlink_rx_kib = 2000;
  r.nvlink_timestamp_us = 3'000'000;
  return r;
}

TEST(GpuTelemetrySample, ConvertsNvmlUnitsToBaseUnits) {
  GpuTelemetrySample s = to_sample(reading(), nullptr);
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.uuid, "GPU-2");
  EXPECT_EQ(s.model, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(*s.power_watts, 123.456);
  EXPECT_DOUBLE_EQ(*s.sm_clock_hertz, 1.98e9);
  EXPECT_DOUBLE_EQ(*s.utilization_ratio, 0.55);
  EXPECT_DOUBLE_EQ(*s.memory_utilization_ratio, 0.07);
  EXPECT_DOUBLE_EQ(*s.memory_used_bytes, 5.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(*s.memory_total_bytes, 143771.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(*s.pcie_transmit_bytes_per_second, 1024000.0);  // NVML's KB are KiB
  EXPECT_DOUBLE_EQ(*s.pcie_receive_bytes_per_second, 256000.0);
  // A counter needs a previous reading for a rate.
  EXPECT_FALSE(s.nvlink_transmit_bytes_per_second);
  EXPECT_FALSE(s.nvlink_receive_bytes_per_second);
}

TEST(GpuTelemetrySample, NvLinkRateIsCounterGrowthOverNvmlTime) {
  NvmlGpuReading before = reading();
  before.nvlink_tx_kib = 1000;
  before.nvlink_rx_kib = 1000;
  before.nvlink_timestamp_us = 1'000'000;
  GpuTelemetrySample s = to_sample(reading(), &before);
  // 2048 KiB in 2 s sent, 1000 KiB in 2 s received.
  EXPECT_DOUBLE_EQ(*s.nvlink_transmit_bytes_per_second, 2048.0 * 1024 / 2);
  EXPECT_DOUBLE_EQ(*s.nvlink_receive_bytes_per_second, 1000.0 * 1024 / 2);
}

TEST(GpuTelemetrySample, NoRateAcrossAResetAnotherGpuOrNoTime) {
  NvmlGpuReading before = reading();
  before.nvlink_tx_kib = 9999;  // more than now: the driver reset the counter
  before.nvlink_timestamp_us = 1'000'000;
  GpuTelemetrySample reset = to_sample(reading(), &before);
  EXPECT_FALSE(reset.nvlink_transmit_bytes_per_second);
  EXPECT_TRUE(reset.nvlink_receive_bytes_per_second);  // each direction on its own

  NvmlGpuReading other = reading();
  other.uuid = "GPU-3";
  other.nvlink_tx_kib = 0;
  other.nvlink_timestamp_us = 1'000'000;
  EXPECT_FALSE(to_sample(reading(), &other).nvlink_transmit_bytes_per_second);

  NvmlGpuReading same_time = reading();
  same_time.nvlink_tx_kib = 0;
  EXPECT_FALSE(to_sample(reading(), &same_time).nvlink_transmit_bytes_per_second);
}

TEST(GpuTelemetrySample, ClockLimitRatiosAreViolationGrowthOverNvmlTime) {
  NvmlGpuReading before = reading(), now = reading();
  before.power_capped_ns = 1'000'000'000;
  before.thermal_capped_ns = 7;
  before.capped_timestamp_us = 10'000'000;
  now.power_capped_ns = 1'500'000'000;  // 0.5 s of 2 s held by the power limit
  now.thermal_capped_ns = 7;
  now.capped_timestamp_us = 12'000'000;
  GpuTelemetrySample s = to_sample(now, &before);
  ASSERT_TRUE(s.clocks_power_limited_ratio && s.clocks_thermal_limited_ratio);
  EXPECT_DOUBLE_EQ(*s.clocks_power_limited_ratio, 0.25);
  EXPECT_DOUBLE_EQ(*s.clocks_thermal_limited_ratio, 0.0);
  // No previous reading, a counter that went back, or no time between them: no ratio.
  EXPECT_FALSE(to_sample(now, nullptr).clocks_power_limited_ratio);
  before.power_capped_ns = 2'000'000'000;
  EXPECT_FALSE(to_sample(now, &before).clocks_power_limited_ratio);
  before.capped_timestamp_us = now.capped_timestamp_us;
  EXPECT_FALSE(to_sample(now, &before).clocks_thermal_limited_ratio);
}

TEST(GpuTelemetrySample, UnreadQuantitiesStayEmpty) {
  NvmlGpuReading r;
  r.uuid = "GPU-0";
  GpuTelemetrySample s = to_sample(r, &r);
  EXPECT_FALSE(s.power_watts || s.sm_clock_hertz || s.utilization_ratio || s.memory_used_bytes ||
               s.pcie_transmit_bytes_per_second || s.nvlink_transmit_bytes_per_second);
}

TEST(GpuTelemetryText, GpuSeriesCarryDcgmExporterLabelsAndNoRun) {
  NvmlGpuReading before = reading();
  before.nvlink_tx_kib = 1000;
  before.nvlink_rx_kib = 1000;
  before.nvlink_timestamp_us = 1'000'000;
  TelemetryLabels labels{"node-a", "host-a"};
  const std::string text = telemetry_metrics_text({to_sample(reading(), &before)}, labels, true);
  // dcgm-exporter's names, so that its series and these join on (Hostname, gpu) or UUID.
  const std::string gpu = "gpu=\"2\"", uuid = "UUID=\"GPU-2\"", model = "modelName=\"NVIDIA H200\"",
                    pci = "pci_bus_id=\"00000000:19:00.0\"";
  const std::vector<std::string> common{"Hostname=\"host-a\""};
  auto one = [&](const std::string& name, std::vector<std::string> parts) {
    for (const auto& c : common) parts.push_back(c);
    auto found = lines_of(text, name, parts);
    EXPECT_EQ(found.size(), 1u) << name << " in\n" << text;
    return found.empty() ? -1.0 : value_of(found[0]);
  };
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_power_watts", {gpu, uuid, model, pci}), 123.456);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_sm_clock_hertz", {gpu, uuid, model, pci}), 1.98e9);
  // None of the old names, and no run: a GPU's series stay one series across runs.
  for (const char* gone : {"uuid=", "model=", "hostname=", "run_id=", "experiment="})
    EXPECT_EQ(text.find(gone), std::string::npos) << gone << " in\n" << text;
  EXPECT_EQ(lines_of(text, "scalebench_agent_gpu_telemetry_available", {"agent=\"node-a\""}).size(), 1u);
  EXPECT_DOUBLE_EQ(one("scalebench_agent_gpu_telemetry_available", {}), 1);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_power_watts", {gpu, uuid, model}), 123.456);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_sm_clock_hertz", {gpu, uuid, model}), 1.98e9);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_utilization_ratio", {gpu}), 0.55);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_memory_utilization_ratio", {gpu}), 0.07);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_memory_used_bytes", {gpu}), 5.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_memory_total_bytes", {gpu}), 143771.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_pcie_bytes_per_second", {gpu, "direction=\"tx\""}), 1024000.0);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_pcie_bytes_per_second", {gpu, "direction=\"rx\""}), 256000.0);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_nvlink_bytes_per_second", {gpu, "direction=\"tx\""}), 2048.0 * 512);
  EXPECT_DOUBLE_EQ(one("scalebench_gpu_nvlink_bytes_per_second", {gpu, "direction=\"rx\""}), 1000.0 * 512);
  EXPECT_EQ(lines_of(text, "scalebench_gpu_clocks_limited_ratio").size(), 0u);  // no counters in reading()
  EXPECT_NE(text.find("# TYPE scalebench_gpu_power_watts gauge"), std::string::npos);
  EXPECT_NE(text.find("# TYPE scalebench_gpu_nvlink_bytes_per_second gauge"), std::string::npos);
}

TEST(GpuTelemetryText, NoNvLinkFamilyWithoutAPreviousReading) {
  const std::string text = telemetry_metrics_text({to_sample(reading(), nullptr)}, {"node-a", "host-a"}, true);
  EXPECT_EQ(lines_of(text, "scalebench_gpu_power_watts").size(), 1u);
  EXPECT_EQ(text.find("scalebench_gpu_nvlink_bytes_per_second"), std::string::npos) << text;
}

TEST(GpuTelemetryText, WithoutNvmlOnlyTheAvailabilityGauge) {
  const std::string text = telemetry_metrics_text({}, {"node-a", "host-a"}, false);
  auto avail = lines_of(text, "scalebench_agent_gpu_telemetry_available", {"agent=\"node-a\""});
  ASSERT_EQ(avail.size(), 1u) << text;
  EXPECT_DOUBLE_EQ(value_of(avail[0]), 0);
  EXPECT_EQ(text.find("scalebench_gpu_"), std::string::npos) << text;
}

TEST(GpuTelemetryText, LabelValuesAreEscaped) {
  GpuTelemetrySample s = to_sample(reading(), nullptr);
  s.model = "odd \"model\"\\x";
  const std::string text = telemetry_metrics_text({s}, {"node-a", "host-a"}, true);
  EXPECT_NE(text.find(R"(modelName="odd \"model\"\\x")"), std::string::npos) << text;
}

// ---------------------------------------------------------------------------------------------
// Through the stand-in libnvidia-ml

class GpuTelemetryNvml : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("FAKE_NVML_SCENARIO"); }
  static void scenario(const char* name) { setenv("FAKE_NVML_SCENARIO", name, 1); }
};

TEST_F(GpuTelemetryNvml, ReadsEveryQuantityOfEveryGpu) {
  scenario("nvswitch4");
  NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available()) << nvml.unavailable_reason();
  auto first = nvml.read_telemetry();
  ASSERT_EQ(first.size(), 4u);
  for (const NvmlGpuReading& r : first) {
    EXPECT_EQ(r.name, "NVIDIA H200");
    EXPECT_EQ(r.uuid, "GPU-fa4e0000-0000-0000-0000-00000000000" + std::to_string(r.index));
    EXPECT_FALSE(r.pci_bus_id.empty());
    ASSERT_TRUE(r.power_mw && r.sm_clock_mhz && r.gpu_utilization_pct && r.memory_used_bytes && r.pcie_tx_kBps &&
                r.pcie_rx_kBps && r.nvlink_tx_kib && r.nvlink_rx_kib);
    EXPECT_GE(*r.power_mw, 60000u);
    EXPECT_LE(*r.power_mw, 260000u);
    EXPECT_GE(*r.sm_clock_mhz, 1095u);
    EXPECT_LE(*r.sm_clock_mhz, 1980u);
    EXPECT_LE(*r.gpu_utilization_pct, 100u);
    EXPECT_EQ(*r.memory_total_bytes, 143771ull << 20);
    EXPECT_LT(*r.memory_used_bytes, *r.memory_total_bytes);
    EXPECT_GT(r.nvlink_timestamp_us, 0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto second = nvml.read_telemetry();
  ASSERT_EQ(second.size(), 4u);
  // GPU i sends (i + 1) GiB/s and receives half that: the rates come out of the counters.
  for (std::size_t i = 0; i < 4; ++i) {
    GpuTelemetrySample s = to_sample(second[i], &first[i]);
    const double gib = 1024.0 * 1024 * 1024;
    ASSERT_TRUE(s.nvlink_transmit_bytes_per_second && s.nvlink_receive_bytes_per_second);
    EXPECT_NEAR(*s.nvlink_transmit_bytes_per_second / gib, i + 1.0, 0.15 * (i + 1));
    EXPECT_NEAR(*s.nvlink_receive_bytes_per_second / gib, (i + 1.0) / 2, 0.15 * (i + 1));
  }
}

TEST_F(GpuTelemetryNvml, ClockLimitSeriesFromTheViolationCounters) {
  scenario("nvswitch4");
  NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available());
  auto first = nvml.read_telemetry();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto second = nvml.read_telemetry();
  ASSERT_EQ(second.size(), 4u);
  std::vector<GpuTelemetrySample> samples;
  for (std::size_t i = 0; i < 4; ++i) samples.push_back(to_sample(second[i], &first[i]));
  // The stand-in holds GPU 0 at its power cap a quarter of the time, the others never.
  ASSERT_TRUE(samples[0].clocks_power_limited_ratio);
  EXPECT_NEAR(*samples[0].clocks_power_limited_ratio, 0.25, 0.05);
  EXPECT_DOUBLE_EQ(samples[1].clocks_power_limited_ratio.value_or(-1), 0.0);
  const std::string text = telemetry_metrics_text(samples, {"node-a", "host-a"}, true);
  EXPECT_EQ(lines_of(text, "scalebench_gpu_clocks_limited_ratio", {"reason=\"power\""}).size(), 4u) << text;
  EXPECT_EQ(lines_of(text, "scalebench_gpu_clocks_limited_ratio", {"reason=\"thermal\""}).size(), 4u) << text;
}

TEST_F(GpuTelemetryNvml, GpuWithoutNvLinkHasNoNvLinkCounters) {
  scenario("pcie3");
  NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  auto readings = nvml.read_telemetry();
  ASSERT_EQ(readings.size(), 3u);
  for (const auto& r : readings) {
    EXPECT_FALSE(r.nvlink_tx_kib);
    EXPECT_FALSE(r.nvlink_rx_kib);
    EXPECT_TRUE(r.power_mw);
    EXPECT_EQ(*r.memory_total_bytes, 46068ull << 20);
  }
}

TEST_F(GpuTelemetryNvml, HiddenGpuIsLeftOutAndNoDriverThrows) {
  scenario("hidden3");
  {
    NvmlLibrary nvml = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
    auto readings = nvml.read_telemetry();
    ASSERT_EQ(readings.size(), 2u);
    EXPECT_EQ(readings[0].index, 0);
    EXPECT_EQ(readings[1].index, 2);
  }
  scenario("no_driver");
  NvmlLibrary none = NvmlLibrary::open(SCALEBENCH_FAKE_NVML);
  EXPECT_FALSE(none.available());
  EXPECT_THROW(none.read_telemetry(), Error);
}

TEST_F(GpuTelemetryNvml, SamplerServesRatesAfterTwoReadings) {
  scenario("nvswitch4");
  GpuTelemetry::Options o;
  o.nvml_library = SCALEBENCH_FAKE_NVML;
  o.interval = std::chrono::milliseconds(100);
  o.agent = "node-a";
  o.hostname = "host-a";
  GpuTelemetry telemetry(o);
  ASSERT_TRUE(telemetry.available()) << telemetry.unavailable_reason();
  // The constructor read once: power is there at once, NVLink rates after the next reading.
  EXPECT_EQ(lines_of(telemetry.metrics_text(), "scalebench_gpu_power_watts").size(), 4u);
  std::string text;
  for (int i = 0; i < 50; ++i) {
    text = telemetry.metrics_text();
    if (lines_of(text, "scalebench_gpu_nvlink_bytes_per_second").size() == 8) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(lines_of(text, "scalebench_gpu_nvlink_bytes_per_second").size(), 8u) << text;
  EXPECT_EQ(lines_of(text, "scalebench_agent_gpu_telemetry_available", {"agent=\"node-a\""}).size(), 1u);
  EXPECT_DOUBLE_EQ(value_of(lines_of(text, "scalebench_agent_gpu_telemetry_available")[0]), 1);
}

TEST_F(GpuTelemetryNvml, WithoutALibraryTheSamplerSaysUnavailable) {
  GpuTelemetry::Options o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.agent = "node-b";
  GpuTelemetry telemetry(o);
  EXPECT_FALSE(telemetry.available());
  EXPECT_NE(telemetry.unavailable_reason().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  const std::string text = telemetry.metrics_text();
  ASSERT_EQ(lines_of(text, "scalebench_agent_gpu_telemetry_available").size(), 1u);
  EXPECT_DOUBLE_EQ(value_of(lines_of(text, "scalebench_agent_gpu_telemetry_available")[0]), 0);
  EXPECT_EQ(text.find("scalebench_gpu_"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The agent's /metrics endpoint

TEST(MetricsEndpoint, ServesMetricsOnlyOnGetMetrics) {
  int calls = 0;
  MetricsEndpoint endpoint("127.0.0.1", 0, [&] {
    ++calls;
    return std::string("scalebench_agent_gpu_telemetry_available{agent=\"a\"} 0\n");
  });
  ASSERT_GT(endpoint.port(), 0);
  HttpClient client("http://127.0.0.1:" + std::to_string(endpoint.port()), std::chrono::seconds(5));
  HttpResponse ok = client.request("GET", "/metrics");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "scalebench_agent_gpu_telemetry_available{agent=\"a\"} 0\n");
  EXPECT_EQ(client.request("GET", "/api/v1/agents").status, 404);
  EXPECT_EQ(client.request("POST", "/metrics", "x").status, 405);
  EXPECT_EQ(calls, 1);
}

TEST(MetricsEndpoint, BadAddressOrBusyPortIsAClearError) {
  EXPECT_THROW(MetricsEndpoint("not-an-address", 0, [] { return std::string(); }), Error);
  MetricsEndpoint first("127.0.0.1", 0, [] { return std::string(); });
  try {
    MetricsEndpoint second("127.0.0.1", first.port(), [] { return std::string(); });
    FAIL() << "a second endpoint on a busy port";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(first.port())), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalebench
