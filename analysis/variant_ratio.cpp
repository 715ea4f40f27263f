#include "analysis/variant_ratio.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <boost/math/distributions/students_t.hpp>

#include "analysis/stats.hpp"
#include "common/error.hpp"

namespace scalebench {

double t_quantile_975(int dof) {
  if (dof < 1) throw Error("t quantile needs at least one degree of freedom");
  const boost::math::students_t_distribution<double> t(dof);
  return boost::math::quantile(boost::math::complement(t, 0.025));
}

RatioCi paired_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || a.size() != b.size()) throw Error("paired ratio needs two equally long, non-empty lists");
  std::vector<double> logs;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] > 0) || !(b[i] > 0)) throw Error("paired ratio needs positive values");
    logs.push_back(std::log(a[i] / b[i]));
  }
  const double m = mean(logs);
  if (logs.size() < 2) return {std::exp(m), std::exp(m), std::exp(m)};
  const double half =
      t_quantile_975(static_cast<int>(logs.size()) - 1) * stddev(logs) / std::sqrt(static_cast<double>(logs.size()));
  return {std::exp(m), std::exp(m - half), std::exp(m + half)};
}

namespace {
// What makes two records the same measurement apart from their variant and round. The workload
// is not part of it: a variant may run another program on the same points (nccl-tests beside
// the collective workload), and that is the comparison asked for.
Json match_key(const Json& r, const std::vector<std::string>& ignore) {
  Json params = r.value("params", Json::object());
  for (const auto& p : ignore) params.erase(p);
  Json key{{"experiment", r.value("experiment", "")},
           {"params", params},
           {"gpus", r.contains("placement") ? r["placement"].value("gpus", 0) : 0},
           {"ranks", r.contains("placement") ? r["placement"].value("ranks", 0) : 0},
           {"metric", r.value("metric", "")}};
  if (r.contains("point")) key["point"] = r["point"].value("size", Json());
  return key;
}

struct Side {
  std::map<int, const Json*> by_round;  // round -> record
};
}  // namespace

std::vector<VariantRatio> variant_ratios(const Json& records, const std::string& numerator,
                                         const std::string& denominator, const std::string& metric,
                                         const std::vector<std::string>& ignore_params) {
  std::map<std::string, std::pair<Side, Side>> groups;  // key (dumped) -> numerator, denominator
  std::vector<std::string> order;                       // first-seen order of keys
  for (const auto& r : records) {
    if (r.value("status", "") != "ok" || !r.contains("value") || !r["value"].is_number()) continue;
    if (!metric.empty() && r.value("metric", "") != metric) continue;
    const std::string v = r.value("variant", "");
    if (v != numerator && v != denominator) continue;
    const std::string key = match_key(r, ignore_params).dump();
    if (!groups.count(key)) order.push_back(key);
    auto& g = groups[key];
    (v == numerator ? g.first : g.second).by_round[r.value("round", 1)] = &r;
  }
  std::vector<VariantRatio> out;
  for (const auto& key : order) {
    const auto& [a, b] = groups[key];
    std::vector<double> va, vb;
    for (const auto& [round, rec] : a.by_round)
      if (auto it = b.by_round.find(round); it != b.by_round.end()) {
        va.push_back((*rec)["value"].get<double>());
        vb.push_back((*it->second)["value"].get<double>());
      }
    if (va.empty()) continue;
    VariantRatio vr;
    vr.key = Json::parse(key);
    const Json& first = *a.by_round.begin()->second;
    vr.metric = first.value("metric", "");
    vr.unit = first.value("unit", "");
    vr.workload = first.value("workload", "");
    vr.numerator = median(va);
    vr.denominator = median(vb);
    vr.paired_by = "rounds";
    if (va.size() == 1) {
      // One round: pair the two runs' samples in the order they were taken.
      const Json& ra = first;
      const Json& rb = *b.by_round.at(a.by_round.begin()->first);
      auto samples = [&](const Json& r) {
        std::vector<double> s;
        if (r.contains("stats") && r["stats"].contains("samples"))
          for (const auto& x : r["stats"]["samples"]) {
            // A NaN sample is stored as null: the record, not this ratio, is what is wrong.
            if (!x.is_number())
              throw Error("variant ratio: experiment " + r.value("experiment", std::string("?")) + ", variant " +
                          r.value("variant", std::string("?")) + ", metric " + r.value("metric", std::string("?")) +
                          ": stats.samples[" + std::to_string(s.size()) + "] is " + x.dump() + ", not a number");
            s.push_back(x.get<double>());
          }
        return s;
      };
      std::vector<double> sa = samples(ra), sb = samples(rb);
      const std::size_t n = std::min(sa.size(), sb.size());
      if (n >= 2) {
        va.assign(sa.begin(), sa.begin() + static_cast<std::ptrdiff_t>(n));
        vb.assign(sb.begin(), sb.begin() + static_cast<std::ptrdiff_t>(n));
        vr.paired_by = "samples";
      }
    }
    bool positive = true;
    for (std::size_t i = 0; i < va.size(); ++i) positive = positive && va[i] > 0 && vb[i] > 0;
    if (!positive) continue;
    const RatioCi ci = paired_ratio(va, vb);
    vr.ratio = ci.ratio;
    vr.ci_low = ci.low;
    vr.ci_high = ci.high;
    vr.pairs = static_cast<int>(va.size());
    out.push_back(std::move(vr));
  }
  return out;
}

}  // namespace scalebench
