#pragma once
// The parameters that steer how a point is timed: warmup, iters, time_cap and check. Every
// workload that times repeated work declares them from here and reads them through `read`, so
// each has one name, one type and one meaning in every workload; a workload gives only its
// default and, in the help, what it repeats.

#include <string>

#include "catalog/registry.hpp"
#include "common/json.hpp"

namespace scalebench::timing {

// Untimed repetitions before a point's samples.
ParamDef warmup(int count, std::string help);
// Repetitions in one timed sample. A default of "auto" offers the automatic count (enough for a
// sample of a few milliseconds); an integer default declares a plain count.
ParamDef iters(const Json& count, std::string help);
// Seconds of timed samples after which a point stops sampling (it takes at least 3).
ParamDef time_cap(double seconds, std::string help);
// Whether the output is checked against a reference after timing.
ParamDef check(std::string help);

// The four as a workload reads them; a parameter that is absent keeps the value given here.
struct Values {
  int warmup = 0;
  int iters = 0;  // 0: "auto"
  double time_cap = 1.0;
  bool check = true;
};
Values read(const Json& params, Values defaults = {});

}  // namespace scalebench::timing
