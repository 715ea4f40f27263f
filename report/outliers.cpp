#include "report/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/stats.hpp"
#include "report/compare.hpp"

namespace scalebench {

namespace {
// The one entry of a list of host names, "" when it has several (or none).
std::string only_entry(const Json& list) {
  if (!list.is_array() || list.size() != 1 || !list[0].is_string()) return "";
  return list[0].get<std::string>();
}
}  // namespace

std::string single_host(const Json& r) {
  const Json pl = r.value("placement", Json::object());
  if (pl.is_object()) {
    if (pl.contains("nodes") && pl["nodes"].is_number() && pl["nodes"].get<double>() > 1) return "";
    if (pl.contains("hosts")) return only_entry(pl["hosts"]);
  }
  const Json env = r.value("environment", Json::object());
  if (env.is_object() && env.contains("hostnames")) return only_entry(env["hostnames"]);
  return "";
}

std::vector<NodeOutlier> find_node_outliers(const Json& records, double threshold_pct) {
  struct Group {
    std::map<std::string, std::vector<double>> by_host;  // host -> its records' values (rounds)
    std::string metric, unit, better;
  };
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  if (records.is_array())
    for (const auto& r : records) {
      if (!r.is_object() || r.value("status", "") != "ok" || r.value("metric", "run") == "run") continue;
      if (!r.contains("value") || !r["value"].is_number()) continue;
      const std::string better = r.value("better", "");
      if (better != "higher" && better != "lower") continue;
      const std::string host = single_host(r);
      if (host.empty()) continue;
      const std::string key = point_key(r).dump();
      auto [it, fresh] = groups.try_emplace(key);
      if (fresh) {
        order.push_back(key);
        it->second.metric = r.value("metric", "");
        it->second.unit = r.value("unit", "");
        it->second.better = better;
      }
      it->second.by_host[host].push_back(r["value"].get<double>());
    }

  std::vector<NodeOutlier> out;
  for (const auto& k : order) {
    const Group& g = groups[k];
    if (g.by_host.size() < 3) continue;  // with two hosts neither is "the others"
    std::vector<std::pair<std::string, double>> hosts;
    std::vector<double> values;
    for (const auto& [host, vals] : g.by_host) {
      hosts.emplace_back(host, median(vals));
      values.push_back(hosts.back().second);
    }
    const double m = median(values);
    if (m == 0) continue;
    for (const auto& [host, v] : hosts) {
      const double dev = (v - m) / std::fabs(m) * 100;
      const bool worse = g.better == "higher" ? dev < -threshold_pct : dev > threshold_pct;
      if (!worse) continue;
      NodeOutlier o{host, g.metric, g.unit, Json::parse(k), v, m, dev, g.by_host.size()};
      out.push_back(std::move(o));
    }
  }
  // Worst first: the largest deviation in the bad direction.
  std::stable_sort(out.begin(), out.end(), [](const NodeOutlier& a, const NodeOutlier& b) {
    return std::fabs(a.deviation_pct) > std::fabs(b.deviation_pct);
  });
  return out;
}

Json to_json(const NodeOutlier& o) {
  return Json{{"host", o.host},
              {"metric", o.metric},
              {"unit", o.unit},
              {"key", o.key},
              {"value", o.value},
              {"group_median", o.group_median},
              {"deviation_pct", o.deviation_pct},
              {"group_size", o.group_size}};
}

}  // namespace scalebench
