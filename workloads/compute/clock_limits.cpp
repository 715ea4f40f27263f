#include "workloads/compute/clock_limits.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/log.hpp"

namespace scalebench::compute {

ClockLimitWatch::ClockLimitWatch(std::string uuid, const std::string& library)
    : nvml_(NvmlLibrary::open(library)), uuid_(std::move(uuid)) {}

std::optional<NvmlClockLimits> ClockLimitWatch::read() {
  if (!nvml_.available() || uuid_.empty()) return std::nullopt;
  try {
    return nvml_.read_clock_limits(uuid_);
  } catch (const Error& e) {
    log::info("clock limits of " + uuid_ + " not read: " + e.what());
    uuid_.clear();  // said once; the watch stays silent from here
    return std::nullopt;
  }
}

void ClockLimitWatch::start() {
  before_ = read();
  started_ = std::chrono::steady_clock::now();
}

Json ClockLimitWatch::stop() {
  if (!before_) return Json::object();
  const std::optional<NvmlClockLimits> after = read();
  const double window_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_).count();
  if (!after) return Json::object();
  return clock_limits_json(*before_, *after, window_ms);
}

Json clock_limits_json(const NvmlClockLimits& before, const NvmlClockLimits& after, double window_ms) {
  Json out = Json::object();
  auto add = [&](const char* key, const std::optional<unsigned long long>& a,
                 const std::optional<unsigned long long>& b) {
    // NVML updates its counters on its own schedule: never more than the window itself.
    if (a && b && *b >= *a) out[key] = std::min(static_cast<double>(*b - *a) / 1e6, window_ms);
  };
  add("power_capped_ms", before.power_capped_ns, after.power_capped_ns);
  add("thermal_capped_ms", before.thermal_capped_ns, after.thermal_capped_ns);
  if (!out.empty()) out["window_ms"] = window_ms;
  return out;
}

}  // namespace scalebench::compute
