#pragma once
// The benchmarks' stopwatch: milliseconds since a point of the steady clock.
#include <chrono>

namespace scalebench::load {

inline double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace scalebench::load
