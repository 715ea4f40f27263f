#include "agent/gpu_telemetry.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <sstream>

#include "common/log.hpp"

namespace scalebench {

namespace {

constexpr double kKiB = 1024.0;

// Growth per second of a cumulative KiB counter, in bytes per second.
std::optional<double> counter_rate(const std::optional<unsigned long long>& now,
                                   const std::optional<unsigned long long>& before, double seconds) {
  if (!now || !before || seconds <= 0 || *now < *before) return std::nullopt;
  return static_cast<double>(*now - *before) * kKiB / seconds;
}

}  // namespace

GpuTelemetrySample to_sample(const NvmlGpuReading& now, const NvmlGpuReading* previous) {
  GpuTelemetrySample s;
  s.index = now.index;
  s.uuid = now.uuid;
  s.model = now.name;
  s.pci_bus_id = now.pci_bus_id;
  if (now.power_mw) s.power_watts = *now.power_mw / 1000.0;
  if (now.sm_clock_mhz) s.sm_clock_hertz = *now.sm_clock_mhz * 1e6;
  if (now.gpu_utilization_pct) s.utilization_ratio = *now.gpu_utilization_pct / 100.0;
  if (now.memory_utilization_pct) s.memory_utilization_ratio = *now.memory_utilization_pct / 100.0;
  if (now.memory_used_bytes) s.memory_used_bytes = static_cast<double>(*now.memory_used_bytes);
  if (now.memory_total_bytes) s.memory_total_bytes = static_cast<double>(*now.memory_total_bytes);
  if (now.pcie_tx_kBps) s.pcie_transmit_bytes_per_second = *now.pcie_tx_kBps * kKiB;
  if (now.pcie_rx_kBps) s.pcie_receive_bytes_per_second = *now.pcie_rx_kBps * kKiB;
  if (previous && previous->uuid == now.uuid && previous->nvlink_timestamp_us > 0 && now.nvlink_timestamp_us > 0) {
    const double seconds = static_cast<double>(now.nvlink_timestamp_us - previous->nvlink_timestamp_us) / 1e6;
    s.nvlink_transmit_bytes_per_second = counter_rate(now.nvlink_tx_kib, previous->nvlink_tx_kib, seconds);
    s.nvlink_receive_bytes_per_second = counter_rate(now.nvlink_rx_kib, previous->nvlink_rx_kib, seconds);
  }
  if (previous && previous->uuid == now.uuid && previous->capped_timestamp_us > 0 &&
      now.capped_timestamp_us > previous->capped_timestamp_us) {
    const double ns = static_cast<double>(now.capped_timestamp_us - previous->capped_timestamp_us) * 1e3;
    auto share = [&](const std::optional<unsigned long long>& a, const std::optional<unsigned long long>& b) {
      return a && b && *a >= *b ? std::optional<double>(std::min(1.0, static_cast<double>(*a - *b) / ns))
                                : std::nullopt;
    };
    s.clocks_power_limited_ratio = share(now.power_capped_ns, previous->power_capped_ns);
    s.clocks_thermal_limited_ratio = share(now.thermal_capped_ns, previous->thermal_capped_ns);
  }
  return s;
}

std::string telemetry_metrics_text(const std::vector<GpuTelemetrySample>& gpus, const TelemetryLabels& labels,
                                   bool available) {
  using prometheus::ClientMetric;
  using prometheus::MetricFamily;
  const std::vector<ClientMetric::Label> agent{{"Hostname", labels.hostname}, {"agent", labels.agent}};
  auto gauge = [](std::vector<ClientMetric::Label> l, double v) {
    ClientMetric m;
    m.label = std::move(l);
    m.gauge.value = v;
    return m;
  };

  std::vector<MetricFamily> families;
  MetricFamily avail{"scalebench_agent_gpu_telemetry_available",
                     "1 when the agent's last NVML reading worked, 0 without NVML (no driver or no GPU)",
                     prometheus::MetricType::Gauge,
                     {}};
  avail.metric.push_back(gauge(agent, available ? 1 : 0));
  families.push_back(std::move(avail));

  // One family per quantity; a GPU whose value is empty adds no series to it.
  using Field = std::optional<double> GpuTelemetrySample::*;
  struct Quantity {
    const char* name;
    const char* help;
    Field field;
    const char* label;  // nullptr: no label of its own; else "direction" or "reason"
    const char* value;
  };
  const Quantity quantities[] = {
      {"scalebench_gpu_power_watts", "Power draw of the GPU and its memory (nvmlDeviceGetPowerUsage)",
       &GpuTelemetrySample::power_watts, nullptr, nullptr},
      {"scalebench_gpu_sm_clock_hertz", "Current SM clock (nvmlDeviceGetClockInfo, NVML_CLOCK_SM)",
       &GpuTelemetrySample::sm_clock_hertz, nullptr, nullptr},
      {"scalebench_gpu_utilization_ratio",
       "Share of the last sample period in which a kernel ran (nvmlDeviceGetUtilizationRates)",
       &GpuTelemetrySample::utilization_ratio, nullptr, nullptr},
      {"scalebench_gpu_memory_utilization_ratio",
       "Share of the last sample period in which device memory was read or written",
       &GpuTelemetrySample::memory_utilization_ratio, nullptr, nullptr},
      {"scalebench_gpu_memory_used_bytes", "Device memory in use (nvmlDeviceGetMemoryInfo)",
       &GpuTelemetrySample::memory_used_bytes, nullptr, nullptr},
      {"scalebench_gpu_memory_total_bytes", "Device memory size (nvmlDeviceGetMemoryInfo)",
       &GpuTelemetrySample::memory_total_bytes, nullptr, nullptr},
      {"scalebench_gpu_pcie_bytes_per_second", "PCIe traffic over NVML's 20 ms window (nvmlDeviceGetPcieThroughput)",
       &GpuTelemetrySample::pcie_transmit_bytes_per_second, "direction", "tx"},
      {"scalebench_gpu_pcie_bytes_per_second", "", &GpuTelemetrySample::pcie_receive_bytes_per_second, "direction",
       "rx"},
      {"scalebench_gpu_nvlink_bytes_per_second",
       "NVLink payload over all links, averaged over the sampling interval (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_*)",
       &GpuTelemetrySample::nvlink_transmit_bytes_per_second, "direction", "tx"},
      {"scalebench_gpu_nvlink_bytes_per_second", "", &GpuTelemetrySample::nvlink_receive_bytes_per_second, "direction",
       "rx"},
      {"scalebench_gpu_clocks_limited_ratio",
       "Share of the sampling interval the clocks were held below the application clocks by the power or the "
       "thermal limit (nvmlDeviceGetViolationStatus)",
       &GpuTelemetrySample::clocks_power_limited_ratio, "reason", "power"},
      {"scalebench_gpu_clocks_limited_ratio", "", &GpuTelemetrySample::clocks_thermal_limited_ratio, "reason",
       "thermal"},
  };
  for (const Quantity& q : quantities) {
    if (families.back().name != q.name) families.push_back({q.name, q.help, prometheus::MetricType::Gauge, {}});
    MetricFamily& f = families.back();
    for (const GpuTelemetrySample& g : gpus) {
      const std::optional<double>& v = g.*q.field;
      if (!v) continue;
      // dcgm-exporter's label names (and its order: gpu, UUID, pci_bus_id, modelName, Hostname).
      std::vector<ClientMetric::Label> l{{"gpu", std::to_string(g.index)},
                                         {"UUID", g.uuid},
                                         {"pci_bus_id", g.pci_bus_id},
                                         {"modelName", g.model},
                                         {"Hostname", labels.hostname}};
      if (q.label) l.push_back({q.label, q.value});
      f.metric.push_back(gauge(std::move(l), *v));
    }
  }
  std::erase_if(families, [](const MetricFamily& f) { return f.metric.empty(); });
  return prometheus::TextSerializer().Serialize(families);
}

GpuTelemetry::GpuTelemetry(Options options)
    : options_(std::move(options)), nvml_(NvmlLibrary::open(options_.nvml_library)) {
  labels_.agent = options_.agent;
  labels_.hostname = options_.hostname;
  if (!nvml_.available()) {
    log::info("GPU telemetry unavailable (" + nvml_.unavailable_reason() + "); /metrics has no GPU series");
    return;
  }
  sample_once();  // the first scrape already sees the GPUs
  thread_ = std::thread([this] { loop(); });
}

GpuTelemetry::~GpuTelemetry() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GpuTelemetry::sample_once() {
  std::vector<NvmlGpuReading> readings;
  std::string error;
  try {
    readings = nvml_.read_telemetry();
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::vector<GpuTelemetrySample> samples;
  {
    std::lock_guard lock(mutex_);
    for (const NvmlGpuReading& r : readings) {
      const NvmlGpuReading* previous = nullptr;
      for (const NvmlGpuReading& p : readings_)
        if (p.uuid == r.uuid) previous = &p;
      samples.push_back(to_sample(r, previous));
    }
    readings_ = std::move(readings);
    samples_ = std::move(samples);
    last_ok_ = error.empty();
    if (error.empty() || error == last_error_) {
      if (error.empty() && !last_error_.empty()) log::info("GPU telemetry readable again");
      last_error_ = error;
      return;
    }
    last_error_ = error;
  }
  log::warn("GPU telemetry: " + error);
}

void GpuTelemetry::loop() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, options_.interval, [this] { return stop_; })) {
    lock.unlock();
    sample_once();
    lock.lock();
  }
}

std::string GpuTelemetry::metrics_text() const {
  std::lock_guard lock(mutex_);
  return telemetry_metrics_text(samples_, labels_, nvml_.available() && last_ok_);
}

}  // namespace scalebench
