#include "record/point_record.hpp"

#include "analysis/stats.hpp"
#include "record/record.hpp"

namespace scalebench {

Json Correctness::to_json() const {
  if (!checked) return Json{{"checked", false}, {"passed", nullptr}, {"wrong", nullptr}};
  Json j{{"checked", true}, {"passed", wrong == 0}, {"wrong", wrong}};
  if (elements) j["elements"] = *elements;
  return j;
}

Json stats_json(const std::vector<double>& samples, const std::string& stop) {
  const Summary s = summarize(samples);
  return Json{{"n", s.n},     {"median", s.median}, {"mean", s.mean},     {"stddev", s.stddev}, {"cv", s.cv},
              {"min", s.min}, {"max", s.max},       {"samples", samples}, {"stop", stop}};
}

Json PointRecord::to_json(const Json& context) const {
  Json r = context;
  r["point"] = point;
  r["metric"] = metric;
  r["unit"] = unit;
  r["better"] = better;
  if (samples.empty()) {
    r["value"] = nullptr;
  } else {
    Json st = stats_json(samples, stop);
    r["value"] = st["median"];
    r["stats"] = std::move(st);
  }
  r["correctness"] = correctness.to_json();
  r["status"] = status;
  r["reason"] = reason;
  r["time"] = utc_timestamp();
  return r;
}

}  // namespace scalebench
