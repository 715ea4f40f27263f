#pragma once
#include <vector>

// How much a sustained load's throughput fell: pure, so that it is tested without a GPU.
namespace scalebench::burn {

// Median of the last quarter of the intervals' throughputs over the median of the first quarter
// (a single interval each with fewer than 4; 1 when there is none).
double decay(const std::vector<double>& throughputs);

}  // namespace scalebench::burn
