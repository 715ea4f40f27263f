#include "analysis/prediction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "analysis/scaling_model.hpp"
#include "analysis/stats.hpp"
#include "catalog/registry.hpp"
#include "experiment/sweep.hpp"

namespace scalebench {

namespace {

std::string text_of(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}
long long int_of(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<long long>() : 0;
}
double number_of(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0;
}

Json series(const Json& workload, const Json& variant, Json params, long long ranks_per_node) {
  if (!params.is_object() || !params.contains("op") || !params["op"].is_string() ||
      ring_steps(params["op"].get<std::string>(), 2) == 0 || ranks_per_node < 1)
    return nullptr;
  params.erase("round");
  for (const auto& p : all_measurement_params()) params.erase(p);
  return Json{{"workload", workload.is_string() ? workload : Json("")},
              {"variant", variant.is_string() ? variant : Json("")},
              {"params", sorted_keys(params)},
              {"ranks_per_node", ranks_per_node}};
}

// Whether a record is an ok point of `metric` in `unit`, with a value and a size.
bool ok_point(const Json& r, const char* metric, const char* unit) {
  return r.is_object() && text_of(r, "status") == "ok" && text_of(r, "metric") == metric &&
         text_of(r, "unit") == unit && r.contains("value") && r["value"].is_number() &&
         number_of(r.value("point", Json::object()), "size") > 0;
}

}  // namespace

Json record_series(const Json& r) {
  if (!r.is_object()) return nullptr;
  const Json placement = r.value("placement", Json::object());
  const long long nodes = int_of(placement, "nodes"), gpus = int_of(placement, "gpus");
  if (nodes < 1) return nullptr;
  const long long per_node = gpus > 0 ? gpus / nodes : int_of(placement, "ranks") / nodes;
  return series(r.value("workload", Json()), r.value("variant", Json()), r.value("params", Json()), per_node);
}

Json run_series(const Json& spec) {
  if (!spec.is_object()) return nullptr;
  const long long per_node = spec.value("gpu", false) ? gpus_per_node_of(spec) : int_of(spec, "ranks_per_node");
  return series(spec.value("workload", Json()), spec.value("variant", Json()), spec.value("params", Json()), per_node);
}

Json prediction_series(const Json& p) {
  if (!p.is_object()) return nullptr;
  return series(p.value("workload", Json()), p.value("variant", Json()), p.value("params", Json()),
                int_of(p, "ranks_per_node"));
}

std::string describe_series(const Json& s) {
  const long long per_node = int_of(s, "ranks_per_node");
  std::string d = text_of(s.value("params", Json::object()), "op");
  if (d.empty()) d = text_of(s, "op");
  if (!text_of(s, "variant").empty()) d += ", variant " + text_of(s, "variant");
  return d + ", " + std::to_string(per_node) + (per_node == 1 ? " rank" : " ranks") + " per node";
}

Json to_json(const CollectiveModel& m) {
  Json bandwidths = Json::array();
  for (const auto& [size, b] : m.bus_bandwidth_gbps)
    bandwidths.push_back({{"size", static_cast<long long>(size)}, {"gbps", std::isinf(b) ? Json() : Json(b)}});
  return Json{{"formula", "t(n, S) = steps(n) * a + factor(n) * S / B(S)"},
              {"step_latency_us", m.step_latency_us},
              {"bus_bandwidth_by_size", std::move(bandwidths)},
              {"points", m.points},
              {"rank_counts", m.rank_counts},
              {"max_fit_error_pct", m.max_fit_error_pct}};
}

bool is_single_bandwidth_model(const Json& j) {
  return j.is_object() && j.contains("bus_bandwidth_gbps") && !j.contains("bus_bandwidth_by_size");
}

std::optional<CollectiveModel> collective_model_from_json(const std::string& op, const Json& j) {
  if (!j.is_object() || is_single_bandwidth_model(j)) return std::nullopt;
  for (const char* key : {"step_latency_us", "max_fit_error_pct"})
    if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  for (const char* key : {"points", "rank_counts"})
    if (!j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  const Json& bandwidths = j.value("bus_bandwidth_by_size", Json());
  if (!bandwidths.is_array() || bandwidths.empty() || bandwidths.size() > kMaxModelSizes) return std::nullopt;
  CollectiveModel m;
  m.op = op;
  m.step_latency_us = j["step_latency_us"].get<double>();
  for (const auto& b : bandwidths) {
    if (!b.is_object() || b.size() != 2 || !b.contains("size") || !b["size"].is_number_integer() ||
        !(b["size"].get<long long>() > 0) || !b.contains("gbps") || !(b["gbps"].is_number() || b["gbps"].is_null()))
      return std::nullopt;
    const double gbps = b["gbps"].is_null() ? std::numeric_limits<double>::infinity() : b["gbps"].get<double>();
    // One bandwidth a size: a second would leave which one the predictions used open.
    if (!m.bus_bandwidth_gbps.emplace(b["size"].get<double>(), gbps).second) return std::nullopt;
  }
  m.points = j["points"].get<int>();
  m.rank_counts = j["rank_counts"].get<int>();
  m.max_fit_error_pct = j["max_fit_error_pct"].get<double>();
  if (ring_steps(op, 2) == 0 || m.step_latency_us < 0 || !std::isfinite(m.step_latency_us) || !m.ok())
    return std::nullopt;
  return m;
}

Predictions make_predictions(const Json& records, const std::vector<long long>& experiment_ids, int nodes) {
  // Per series: the time values at each (ranks, size), the node counts and the records used.
  struct Group {
    Json series;
    std::map<std::pair<int, double>, std::vector<double>> times;
    std::set<int> nodes;
    std::vector<long long> record_ids;
  };
  std::map<std::string, Group> groups;
  for (const auto& r : records) {
    if (!ok_point(r, "time", "us") || !(r["value"].get<double>() > 0)) continue;
    Json s = record_series(r);
    if (s.is_null()) continue;
    const int n = static_cast<int>(int_of(r["placement"], "nodes"));
    Group& g = groups[s.dump()];
    g.series = std::move(s);
    const int ranks = n * static_cast<int>(g.series["ranks_per_node"].get<long long>());
    g.times[{ranks, number_of(r["point"], "size")}].push_back(r["value"].get<double>());
    g.nodes.insert(n);
    if (int_of(r, "record_id") > 0) g.record_ids.push_back(int_of(r, "record_id"));
  }
  Predictions out;
  for (auto& [key, g] : groups) {
    const std::string op = g.series["params"]["op"].get<std::string>();
    const int per_node = static_cast<int>(g.series["ranks_per_node"].get<long long>());
    const std::string what = describe_series(g.series);
    if (g.nodes.size() < 2) {
      out.skipped.push_back(what + ": measured at " + std::to_string(*g.nodes.begin()) +
                            " nodes only; a prediction needs 2 node counts or more");
      continue;
    }
    std::vector<CollectivePoint> points;
    for (const auto& [at, values] : g.times) points.push_back({at.first, at.second, median(values)});
    const CollectiveModel model = fit_collective_model(op, points);
    if (!model.ok()) {
      out.skipped.push_back(what + ": the model does not fit its times: no size was measured at 2 node counts");
      continue;
    }
    if (ring_steps(op, nodes * per_node) == 0) {
      out.skipped.push_back(what + ": moves nothing at " + std::to_string(nodes) + " node(s)");
      continue;
    }
    Json predicted = Json::array();
    for (const auto& [size, b] : model.bus_bandwidth_gbps)
      predicted.push_back(
          {{"size", static_cast<long long>(size)}, {"busbw", model.busbw_gbps(nodes * per_node, size)}});
    std::sort(g.record_ids.begin(), g.record_ids.end());
    out.made.push_back(Json{{"experiments", experiment_ids},
                            {"workload", g.series["workload"]},
                            {"variant", g.series["variant"]},
                            {"op", op},
                            {"params", g.series["params"]},
                            {"ranks_per_node", per_node},
                            {"nodes", nodes},
                            {"fit_nodes", g.nodes},
                            {"record_ids", g.record_ids},
                            {"model", to_json(model)},
                            {"predicted", std::move(predicted)}});
  }
  return out;
}

PredictionScore score_prediction(const Json& predicted, const BusbwBySize& measured) {
  PredictionScore score;
  if (!predicted.is_array()) return score;
  for (const auto& p : predicted) {
    const double size = number_of(p, "size");
    const auto it = measured.find(size);
    if (it == measured.end() || it->second.empty()) continue;
    SizeScore s;
    s.size = size;
    s.predicted = number_of(p, "busbw");
    s.values = it->second;
    s.measured = median(s.values);
    if (!(s.measured > 0)) continue;
    s.error_pct = (s.predicted - s.measured) / s.measured * 100;
    if (size >= kPredictionScoredFromBytes)
      score.max_abs_error_pct = std::max(score.max_abs_error_pct.value_or(0), std::fabs(s.error_pct));
    score.sizes.push_back(std::move(s));
  }
  return score;
}

Json to_json(const PredictionScore& score) {
  Json sizes = Json::array();
  for (const auto& s : score.sizes)
    sizes.push_back({{"size", static_cast<long long>(s.size)},
                     {"predicted", s.predicted},
                     {"measured", s.measured},
                     {"error_pct", s.error_pct},
                     {"values", s.values}});
  return Json{{"goal_pct", kPredictionGoalPct},
              {"scored_from_bytes", kPredictionScoredFromBytes},
              {"max_abs_error_pct", score.max_abs_error_pct ? Json(*score.max_abs_error_pct) : Json()},
              {"met", score.met()},
              {"sizes", std::move(sizes)}};
}

BusbwBySize busbw_by_size(const Json& records) {
  BusbwBySize out;
  if (!records.is_array()) return out;
  for (const auto& r : records)
    if (ok_point(r, "busbw", "GB/s")) out[number_of(r["point"], "size")].push_back(r["value"].get<double>());
  return out;
}

BusbwBySize score_values(const Json& score) {
  BusbwBySize out;
  if (!score.is_object() || !score.contains("sizes") || !score["sizes"].is_array()) return out;
  for (const auto& s : score["sizes"]) {
    if (!s.is_object() || !s.contains("values") || !s["values"].is_array()) continue;
    for (const auto& v : s["values"])
      if (v.is_number()) out[number_of(s, "size")].push_back(v.get<double>());
  }
  return out;
}

}  // namespace scalebench
