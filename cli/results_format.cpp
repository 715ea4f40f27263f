#include "cli/results_format.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "catalog/registry.hpp"
#include "common/units.hpp"
#include "record/record_reader.hpp"
#include "record/table_printer.hpp"

namespace scalebench {

namespace {
std::string fmt(double v) {
  std::ostringstream s;
  if (v != 0 && (std::abs(v) >= 1e6 || std::abs(v) < 1e-2))
    s << std::setprecision(3) << std::scientific << v;
  else
    s << std::fixed << std::setprecision(2) << v;
  return s.str();
}
std::string str(const Json& j) {
  if (j.is_null()) return "";
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}
std::string text(const std::optional<long long>& n) { return n ? std::to_string(*n) : ""; }
std::string size_of(const RecordView& r) { return r.size() ? format_size(*r.size()) : ""; }
// Parameters that tell points apart in a table: the workload's table columns (its registry
// declaration); a text value as itself, a true flag as its name (in_place: in-place), a number as
// name=value.
std::string what(const RecordView& r) {
  const Json& p = r.params();
  const WorkloadDef* def = r.workload.empty() ? nullptr : find_workload(r.workload);
  std::string s;
  auto add = [&](const std::string& word) { s += (s.empty() ? "" : " ") + word; };
  for (const auto& k : def ? def->table_columns : std::vector<std::string>{}) {
    if (!p.contains(k)) continue;
    const Json& v = p[k];
    if (v.is_string())
      add(v.get<std::string>());
    else if (v.is_boolean() && v.get<bool>()) {
      std::string name = k;
      std::replace(name.begin(), name.end(), '_', '-');
      add(name);
    } else if (v.is_number())
      add(k + "=" + v.dump());
  }
  return s;
}
}  // namespace

void write_table(std::ostream& out, const Json& records) {
  struct Row {
    std::string run, variant, ranks, gpus, what, size, check, status, reason;
    std::map<std::string, std::string> metrics;
    std::string cv;
  };
  std::vector<std::string> metric_order;
  std::vector<Row> rows;
  std::map<std::string, std::size_t> index;
  for (const auto& json : records) {
    const RecordView r(json);
    std::string key = text(r.run_id) + "/" + (r.has("point") ? r.point().dump() : "-");
    auto it = index.find(key);
    if (it == index.end()) {
      Row row{text(r.run_id),
              r.variant,
              text(r.placement.ranks),
              text(r.placement.gpus),
              what(r),
              size_of(r),
              "",
              r.status,
              r.reason,
              {},
              ""};
      it = index.emplace(key, rows.size()).first;
      rows.push_back(row);
    }
    Row& row = rows[it->second];
    if (r.is_figure()) {
      std::string col = r.metric + "(" + r.unit + ")";
      if (std::find(metric_order.begin(), metric_order.end(), col) == metric_order.end()) metric_order.push_back(col);
      if (r.value) row.metrics[col] = fmt(*r.value);
      if (row.cv.empty() && r.cv()) row.cv = fmt(*r.cv() * 100);  // none: one sample, spread unknown (peers)
      if (const auto passed = r.passed()) row.check = *passed ? "pass" : "FAIL";
      for (const RecordReference& o : r.reference_checks())
        if (o.outcome == "fail") row.check += (row.check.empty() ? "" : ",") + std::string("ref-FAIL");
    }
    if (!r.ok()) {
      row.status = r.status;
      row.reason = r.reason;
    }
  }
  TextTable table;
  table.columns = {"run", "variant", "ranks", "gpus", "what", "size"};
  for (const auto& m : metric_order) table.columns.push_back(m);
  for (const char* h : {"cv%", "check", "status"}) table.columns.push_back(h);
  for (const auto& row : rows) {
    std::vector<std::string> c = {row.run, row.variant, row.ranks, row.gpus, row.what, row.size};
    for (const auto& m : metric_order) c.push_back(row.metrics.count(m) ? row.metrics.at(m) : "");
    c.push_back(row.cv);
    c.push_back(row.check);
    c.push_back(row.status + (row.reason.empty() ? "" : ": " + row.reason));
    table.rows.push_back(std::move(c));
  }
  table.numeric.assign(table.columns.size(), false);
  for (std::size_t i = 6; i < 6 + metric_order.size() + 1; ++i) table.numeric[i] = true;  // metrics and cv%
  write_aligned(out, table);
}

void write_csv(std::ostream& out, const Json& records) {
  TextTable table;
  table.columns = {"record_id", "run_id", "experiment", "workload", "variant",  "nodes",  "ranks",
                   "gpus",      "op",     "dtype",      "backend",  "in_place", "size",   "metric",
                   "unit",      "better", "value",      "median",   "mean",     "stddev", "cv",
                   "min",       "max",    "n",          "check",    "status",   "reason", "reference"};
  for (const auto& json : records) {
    const RecordView r(json);
    const Json& p = r.params();
    const Json& st = r.stats();
    std::string ref;
    for (const RecordReference& o : r.reference_checks()) ref += (ref.empty() ? "" : ";") + o.outcome;
    std::string check;
    if (const auto passed = r.passed()) check = *passed ? "pass" : "fail";
    // Value and stats as stored (2.0 stays "2.0"), so that CSV keeps the record's text.
    table.rows.push_back({text(r.record_id),
                          text(r.run_id),
                          r.experiment,
                          r.workload,
                          r.variant,
                          text(r.placement.nodes),
                          text(r.placement.ranks),
                          text(r.placement.gpus),
                          str(p.value("op", Json())),
                          str(p.value("dtype", Json())),
                          str(p.value("backend", Json())),
                          str(p.value("in_place", Json())),
                          str(r.point().value("size", Json())),
                          r.metric,
                          r.unit,
                          r.better,
                          str(json.value("value", Json())),
                          str(st.value("median", Json())),
                          str(st.value("mean", Json())),
                          str(st.value("stddev", Json())),
                          str(st.value("cv", Json())),
                          str(st.value("min", Json())),
                          str(st.value("max", Json())),
                          str(st.value("n", Json())),
                          check,
                          r.status,
                          r.reason,
                          ref});
  }
  write_csv_table(out, table);
}

void write_json_lines(std::ostream& out, const Json& records) {
  for (const auto& r : records) out << r.dump() << "\n";
}

std::vector<std::string> reference_failures(const Json& records) {
  std::vector<std::string> out;
  for (const auto& json : records) {
    const RecordView r(json);
    for (const RecordReference& o : r.reference_checks())
      if (o.outcome == "fail") {
        std::string bounds;
        if (o.lower_bound) bounds += ">= " + fmt(*o.lower_bound);
        if (o.upper_bound) bounds += (bounds.empty() ? "" : " and ") + std::string("<= ") + fmt(*o.upper_bound);
        out.push_back(r.experiment + " run " + text(r.run_id) + " " + r.variant + " " + size_of(r) + " " + r.metric +
                      " = " + fmt(r.value.value_or(0)) + " " + r.unit + ", reference wants " + bounds);
      }
  }
  return out;
}

}  // namespace scalebench

