// "Predicted against measured": the predictions of `scalebench predict` that runs of the reported
// experiments scored (docs/predictions.md), per size and as the worst error from 1 MiB up
// against the goal.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

#include "analysis/prediction.hpp"
#include "common/units.hpp"
#include "report/sections/section_helpers.hpp"
#include "report/sections/sections.hpp"

namespace scalebench::sections {

namespace {

// Percentages as the tables print them: "+4.2" (signed), "4.2", or "10" (a goal).
std::string percent_text(double v, const char* format = "%.1f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string join(const Json& list, const char* key = nullptr) {
  std::string out;
  for (const auto& v : list) {
    const Json& item = key && v.is_object() ? v.value(key, Json()) : v;
    out += (out.empty() ? "" : ", ") + (item.is_string() ? item.get<std::string>() : item.dump());
  }
  return out;
}

}  // namespace

std::optional<Section> predicted_against_measured(const Json& predictions, const std::vector<std::string>& names) {
  if (!predictions.is_array()) return std::nullopt;
  const std::set<std::string> shown(names.begin(), names.end());
  Section sec;
  sec.id = "predicted-vs-measured", sec.title = "Predicted against measured";
  const std::string goal = percent_text(kPredictionGoalPct, "%g") + "%";
  sec.paragraphs.push_back(
      "Each prediction was made by `scalebench predict` from runs at fewer nodes, before the runs that measured "
      "it started: a ring model t(n, S) = steps(n)·a + factor(n)·S/B(S) fitted on every size at every measured "
      "node count, its busbw taken at the predicted count. a, the latency of a ring step, is one for all sizes; "
      "B(S), the bus bandwidth, is fitted per size, since a link's effective bandwidth changes with the message "
      "size (protocols, windows, caches). error = (predicted - measured) / measured, measured being "
      "the median over the scoring experiment's runs. The goal: within " +
      goal +
      " at every size from 1 MiB up (below, a ring step's latency rules and microseconds of jitter are "
      "tens of percent).");
  Table summary = make_table(sec.id + "-summary", "Predictions and their worst error",
                             "max |error| over the sizes from 1 MiB up; goal: within " + goal +
                                 "; worst fit: how far the model misses the points it was fitted on (over the goal, "
                                 "the prediction is a guess)",
                             {{"prediction", true},
                              {"series", false},
                              {"nodes", true},
                              {"fitted on nodes", false},
                              {"from", false},
                              {"worst fit %", true},
                              {"measured by", false},
                              {"max |error| % from 1 MiB", true},
                              {"goal", false}});
  Table sizes = make_table(sec.id, "Predicted against measured busbw per size",
                           "busbw in GB/s; error % = (predicted - measured) / measured x 100",
                           {{"prediction", true},
                            {"op", false},
                            {"nodes", true},
                            {"size", true},
                            {"predicted busbw", true},
                            {"measured busbw", true},
                            {"error %", true},
                            {"measured by", false}});
  for (const Json& p : predictions) {
    if (!p.is_object() || !p.contains("scores")) continue;
    for (const Json& s : p["scores"]) {
      const std::string by = s.value("experiment", "");
      if (!shown.count(by)) continue;
      const std::string id = p["id"].dump(), nodes = p["nodes"].dump(), what = describe_series(prediction_series(p));
      const Json& worst = s["max_abs_error_pct"];
      const std::string verdict = worst.is_null() ? "no size from 1 MiB" : s.value("met", false) ? "met" : "missed";
      summary.rows.push_back({id, what, nodes, join(p["fit_nodes"]), join(p["experiments"], "name"),
                              percent_text(p["model"].value("max_fit_error_pct", 0.0)), by,
                              worst.is_null() ? "" : percent_text(worst.get<double>()), verdict});
      Chart c;
      c.id = bounded_id(sec.id + "-" + id + "-" + id_safe(by));
      c.title = "Prediction " + id + " (" + what + ") at " + nodes + " nodes against " + by;
      c.x_label = "size", c.y_label = "busbw (GB/s)";
      c.log_x = true, c.x_bytes = true;
      Series measured, predicted;
      measured.name = by + " measured";
      predicted.name = "predicted from nodes " + join(p["fit_nodes"]);
      predicted.dashed = true, predicted.error_bars = false;
      for (const Json& row : s["sizes"]) {
        const double size = row["size"].get<double>(), pb = row["predicted"].get<double>();
        double low = row["measured"].get<double>(), high = low;
        for (const Json& v : row["values"])
          low = std::min(low, v.get<double>()), high = std::max(high, v.get<double>());
        measured.points.push_back({size, row["measured"].get<double>(), low, high});
        predicted.points.push_back({size, pb, pb, pb});
        sizes.rows.push_back({id, p.value("op", ""), nodes, format_size(static_cast<std::uint64_t>(size)),
                              format_number(pb), format_number(row["measured"].get<double>()),
                              percent_text(row["error_pct"].get<double>(), "%+.1f"), by});
      }
      c.series = {measured, predicted};
      if (verdict == "missed")
        c.warning =
            "Missed the goal: max |error| from 1 MiB " + percent_text(worst.get<double>()) + "% (goal " + goal + ")";
      sec.charts.push_back(std::move(c));
      sec.paragraphs.push_back("Prediction " + id + " (" + what + ", at " + nodes + " nodes from nodes " +
                               join(p["fit_nodes"]) + ") against " + by + ": " +
                               (worst.is_null()
                                    ? "no size of 1 MiB or more was measured, so the goal is not judged."
                                    : "max |error| from 1 MiB " + percent_text(worst.get<double>()) + "%, " +
                                          (verdict == "met" ? "within" : "outside") + " the " + goal + " goal.") +
                               (is_single_bandwidth_model(p.value("model", Json()))
                                    ? " It was made by an earlier model, with one B for all sizes."
                                    : ""));
    }
  }
  if (summary.rows.empty()) return std::nullopt;
  sec.tables = {summary, sizes};
  return sec;
}

}  // namespace scalebench::sections
