#pragma once
#include <vector>

// How much a sustained load's throughput fell: pure, so that it is tested without a GPU.
namespace scalebench::burn {

// Median of the last quarter of the intervals' throughputs over the median of the first quarter
// (a single interval each with fewer than 4; 1 when there is none).
double decay(const std::vector<double>& throughputs);

// The SM clock over a sustained load, from the intervals' clocks in order: the median of the first
// quarter (where it started) and of the last quarter (where it settled), as decay takes them.
struct ClockHold {
  double start_mhz = 0, sustained_mhz = 0;
  // sustained / start: 1 when the clock held, 0.8 when it fell by a fifth.
  double ratio() const { return start_mhz > 0 ? sustained_mhz / start_mhz : 1; }
};
// Zeros when there is no clock.
ClockHold clock_hold(const std::vector<double>& clocks_mhz);

}  // namespace scalebench::burn
