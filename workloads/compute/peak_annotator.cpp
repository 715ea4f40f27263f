#include "workloads/compute/peak_annotator.hpp"

namespace scalebench::compute {

namespace {
Json without_gpu(const Json& point) {
  Json p = point;
  p.erase("gpu");
  p.erase("gpus");
  return p;
}

void set_pct(Json& r) {
  const double peak = r["peak"].value("value", 0.0);
  if (peak > 0 && r["value"].is_number()) r["pct_of_peak"] = 100.0 * r["value"].get<double>() / peak;
}
}  // namespace

void PeakAnnotator::finish(Json& r) {
  if (!r.contains("point") || !r["point"].contains("gpu")) return;
  const Json& gpu = r["point"]["gpu"];
  const Json point = without_gpu(r["point"]);
  if (point != point_) {
    point_ = point;
    sum_ = 0;
  }
  if (gpu.is_number_integer()) {
    if (!r.contains("details") || !r["details"].contains("peak")) return;
    Json peak = r["details"]["peak"];
    r["details"].erase("peak");
    if (r.value("metric", "") != "throughput") return;
    r["peak"] = peak;
    set_pct(r);
    sum_ += peak.value("value", 0.0);
    unit_ = peak.value("unit", "");
  } else if (r.value("metric", "") == "throughput_total" && sum_ > 0) {
    r["peak"] = Json{{"value", sum_}, {"unit", unit_}, {"basis", "sum of the GPUs' peaks"}};
    set_pct(r);
  }
}

}  // namespace scalebench::compute
