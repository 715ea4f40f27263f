#include "workloads/compute/compute_records.hpp"

#include <algorithm>
#include <cstdio>

#include "analysis/stats.hpp"
#include "record/point_record.hpp"
#include "record/record.hpp"

namespace scalebench::compute {

Json RankOutcome::to_json() const {
  return Json{{"status", status}, {"reason", reason},   {"seconds", seconds},
              {"wrong", wrong},   {"checked", checked}, {"details", details}};
}

RankOutcome RankOutcome::from_json(const Json& j) {
  RankOutcome o;
  o.status = j.at("status").get<std::string>();
  o.reason = j.at("reason").get<std::string>();
  o.seconds = j.at("seconds").get<std::vector<double>>();
  o.wrong = j.at("wrong").get<long long>();
  o.checked = j.at("checked").get<long long>();
  o.details = j.at("details");
  return o;
}

namespace {
Correctness correctness(long long wrong, long long checked) {
  return wrong < 0 ? Correctness::unchecked() : Correctness::counted(wrong, checked);
}

std::vector<double> throughputs(const Throughput& tp, const std::vector<double>& seconds) {
  std::vector<double> out;
  for (double s : seconds) out.push_back(s > 0 ? tp.work / s * tp.scale : 0);
  return out;
}

PointRecord metric_record(const Json& point, const char* metric, const std::string& unit, const char* better,
                          std::vector<double> values) {
  return PointRecord{point, metric, unit, better, std::move(values), "repetitions", {}, "ok", ""};
}

void set_outcome(PointRecord& r, long long wrong, long long checked, const std::string& status,
                 const std::string& reason) {
  r.correctness = correctness(wrong, checked);
  r.status = status;
  r.reason = reason;
}

std::string wrong_reason(long long wrong, long long checked) {
  return std::to_string(wrong) + " of " + std::to_string(checked) + " checked output elements off the reference";
}
}  // namespace

std::vector<Json> point_records(const Json& context, const Json& point, const Throughput& tp,
                                const std::vector<RankOutcome>& ranks) {
  // A rank that could not measure: the point is one status record (skipped wins over failed only
  // when every rank skipped; one rank failing fails the point).
  for (const RankOutcome& o : ranks)
    if (o.status != "ok" && o.seconds.empty()) {
      const bool all_skipped =
          std::all_of(ranks.begin(), ranks.end(), [](const RankOutcome& x) { return x.status == "skipped"; });
      const RankOutcome& first =
          *std::find_if(ranks.begin(), ranks.end(), [](const RankOutcome& x) { return x.status != "ok"; });
      Json r = status_record(context, all_skipped ? "skipped" : "failed", first.reason);
      r["point"] = point;
      return {r};
    }

  std::vector<Json> out;
  std::size_t common_samples = ranks.empty() ? 0 : ranks[0].seconds.size();
  long long wrong_total = -1, checked_total = 0;
  std::string first_problem;
  std::vector<double> medians;
  for (std::size_t g = 0; g < ranks.size(); ++g) {
    const RankOutcome& o = ranks[g];
    common_samples = std::min(common_samples, o.seconds.size());
    if (o.wrong >= 0) wrong_total = std::max(wrong_total, 0LL) + o.wrong;
    checked_total += o.checked;
    std::string status = o.status, reason = o.reason;
    if (status == "ok" && o.wrong > 0) {
      status = "failed";
      reason = wrong_reason(o.wrong, o.checked);
    }
    if (status != "ok" && first_problem.empty()) first_problem = "GPU " + std::to_string(g) + ": " + reason;

    Json gpu_point = point;
    gpu_point["gpu"] = static_cast<int>(g);
    std::vector<double> us;
    for (double s : o.seconds) us.push_back(s * 1e6);
    const std::vector<double> tput = throughputs(tp, o.seconds);
    medians.push_back(median(tput));
    for (PointRecord p : {metric_record(gpu_point, "time", "us", "lower", us),
                          metric_record(gpu_point, "throughput", tp.unit, "higher", tput)}) {
      set_outcome(p, o.wrong, o.checked, status, reason);
      Json r = p.to_json(context);
      if (!o.details.empty()) r["details"] = o.details;
      out.push_back(std::move(r));
    }
  }
  if (ranks.size() < 2) return out;

  // All GPUs at once: sample k of the total is the sum of every GPU's sample k (they ran it
  // together; each point starts on every rank at the same moment).
  std::vector<double> total(common_samples, 0.0);
  for (const RankOutcome& o : ranks) {
    const std::vector<double> tput = throughputs(tp, o.seconds);
    for (std::size_t k = 0; k < common_samples; ++k) total[k] += tput[k];
  }
  const Summary per_gpu = summarize(medians);
  const double spread = per_gpu.median > 0 ? 100.0 * (per_gpu.max - per_gpu.min) / per_gpu.median : 0.0;
  const auto slowest = std::min_element(medians.begin(), medians.end()) - medians.begin();
  Json all_point = point;
  all_point["gpu"] = "all";
  all_point["gpus"] = static_cast<int>(ranks.size());
  const std::string status = first_problem.empty() ? "ok" : "failed";
  PointRecord t = metric_record(all_point, "throughput_total", tp.unit, "higher", total);
  set_outcome(t, wrong_total, checked_total, status, first_problem);
  out.push_back(t.to_json(context));
  PointRecord s = metric_record(all_point, "gpu_spread", "%", "lower", {spread});
  s.stop = "gpus";
  set_outcome(s, wrong_total, checked_total, status, first_problem);
  Json spread_record = s.to_json(context);
  spread_record["details"] = Json{{"per_gpu_median", medians}, {"slowest_gpu", slowest}};
  out.push_back(std::move(spread_record));
  return out;
}

std::string table_row(const Json& point, const Throughput& tp, const std::vector<RankOutcome>& ranks) {
  std::string label;
  for (const auto& [k, v] : point.items())
    label += (label.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  for (const RankOutcome& o : ranks)
    if (o.status != "ok" && o.seconds.empty()) return label + "  " + o.status + ": " + o.reason;
  std::vector<double> medians;
  long long wrong = 0;
  for (const RankOutcome& o : ranks) {
    medians.push_back(median(throughputs(tp, o.seconds)));
    wrong += std::max(o.wrong, 0LL);
  }
  double total = 0;
  for (double m : medians) total += m;
  const Summary s = summarize(medians);
  char buf[160];
  std::snprintf(buf, sizeof buf, "  per-GPU %.4g %s (min %.4g, max %.4g)  total %.4g %s  spread %.1f%%  wrong %lld",
                s.median, tp.unit.c_str(), s.min, s.max, total, tp.unit.c_str(),
                s.median > 0 ? 100.0 * (s.max - s.min) / s.median : 0.0, wrong);
  // The most any GPU was held down by its power or thermal limit (details.clock_limits).
  double capped = 0;
  for (const RankOutcome& o : ranks) {
    const Json c = o.details.value("clock_limits", Json::object());
    const double window = c.value("window_ms", 0.0);
    if (window > 0)
      capped = std::max(capped, std::max(c.value("power_capped_ms", 0.0), c.value("thermal_capped_ms", 0.0)) / window);
  }
  std::string limits;
  if (capped >= 0.01) {
    char cap[64];
    std::snprintf(cap, sizeof cap, "  clocks limited %.0f%% of the point", 100 * capped);
    limits = cap;
  }
  return label + buf + limits;
}

}  // namespace scalebench::compute
