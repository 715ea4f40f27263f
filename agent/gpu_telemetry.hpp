#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "topology/nvml.hpp"

namespace scalebench {

// One GPU's telemetry in Prometheus base units (watts, hertz, ratios 0..1, bytes, bytes per
// second). Empty where NVML could not read the quantity.
struct GpuTelemetrySample {
  int index = 0;
  std::string uuid, model, pci_bus_id;
  std::optional<double> power_watts, sm_clock_hertz, utilization_ratio, memory_utilization_ratio;
  std::optional<double> memory_used_bytes, memory_total_bytes;
  std::optional<double> pcie_transmit_bytes_per_second, pcie_receive_bytes_per_second;
  std::optional<double> nvlink_transmit_bytes_per_second, nvlink_receive_bytes_per_second;
  // Share of the time since the previous reading that the clocks were held down by the power
  // or the thermal limit (NVML's violation counters), 0..1.
  std::optional<double> clocks_power_limited_ratio, clocks_thermal_limited_ratio;
};

// NVML's units to base units: mW -> W, MHz -> Hz, % -> ratio, PCIe KB/s (NVML's KB are KiB) ->
// B/s. NVLink rates come from the growth of NVML's cumulative KiB counters since `previous` (the
// same GPU's last reading, by uuid) over the time between their timestamps; they stay empty
// without a previous reading, when no time passed, or when a counter went back (a driver reset).
// The clock-limit ratios come the same way from the violation counters' growth over the time
// between their timestamps.
GpuTelemetrySample to_sample(const NvmlGpuReading& now, const NvmlGpuReading* previous);

// Who reads the GPUs: the agent's name and the node's hostname. No run labels: a run is joined
// on through scalebench_run_info (agent/active_runs.hpp), so a GPU's series stay the same series
// from run to run.
struct TelemetryLabels {
  std::string agent, hostname;
};

// The agent's GPU telemetry in the Prometheus text format:
// scalebench_agent_gpu_telemetry_available{agent, Hostname} (1 when the last NVML reading
// worked) and one series per GPU and quantity (docs/metrics.md lists them), labelled as
// dcgm-exporter labels its series, so that the two join without label_replace: gpu (NVML
// index), UUID, pci_bus_id, modelName and Hostname.
std::string telemetry_metrics_text(const std::vector<GpuTelemetrySample>& gpus, const TelemetryLabels& labels,
                                   bool available);

// Reads every GPU's telemetry through NVML on a thread of its own, every `interval`, and keeps the
// latest. Without NVML (no driver, no GPU) there is no thread and no GPU series, and
// scalebench_agent_gpu_telemetry_available is 0. The destructor stops and joins the thread.
class GpuTelemetry {
 public:
  struct Options {
    std::string nvml_library = "libnvidia-ml.so.1";
    std::chrono::milliseconds interval{1000};
    std::string agent, hostname;
  };
  explicit GpuTelemetry(Options options);
  ~GpuTelemetry();
  GpuTelemetry(const GpuTelemetry&) = delete;
  GpuTelemetry& operator=(const GpuTelemetry&) = delete;

  bool available() const { return nvml_.available(); }
  const std::string& unavailable_reason() const { return nvml_.unavailable_reason(); }
  std::string metrics_text() const;

 private:
  void sample_once();
  void loop();

  const Options options_;
  NvmlLibrary nvml_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool last_ok_ = false;
  std::string last_error_;  // logged once per distinct error
  std::vector<NvmlGpuReading> readings_;
  std::vector<GpuTelemetrySample> samples_;
  TelemetryLabels labels_;
  std::thread thread_;
};

}  // namespace scalebench
