#include "report/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/stats.hpp"
#include "record/record_reader.hpp"
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
  const RecordView v(r);
  if (v.placement.nodes.value_or(0) > 1) return "";
  if (v.has("placement.hosts")) return v.placement.hosts.size() == 1 ? v.placement.hosts.front() : "";
  const Json& env = v.environment();
  if (env.contains("hostnames")) return only_entry(env["hostnames"]);
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
    for (const auto& json : records) {
      const RecordView r(json);
      if (!r.ok() || r.metric.empty() || !r.is_figure() || !r.value) continue;
      if (r.better != "higher" && r.better != "lower") continue;
      const std::string host = single_host(json);
      if (host.empty()) continue;
      const std::string key = point_key(json).dump();
      auto [it, fresh] = groups.try_emplace(key);
      if (fresh) {
        order.push_back(key);
        it->second.metric = r.metric;
        it->second.unit = r.unit;
        it->second.better = r.better;
      }
      it->second.by_host[host].push_back(*r.value);
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
