// scalebench predict and scalebench predictions: collective busbw predicted at a node count not
// measured yet, kept by the coordinator and scored there when that node count's run lands
// (docs/predictions.md).
#include <cstdio>
#include <iostream>
#include <optional>

#include "analysis/prediction.hpp"
#include "cli/commands.hpp"
#include "cli/record_source.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "experiment/spec.hpp"
#include "record/table_printer.hpp"
#include "report/build_report.hpp"

namespace scalebench {

namespace {

std::string size_text(const Json& size) { return format_size(size.get<std::uint64_t>()); }

std::string join(const Json& list) {
  std::string out;
  for (const auto& v : list) out += (out.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

// Percentages as the tables print them: "+4.2%" (signed), "4.2%", or "10%" (`goal`).
std::string percent_text(double v, const char* format = "%.1f%%") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string signed_percent(double v) { return percent_text(v, "%+.1f%%"); }

// B(S) at `size` in a posted model (GB/s): null where the latency alone explains the size's time
// (no bandwidth term), as where the model has no such size (it has every predicted one).
Json bandwidth_at(const Json& model, const Json& size) {
  for (const Json& b : model["bus_bandwidth_by_size"])
    if (b["size"] == size) return b["gbps"];
  return nullptr;
}

// "ar-4 (id 9)"
std::string experiment_label(const Json& score) {
  return score.value("experiment", "") + " (id " + score.value("experiment_id", Json()).dump() + ")";
}

}  // namespace

int cmd_predict(const CliArgs& a) {
  const std::vector<std::string> experiments = a.opt_list("experiment");
  const std::optional<double> nodes = a.opt_number("nodes");
  if (experiments.empty() || !nodes)
    throw Error("usage: scalebench predict --experiment NAME|ID[,NAME|ID...] --nodes N [--coordinator URL]");
  if (!(*nodes >= 1 && *nodes <= kMaxNodes && *nodes == static_cast<int>(*nodes)))
    throw Error("--nodes takes a node count from 1 to " + std::to_string(kMaxNodes) + ", got '" + a.opt("nodes") + "'");
  HttpClient client = coordinator_client(a);
  // Each experiment by id (records carry only names, and a name may be reused), its records with it.
  std::vector<long long> ids;
  Json records = Json::array();
  for (const std::string& e : experiments) {
    const Json summary = client.get_json("/api/v1/experiments/" + e + "?limit=1");
    ids.push_back(summary["id"].get<long long>());
    for (auto& r : Source(client).records(std::to_string(ids.back()))) records.push_back(std::move(r));
  }
  const Predictions p = make_predictions(records, ids, static_cast<int>(*nodes));
  for (const std::string& why : p.skipped) std::cerr << "scalebench: not predicted: " << why << "\n";
  if (p.made.empty())
    throw Error("nothing to predict from " + a.opt("experiment") +
                ": a prediction needs ok collective time records at 2 node counts or more");

  Json posted = Json::array();
  for (const Json& made : p.made) {
    const Json answer = client.post_json("/api/v1/predictions", made);
    Json shown{{"prediction_id", answer["prediction_id"]}, {"created_at", answer["created_at"]}};
    for (const auto& [key, value] : made.items()) shown[key] = value;
    posted.push_back(std::move(shown));
  }
  const std::string format = a.opt("format", "table");
  if (format == "json") {
    std::cout << posted.dump() << "\n";
    return 0;
  }
  if (format == "csv") {
    TextTable table{
        {"prediction", "op", "variant", "nodes", "size", "predicted_busbw_gbps", "bus_bandwidth_gbps"}, {}, {}};
    for (const Json& q : posted)
      for (const Json& row : q["predicted"]) {
        const Json b = bandwidth_at(q["model"], row["size"]);
        table.rows.push_back({q["prediction_id"].dump(), q["op"].get<std::string>(), q["variant"].get<std::string>(),
                              q["nodes"].dump(), row["size"].dump(), row["busbw"].dump(), b.is_null() ? "" : b.dump()});
      }
    write_csv_table(std::cout, table);
    return 0;
  }
  for (const Json& q : posted) {
    const Json& m = q["model"];
    std::cout << "prediction " << q["prediction_id"] << ": " << describe_series(prediction_series(q)) << ", at "
              << q["nodes"] << " nodes from nodes " << join(q["fit_nodes"]) << " (" << q["record_ids"].size()
              << " time records)\n"
              << "model: t(n, S) = steps(n) * a + factor(n) * S / B(S) with a = "
              << format_number(m["step_latency_us"].get<double>())
              << " us per ring step and B(S) the bus bandwidth of each size, below; the worst fitted point is off by "
              << format_number(m["max_fit_error_pct"].get<double>()) << "%\n";
    if (m["max_fit_error_pct"].get<double>() > kPredictionGoalPct)
      std::cout << "warning: the model misses points it was fitted on by more than the " << kPredictionGoalPct
                << "% goal: its prediction is a guess (noisy or contended runs, or a network that is no ring)\n";
    const std::vector<FixedColumn> columns{{10}, {14, false, 2}, {20, false, 2}};
    std::cout << fixed_row(columns, {"size", "B(S) GB/s", "predicted busbw GB/s"}, "  ") << "\n";
    for (const Json& row : q["predicted"]) {
      const Json b = bandwidth_at(m, row["size"]);
      std::cout << fixed_row(columns,
                             {size_text(row["size"]), b.is_null() ? "latency only" : format_number(b.get<double>()),
                              format_number(row["busbw"].get<double>())},
                             "  ")
                << "\n";
    }
    std::cout << "scored when a run of this series ends at " << q["nodes"] << " nodes; see scalebench predictions "
              << q["prediction_id"] << "\n\n";
  }
  return 0;
}

int cmd_predictions(const CliArgs& a) {
  const Json list = Source(a).predictions(a.positional.empty() ? "" : a.positional[0]);
  const std::string format = a.opt("format", "table");
  if (format == "json") {
    std::cout << list.dump() << "\n";
    return 0;
  }
  // A row per prediction, score and size; a prediction not scored yet shows what it predicts.
  struct Row {
    Json prediction, op, nodes, size;
    double predicted = 0;
    std::optional<double> measured, error_pct;
    Json score;  // null while not measured
  };
  std::vector<Row> rows;
  std::vector<std::string> verdicts;
  for (const Json& p : list) {
    if (p["scores"].empty())
      for (const Json& r : p["predicted"])
        rows.push_back({p["id"], p["op"], p["nodes"], r["size"], r["busbw"].get<double>(), {}, {}, Json()});
    for (const Json& s : p["scores"]) {
      for (const Json& r : s["sizes"])
        rows.push_back({p["id"], p["op"], p["nodes"], r["size"], r["predicted"].get<double>(),
                        r["measured"].get<double>(), r["error_pct"].get<double>(), s});
      const Json& worst = s["max_abs_error_pct"];
      verdicts.push_back("prediction " + p["id"].dump() + " (" + describe_series(prediction_series(p)) + ", " +
                         p["nodes"].dump() + " nodes) against " + experiment_label(s) + ": " +
                         (worst.is_null() ? std::string("no size of 1 MiB or more measured")
                                          : "max |error| from 1 MiB " + percent_text(worst.get<double>()) +
                                                ", goal within " + percent_text(s["goal_pct"].get<double>(), "%g%%") +
                                                ": " + (s["met"].get<bool>() ? "met" : "missed")));
    }
  }
  if (format == "csv") {
    TextTable table{{"prediction", "op", "nodes", "size", "predicted_busbw_gbps", "measured_busbw_gbps", "error_pct",
                     "experiment_id", "experiment"},
                    {},
                    {}};
    for (const Row& r : rows)
      table.rows.push_back({r.prediction.dump(), r.op.get<std::string>(), r.nodes.dump(), r.size.dump(),
                            Json(r.predicted).dump(), r.measured ? Json(*r.measured).dump() : "",
                            r.error_pct ? Json(*r.error_pct).dump() : "",
                            r.score.is_null() ? "" : r.score["experiment_id"].dump(),
                            r.score.is_null() ? "" : r.score.value("experiment", "")});
    write_csv_table(std::cout, table);
    return 0;
  }
  if (rows.empty()) {
    std::cout << "no predictions; make one with scalebench predict --experiment NAME --nodes N\n";
    return 0;
  }
  const std::vector<FixedColumn> columns{{4, true}, {14, true}, {5}, {9}, {14}, {14}, {8}, {0, false, 2}};
  std::cout << fixed_row(columns,
                         {"id", "op", "nodes", "size", "predicted GB/s", "measured GB/s", "error", "measured by"})
            << "\n";
  for (const Row& r : rows)
    std::cout << fixed_row(columns, {r.prediction.dump(), r.op.get<std::string>(), r.nodes.dump(), size_text(r.size),
                                     format_number(r.predicted), r.measured ? format_number(*r.measured) : "-",
                                     r.error_pct ? signed_percent(*r.error_pct) : "-",
                                     r.score.is_null() ? "not measured yet" : experiment_label(r.score)})
              << "\n";
  for (const auto& v : verdicts) std::cout << v << "\n";
  return 0;
}

}  // namespace scalebench