namespace scalebench {

void write_ratios(std::ostream& out, const std::vector<VariantRatio>& ratios, const std::string& numerator,
                  const std::string& denominator, const std::string& format) {
  auto describe = [](const VariantRatio& v) {
    const Json& p = v.key["params"];
    std::string s;
    for (const char* k : {"op", "dtype", "test", "engine", "direction"})
      if (p.contains(k) && p[k].is_string()) s += (s.empty() ? "" : " ") + p[k].get<std::string>();
    if (p.value("in_place", false)) s += " in-place";
    // Workloads without those (train: model, precision, batch) are named by their table columns.
    const Json named{{"workload", v.workload}, {"params", p}};
    return s.empty() ? what(RecordView(named)) : s;
  };
  auto size = [](const VariantRatio& v) {
    return v.key.contains("point") && v.key["point"].is_number_unsigned()
               ? format_size(v.key["point"].get<std::uint64_t>())
               : std::string();
  };
  if (format == "json") {
    for (const auto& v : ratios)
      out << Json{{"key", v.key},
                  {"metric", v.metric},
                  {"unit", v.unit},
                  {"numerator", numerator},
                  {"denominator", denominator},
                  {"numerator_value", v.numerator},
                  {"denominator_value", v.denominator},
                  {"ratio", v.ratio},
                  {"ci95_low", v.ci_low},
                  {"ci95_high", v.ci_high},
                  {"pairs", v.pairs},
                  {"paired_by", v.paired_by}}
                 .dump()
          << "\n";
    return;
  }
  if (format == "csv") {
    // Numbers as a stream writes them (6 significant digits).
    auto streamed = [](double x) {
      std::ostringstream s;
      s << x;
      return s.str();
    };
    TextTable table{{"what", "gpus", "size", "metric", "unit", numerator, denominator, "ratio", "ci95_low", "ci95_high",
                     "pairs", "paired_by"},
                    {},
                    {}};
    for (const auto& v : ratios)
      table.rows.push_back({describe(v), std::to_string(v.key.value("gpus", 0)), size(v), v.metric, v.unit,
                            streamed(v.numerator), streamed(v.denominator), streamed(v.ratio), streamed(v.ci_low),
                            streamed(v.ci_high), std::to_string(v.pairs), v.paired_by});
    write_csv_table(out, table);
    return;
  }
  TextTable table{{"what", "gpus", "size", "metric", numerator, denominator, "ratio", "95% CI", "pairs"},
                  {false, true, true, false, true, true, true, true, false},
                  {}};
  for (const auto& v : ratios) {
    std::ostringstream ci;
    ci << std::fixed << std::setprecision(3) << "[" << v.ci_low << ", " << v.ci_high << "]";
    std::ostringstream ratio;
    ratio << std::fixed << std::setprecision(3) << v.ratio;
    table.rows.push_back({describe(v), std::to_string(v.key.value("gpus", 0)), size(v), v.metric, fmt(v.numerator),
                          fmt(v.denominator), ratio.str(), ci.str(),
                          std::to_string(v.pairs) + (v.paired_by == "samples" ? "s" : "r")});
  }
  write_aligned(out, table);
  if (!ratios.empty())
    out << "pairs: r = interleaved rounds, s = samples of one round in order; ratio = geometric mean of the pairs\n";
}

}  // namespace scalebench
