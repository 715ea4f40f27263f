#include "catalog/timing_params.hpp"

#include <utility>

namespace scalebench::timing {

ParamDef warmup(int count, std::string help) { return {"warmup", ParamType::kInt, count, {}, 0, std::move(help)}; }

ParamDef iters(const Json& count, std::string help) {
  return {"iters", count.is_string() ? ParamType::kIntOrAuto : ParamType::kInt, count, {}, 1, std::move(help)};
}

ParamDef time_cap(double seconds, std::string help) {
  return {"time_cap", ParamType::kNumber, seconds, {}, 0, std::move(help)};
}

ParamDef check(std::string help) { return {"check", ParamType::kBool, true, {}, {}, std::move(help)}; }

Values read(const Json& params, Values defaults) {
  Values v = defaults;
  v.warmup = params.value("warmup", v.warmup);
  if (const auto it = params.find("iters"); it != params.end())
    v.iters = it->is_number_integer() ? it->get<int>() : 0;  // "auto": 0
  v.time_cap = params.value("time_cap", v.time_cap);
  v.check = params.value("check", v.check);
  return v;
}

}  // namespace scalebench::timing
