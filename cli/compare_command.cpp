// scalebench compare: a candidate experiment against a baseline (another experiment or a records
// file), each metric's change with its noise band and verdict, worst first (docs/compare.md).
//
// Why it is shaped this way: the comparison (report/compare.cpp: points matched by their
// parameters, a Hodges-Lehmann band because timings are skewed and stall now and then) is a
// function of two record lists, so that its unit tests need no store; this file only gathers the
// two sides and prints. Its options and a --baseline file are read before the store or the
// coordinator is asked anything, so that bad input exits 2 at once. A comparison with nothing
// comparable exits 3, not 0, so that a CI gate on the exit code cannot pass on an empty match.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>

#include "cli/commands.hpp"
#include "cli/record_source.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "record/record_reader.hpp"
#include "record/table_printer.hpp"
#include "report/compare.hpp"
#include "report/outliers.hpp"

namespace scalebench {

namespace {
const char* kCompareUsage =
    "usage: scalebench compare BASELINE CANDIDATE [--db FILE | --coordinator URL]\n"
    "       scalebench compare CANDIDATE --baseline FILE [--db FILE | --coordinator URL]\n"
    "         [--tolerance PCT] [--metric M] [--ignore-params P,Q] [--format table|csv|json]\n"
    "         [--outliers] [--outlier-threshold PCT]";

double percent_option(const CliArgs& a, const std::string& name, double fallback) {
  const std::optional<double> v = a.opt_number(name);
  if (!v) return fallback;
  if (!(*v >= 0)) throw Error("--" + name + " takes a percentage >= 0 (e.g. 5), got '" + a.opt(name) + "'");
  return *v;
}

// "quick (id 3)" from the store's or the coordinator's summary of the experiment.
std::string label_of(const Json& summary, const std::string& asked) {
  if (!summary.is_object() || !summary.contains("name")) return asked;
  return summary["name"].get<std::string>() + " (id " + summary.value("id", Json(asked)).dump() + ")";
}

std::string number(double v) {
  char buf[64];
  const double m = std::fabs(v);
  if (v != 0 && (m >= 1e6 || m < 1e-2))
    std::snprintf(buf, sizeof buf, "%.3e", v);
  else
    std::snprintf(buf, sizeof buf, m >= 100 ? "%.1f" : "%.3g", v);
  return buf;
}

std::string pct(double v) {
  if (std::isnan(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v);
  return buf;
}

// What tells points apart in a table: the sweep's usual parameters, then the point's context.
std::string what(const CompareRow& r) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
  const Json& p = r.key["params"];
  for (const char* k : {"op", "dtype", "backend", "test", "engine", "direction"})
    if (p.contains(k) && p[k].is_string()) add(p[k].get<std::string>());
  if (p.value("in_place", false)) add("in-place");
  if (p.contains("src") && p.contains("dst")) {
    auto str = [](const Json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
    add(str(p["src"]) + "->" + str(p["dst"]));
  }
  static const std::set<std::string> shown = {"size", "count", "chunk", "busbw_factor"};
  for (auto it = r.key["point"].begin(); it != r.key["point"].end(); ++it)
    if (!shown.count(it.key())) add(it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump()));
  return s;
}

std::string size_of(const CompareRow& r) {
  const Json& pt = r.key["point"];
  if (!pt.contains("size") || !pt["size"].is_number_unsigned()) return "";
  return format_size(pt["size"].get<std::uint64_t>());
}

void write_table(std::ostream& out, const std::vector<CompareRow>& rows) {
  TextTable table;
  table.columns = {"verdict", "change", "95% band", "tolerance", "baseline", "candidate",        "metric",
                   "variant", "ranks",  "gpus",     "what",      "size",     "records (samples)"};
  for (const auto& r : rows) {
    const bool band = !std::isnan(r.band_low_pct);
    std::string tol = number(r.tolerance_pct) + "%" + (r.tolerance_from == "reference" ? " (ref)" : "");
    std::vector<std::string> c = {to_string(r.verdict),
                                  pct(r.change_pct),
                                  band ? "[" + pct(r.band_low_pct) + ", " + pct(r.band_high_pct) + "]" : "",
                                  tol,
                                  r.baseline ? number(*r.baseline) : "-",
                                  r.candidate ? number(*r.candidate) : "-",
                                  r.metric + "(" + r.unit + ")",
                                  r.variant,
                                  std::to_string(r.ranks),
                                  std::to_string(r.gpus),
                                  what(r),
                                  size_of(r),
                                  std::to_string(r.baseline_records) + "/" + std::to_string(r.candidate_records) +
                                      " (" + std::to_string(r.baseline_samples) + "/" +
                                      std::to_string(r.candidate_samples) + ")"};
    if (!r.note.empty()) c.push_back(r.note);
    table.rows.push_back(std::move(c));
  }
  write_aligned(out, table);
}

void write_csv(std::ostream& out, const std::vector<CompareRow>& rows) {
  const std::vector<std::string> cols = {"verdict",
                                         "workload",
                                         "variant",
                                         "metric",
                                         "unit",
                                         "better",
                                         "nodes",
                                         "ranks",
                                         "gpus",
                                         "params",
                                         "point",
                                         "baseline",
                                         "candidate",
                                         "baseline_records",
                                         "candidate_records",
                                         "change_pct",
                                         "band_low_pct",
                                         "band_high_pct",
                                         "baseline_samples",
                                         "candidate_samples",
                                         "tolerance_pct",
                                         "tolerance_from",
                                         "note"};
  TextTable table{cols, {}, {}};
  for (const auto& r : rows) {
    const Json j = to_json(r);
    std::vector<std::string> cells;
    for (const auto& col : cols) {
      const Json& v = j[col];
      cells.push_back(v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump());
    }
    table.rows.push_back(std::move(cells));
  }
  write_csv_table(out, table);
}

void write_outliers_table(std::ostream& out, const std::vector<NodeOutlier>& outliers, double threshold,
                          const Json& candidate) {
  out << "\nper-node outliers of the candidate (worse than the median of >= 3 hosts by more than " << number(threshold)
      << "%):\n";
  if (outliers.empty()) {
    std::set<std::string> hosts;
    for (const auto& r : candidate)
      if (auto h = single_host(r); !h.empty()) hosts.insert(h);
    out << "none";
    if (hosts.size() < 3)
      out << " (its single-host runs ran on " << hosts.size() << " host" << (hosts.size() == 1 ? "" : "s")
          << "; the rule needs 3 or more)";
    out << "\n";
    return;
  }
  for (const auto& o : outliers) {
    std::string where =
        o.key["variant"].get<std::string>() + " ranks=" + o.key["ranks"].dump() + " gpus=" + o.key["gpus"].dump();
    const Json& pt = o.key["point"];
    if (pt.contains("size") && pt["size"].is_number_unsigned())
      where += " size=" + format_size(pt["size"].get<std::uint64_t>());
    out << o.host << ": " << o.metric << " " << number(o.value) << " " << o.unit << " is " << pct(o.deviation_pct)
        << " from the median " << number(o.group_median) << " of " << o.group_size << " hosts (" << where << ")\n";
  }
}
// A baseline file that holds a whole study (records of several experiments) is narrowed to the
// candidate's experiment when it is among them; otherwise all of it is the baseline, with a note.
void narrow_to_candidate(Json& baseline, const Json& candidate, std::string& label) {
  std::set<std::string> names;
  for (const auto& r : baseline) names.insert(RecordView(r).experiment);
  if (names.size() < 2) return;
  const std::string wanted = candidate.empty() ? "" : RecordView(candidate.front()).experiment;
  if (names.count(wanted) == 0) {
    std::cerr << "scalebench: note: " << label << " holds records of " << names.size()
              << " experiments, none named like the candidate; all of them form the baseline\n";
    return;
  }
  Json kept = Json::array();
  for (const auto& r : baseline)
    if (RecordView(r).experiment == wanted) kept.push_back(r);
  baseline = std::move(kept);
  label += " (its " + wanted + " records)";
}
}  // namespace

int cmd_compare(const CliArgs& a) {
  const std::string baseline_file = a.opt("baseline");
  const std::size_t want = baseline_file.empty() ? 2 : 1;
  if (a.positional.size() != want) throw Error(kCompareUsage);
  for (const auto& p : a.positional)
    if (p.empty()) throw Error("an experiment name or id must not be empty\n" + std::string(kCompareUsage));
  const std::string format = a.opt("format", "table");
  if (format != "table" && format != "csv" && format != "json") throw Error("--format takes table, csv or json");
  CompareOptions options;
  options.tolerance_pct = percent_option(a, "tolerance", 5);
  options.metric = a.opt("metric");
  options.ignore_params = a.opt_list("ignore-params");
  const bool outliers_wanted = a.options.count("outliers") > 0;
  const double outlier_threshold = percent_option(a, "outlier-threshold", 10);

  // Bad input (2) before the store or coordinator is asked anything.
  Json baseline;
  std::string baseline_label;
  if (!baseline_file.empty()) {
    baseline = read_records_file(baseline_file);
    baseline_label = baseline_file;
  }

  Source src(a);
  Json candidate;
  std::string candidate_label;
  try {
    if (baseline_file.empty()) {
      baseline_label = label_of(src.experiment(a.positional[0]), a.positional[0]);
      baseline = src.records(a.positional[0]);
    }
    const std::string& cand = a.positional.back();
    candidate_label = label_of(src.experiment(cand), cand);
    candidate = src.records(cand);
  } catch (const Error& e) {
    // An unknown experiment is bad input (2), also when the coordinator is the one saying so.
    const std::string msg = e.what();
    if (msg.rfind("no experiment '", 0) != 0) throw;
    std::cerr << "scalebench: " << msg.substr(0, msg.find(" (HTTP ")) << "\n";
    return 2;
  }

  if (!baseline_file.empty()) narrow_to_candidate(baseline, candidate, baseline_label);
  const auto rows = compare_records(baseline, candidate, options);
  auto counts = count_verdicts(rows);
  const int compared = counts[Verdict::kRegression] + counts[Verdict::kUnchanged] + counts[Verdict::kImprovement];
  std::vector<NodeOutlier> outliers;
  if (outliers_wanted) outliers = find_node_outliers(candidate, outlier_threshold);

  std::string summary;
  for (auto v : {Verdict::kRegression, Verdict::kMissing, Verdict::kUnchanged, Verdict::kImprovement, Verdict::kNew})
    summary += (summary.empty() ? "" : ", ") + std::to_string(counts[v]) + " " + to_string(v) +
               (counts[v] != 1 && (v == Verdict::kRegression || v == Verdict::kImprovement) ? "s" : "");
  summary += ": candidate " + candidate_label + " against baseline " + baseline_label + ", tolerance " +
             number(options.tolerance_pct) + "% where no reference sets one";
  if (outliers_wanted) summary += "; " + std::to_string(outliers.size()) + " per-node outliers";

  if (format == "json") {
    Json j{{"baseline", baseline_label},
           {"candidate", candidate_label},
           {"tolerance_pct", options.tolerance_pct},
           {"counts", Json::object()},
           {"rows", Json::array()}};
    for (const auto& [v, n] : counts) j["counts"][to_string(v)] = n;
    for (const auto& r : rows) j["rows"].push_back(to_json(r));
    if (outliers_wanted) {
      j["outlier_threshold_pct"] = outlier_threshold;
      j["outliers"] = Json::array();
      for (const auto& o : outliers) j["outliers"].push_back(to_json(o));
    }
    std::cout << j.dump(2) << "\n";
  } else if (format == "csv") {
    write_csv(std::cout, rows);
    std::cerr << summary << "\n";
  } else {
    if (!rows.empty()) write_table(std::cout, rows);
    if (outliers_wanted) write_outliers_table(std::cout, outliers, outlier_threshold, candidate);
    std::cout << summary << "\n";
  }

  if (compared == 0) {
    std::cerr << "scalebench: nothing to compare: no point has ok records on both sides (" << counts[Verdict::kMissing]
              << " only in the baseline, " << counts[Verdict::kNew] << " only in the candidate"
              << (options.metric.empty() ? "" : ", metric " + options.metric) << ")\n";
    return 3;
  }
  return counts[Verdict::kRegression] > 0 ? 1 : 0;
}

}  // namespace scalebench
