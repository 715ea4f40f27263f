#pragma once
// How long this rank's GPU ran below its clocks because of its power or thermal limit while a
// point was measured: NVML's cumulative violation counters, read before and after the point, so
// that a figure taken under a power cap says so (ResNet-50 in fp16 on an H200 reaches its 700 W
// limit, and a data-parallel step then waits for whichever GPU is held down at that moment).
#include <chrono>
#include <optional>
#include <string>

#include "common/json.hpp"
#include "topology/nvml.hpp"

namespace scalebench::compute {

class ClockLimitWatch {
 public:
  // Opens NVML (`library`: another path in tests) for the GPU with this UUID ("GPU-..."). Without
  // NVML, or for a GPU it does not know, the watch stays silent: stop() returns an empty object.
  explicit ClockLimitWatch(std::string uuid, const std::string& library = "libnvidia-ml.so.1");

  void start();
  // clock_limits_json of the time since start(); an empty object when nothing could be read.
  Json stop();

 private:
  NvmlLibrary nvml_;
  std::string uuid_;
  std::optional<NvmlClockLimits> before_;
  std::chrono::steady_clock::time_point started_;

  std::optional<NvmlClockLimits> read();
};

// Two readings of one GPU `window_ms` apart as a record's `clock_limits` object:
// {"window_ms", "power_capped_ms", "thermal_capped_ms"}, each counter only where both readings
// have it (a counter that went backwards, as after a driver reload, is left out too), and never
// more than the window.
Json clock_limits_json(const NvmlClockLimits& before, const NvmlClockLimits& after, double window_ms);

}  // namespace scalebench::compute
