#include "workloads/gemm/gemm_report.hpp"

#include <cstdio>

namespace scalebench::gemm {

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

std::string table_header() {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%-8s %-20s %-2s %-6s %5s %10s %-7s %6s %10s %-9s %s", "precis", "set", "op",
                "m x n x k", "gpu", "median", "unit", "%peak", "time_us", "check", "algorithm");
  return buf;
}

std::string TableFormatter::format_row(const Json& r) {
  const Json& pt = r.value("point", Json::object());
  const std::string metric = r.value("metric", "");
  char dims[64];
  std::snprintf(dims, sizeof dims, "%lldx%lldx%lld", pt.value("m", 0LL), pt.value("n", 0LL), pt.value("k", 0LL));
  char head[128];
  std::snprintf(head, sizeof head, "%-8s %-20s %-2s %-18s", pt.value("precision", "").c_str(),
                pt.value("set", "").c_str(), pt.value("op", "").c_str(), dims);
  char buf[400];
  if (metric == "run" && !r.contains("point"))  // the run as a whole (no GPU, say)
    return "# " + r.value("status", "") + ": " + r.value("reason", "");
  if (metric == "run") {
    std::snprintf(buf, sizeof buf, "%s %s: %s", head, r.value("status", "").c_str(), r.value("reason", "").c_str());
    return buf;
  }
  if (metric == "time") {
    time_us_ = r.value("value", 0.0);
    return "";
  }
  const Json& corr = r.value("correctness", Json::object());
  std::string check = !corr.value("checked", false) ? "-"
                      : corr.value("passed", false) ? "ok"
                                                    : "WRONG " + std::to_string(corr.value("wrong", 0LL));
  std::string pct = r.contains("pct_of_peak") ? std::to_string(static_cast<int>(r["pct_of_peak"].get<double>() + 0.5))
                                              : std::string("-");
  if (metric == "throughput") {
    const Json& algo = r.value("details", Json::object()).value("algorithm", Json::object());
    char a[96] = "-";
    if (!algo.empty())
      std::snprintf(a, sizeof a, "%s #%d/%d tile %d stages %d splitk %d", algo.value("selection", "").c_str(),
                    algo.value("heuristic_rank", 0), algo.value("candidates", 0), algo.value("tile", 0),
                    algo.value("stages", 0), algo.value("split_k", 0));
    std::snprintf(buf, sizeof buf, "%s %5d %10.2f %-7s %6s %10.1f %-9s %s", head, pt.value("gpu", 0),
                  r.value("value", 0.0), r.value("unit", "").c_str(), pct.c_str(), time_us_, check.c_str(), a);
    if (r.value("status", "ok") != "ok") return std::string(buf) + "  failed: " + r.value("reason", "");
    return buf;
  }
  if (metric == "throughput_total") {
    total_ = r.value("value", 0.0);
    total_unit_ = r.value("unit", "");
    std::snprintf(buf, sizeof buf, "%s %5s %10.2f %-7s %6s %10s %-9s", head, "all", total_, total_unit_.c_str(),
                  pct.c_str(), "", check.c_str());
    return buf;
  }
  if (metric == "gpu_spread") {
    std::snprintf(buf, sizeof buf, "%s %5s %9.1f%% spread between GPUs (slowest GPU %d)", head, "all",
                  r.value("value", 0.0), r.value("details", Json::object()).value("slowest_gpu", 0));
    return buf;
  }
  return "";
}

}  // namespace scalebench::gemm
