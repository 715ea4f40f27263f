#include "workloads/conv/conv_report.hpp"

#include <cstdio>

#include "workloads/conv/conv.hpp"

namespace scalebench::conv {

namespace {
std::string point_key(const Json& point) {
  Json p = point;
  p.erase("gpu");
  p.erase("gpus");
  return p.dump();
}

Json peak_json(double tflops, const std::string& unit) {
  return Json{{"value", tflops},
              {"unit", unit},
              {"basis", "dense: SMs x maximum SM clock x per-SM rate of the precision's path"}};
}
}  // namespace

void PeakAnnotator::annotate(Json& r) {
  const std::string metric = r.value("metric", "");
  if (metric != "throughput" && metric != "throughput_total") return;
  if (!r.contains("point") || !r["value"].is_number()) return;
  const std::string key = point_key(r["point"]);
  double peak = 0;
  if (metric == "throughput") {
    if (key != point_key_) {
      point_key_ = key;
      peak_sum_ = 0;
    }
    peak = r.value("details", Json::object()).value("peak_tflops", 0.0);
    peak_sum_ += peak;
  } else if (key == point_key_) {
    peak = peak_sum_;
  }
  if (peak <= 0) return;
  r["peak"] = peak_json(peak, r.value("unit", std::string("TFLOP/s")));  // int8's are TOP/s
  r["pct_of_peak"] = 100.0 * r["value"].get<double>() / peak;
}

std::string table_header() {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-36s %-10s %-5s %-5s %4s %9s %7s %10s  %-22s %-9s %9s  %s", "shape", "pass", "prec",
                "lay", "gpu", "TFLOP/s", "%peak", "time_us", "algo", "math", "ws_MiB", "check");
  return buf;
}

std::string table_line(const Json& r) {
  const std::string metric = r.value("metric", "");
  const Json point = r.value("point", Json::object());
  auto label = [&] {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%-36s %-10s %-5s %-5s", point.value("shape", "").c_str(),
                  point.value("pass", "").c_str(), point.value("precision", "").c_str(),
                  point.value("layout", "").c_str());
    return std::string(buf);
  };
  if (metric == "run") {
    const std::string what = r.value("status", "") + ": " + r.value("reason", "");
    return point.empty() ? "# " + what : label() + "  " + what;  // the whole run, or one point
  }
  if (metric == "throughput") {
    const Json d = r.value("details", Json::object());
    const double tflops = r.value("value", 0.0);
    double us = 0;
    try {
      us = tflops > 0 ? conv_flops(ConvPoint::from_json(point).shape) / (tflops * 1e12) * 1e6 : 0;
    } catch (const std::exception&) {
    }
    const Json c = r.value("correctness", Json::object());
    std::string check = "-";
    if (c.value("checked", false))
      check = c.value("passed", false) ? "ok (" + std::to_string(c.value("elements", 0)) + ")"
                                       : "WRONG " + c["wrong"].dump() + " of " + std::to_string(c.value("elements", 0));
    char buf[320];
    std::snprintf(buf, sizeof buf, "%s %4s %9.2f %7.1f %10.1f  %-22s %-9s %9.1f  %s", label().c_str(),
                  point["gpu"].dump().c_str(), tflops, r.value("pct_of_peak", 0.0), us, d.value("algo", "").c_str(),
                  d.value("math_type", "").c_str(), d.value("workspace_bytes", 0.0) / (1024.0 * 1024.0), check.c_str());
    // Quantized points: their epilogue (fused into the time), and TOP/s for int8 in the TFLOP/s column.
    if (point.contains("epilogue")) return std::string(buf) + "  epilogue " + point["epilogue"].get<std::string>();
    return buf;
  }
  if (metric == "throughput_total") {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  all %d GPUs: total %.2f TFLOP/s (%.1f%% of peak)", point.value("gpus", 0),
                  r.value("value", 0.0), r.value("pct_of_peak", 0.0));
    return label() + buf;
  }
  if (metric == "gpu_spread") {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  spread between GPUs %.1f%% (slowest GPU %d)", r.value("value", 0.0),
                  r.value("details", Json::object()).value("slowest_gpu", 0));
    return label() + buf;
  }
  return "";
}

}  // namespace scalebench::conv
