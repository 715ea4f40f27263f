#include "cli/results_format.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <vector>

#include "common/csv.hpp"
#include "common/units.hpp"
#include "workloads/registry/registry.hpp"

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
std::string size_of(const Json& r) {
  if (!r.contains("point") || !r["point"].contains("size")) return "";
  return format_size(r["point"]["size"].get<std::uint64_t>());
}
// Parameters that tell points apart in a table: the workload's table columns (its registry
// declaration); a text value as itself, a true flag as its name (in_place: in-place), a number as
// name=value.
std::string what(const Json& r) {
  const Json p = r.value("params", Json::object());
  const WorkloadDef* def =
      r.contains("workload") && r["workload"].is_string() ? find_workload(r["workload"].get<std::string>()) : nullptr;
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

void write_aligned(std::ostream& out, const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& numeric) {
  // Each column as wide as its widest cell, header included, and two spaces between columns, so
  // that no header runs into the next one whatever the names (a variant's name heads a column).
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& c : rows)
    for (std::size_t i = 0; i + 1 < c.size() && i < width.size(); ++i) width[i] = std::max(width[i], c[i].size());
  auto line = [&](const std::vector<std::string>& c) {
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (i + 1 == c.size()) {
        out << c[i];  // the last column is not padded: no trailing spaces
        break;
      }
      const bool right = i < numeric.size() && numeric[i];
      out << std::setw(static_cast<int>(width[i])) << (right ? std::right : std::left) << c[i] << "  ";
    }
    out << "\n";
  };
  line(header);
  for (const auto& c : rows) line(c);
}

void write_table(std::ostream& out, const Json& records) {
  struct Row {
    std::string run, variant, ranks, gpus, what, size, check, status, reason;
    std::map<std::string, std::string> metrics;
    std::string cv;
  };
  std::vector<std::string> metric_order;
  std::vector<Row> rows;
  std::map<std::string, std::size_t> index;
  for (const auto& r : records) {
    const Json pl = r.value("placement", Json::object());
    std::string key = str(r["run_id"]) + "/" + (r.contains("point") ? r["point"].dump() : "-");
    auto it = index.find(key);
    if (it == index.end()) {
      Row row{str(r["run_id"]),
              r.value("variant", ""),
              str(pl.value("ranks", Json())),
              str(pl.value("gpus", Json())),
              what(r),
              size_of(r),
              "",
              r.value("status", ""),
              r.value("reason", ""),
              {},
              ""};
      it = index.emplace(key, rows.size()).first;
      rows.push_back(row);
    }
    Row& row = rows[it->second];
    const std::string metric = r.value("metric", "");
    if (metric != "run") {
      std::string col = metric + "(" + r.value("unit", "") + ")";
      if (std::find(metric_order.begin(), metric_order.end(), col) == metric_order.end()) metric_order.push_back(col);
      if (r.contains("value") && r["value"].is_number()) row.metrics[col] = fmt(r["value"].get<double>());
      if (row.cv.empty() && r.contains("stats") && r["stats"].contains("cv") && r["stats"]["cv"].is_number())
        row.cv = fmt(r["stats"]["cv"].get<double>() * 100);  // null: one sample, spread unknown (peers)
      if (r.contains("correctness") && r["correctness"].value("checked", false))
        row.check = r["correctness"].value("passed", false) ? "pass" : "FAIL";
      if (r.contains("references"))
        for (const auto& o : r["references"])
          if (o.value("outcome", "") == "fail") row.check += (row.check.empty() ? "" : ",") + std::string("ref-FAIL");
    }
    if (r.value("status", "") != "ok") {
      row.status = r.value("status", "");
      row.reason = r.value("reason", "");
    }
  }
  std::vector<std::string> header = {"run", "variant", "ranks", "gpus", "what", "size"};
  for (const auto& m : metric_order) header.push_back(m);
  for (const char* h : {"cv%", "check", "status"}) header.push_back(h);
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : rows) {
    std::vector<std::string> c = {row.run, row.variant, row.ranks, row.gpus, row.what, row.size};
    for (const auto& m : metric_order) c.push_back(row.metrics.count(m) ? row.metrics.at(m) : "");
    c.push_back(row.cv);
    c.push_back(row.check);
    c.push_back(row.status + (row.reason.empty() ? "" : ": " + row.reason));
    cells.push_back(std::move(c));
  }
  std::vector<bool> numeric(header.size(), false);
  for (std::size_t i = 6; i < 6 + metric_order.size() + 1; ++i) numeric[i] = true;
  write_aligned(out, header, cells, numeric);
}

void write_csv(std::ostream& out, const Json& records) {
  out << "record_id,run_id,experiment,workload,variant,nodes,ranks,gpus,op,dtype,backend,in_place,size,metric,unit,"
         "better,"
         "value,median,mean,stddev,cv,min,max,n,check,status,reason,reference\n";
  for (const auto& r : records) {
    const Json p = r.value("params", Json::object());
    const Json pl = r.value("placement", Json::object());
    const Json st = r.value("stats", Json::object());
    std::string ref;
    for (const auto& o : r.value("references", Json::array()))
      ref += (ref.empty() ? "" : ";") + o.value("outcome", std::string());
    std::string check;
    if (r.contains("correctness") && r["correctness"].value("checked", false))
      check = r["correctness"].value("passed", false) ? "pass" : "fail";
    std::vector<std::string> c = {str(r.value("record_id", Json())),
                                  str(r["run_id"]),
                                  r.value("experiment", ""),
                                  r.value("workload", ""),
                                  r.value("variant", ""),
                                  str(pl.value("nodes", Json())),
                                  str(pl.value("ranks", Json())),
                                  str(pl.value("gpus", Json())),
                                  str(p.value("op", Json())),
                                  str(p.value("dtype", Json())),
                                  str(p.value("backend", Json())),
                                  str(p.value("in_place", Json())),
                                  r.contains("point") ? str(r["point"].value("size", Json())) : "",
                                  r.value("metric", ""),
                                  r.value("unit", ""),
                                  r.value("better", ""),
                                  str(r.value("value", Json())),
                                  str(st.value("median", Json())),
                                  str(st.value("mean", Json())),
                                  str(st.value("stddev", Json())),
                                  str(st.value("cv", Json())),
                                  str(st.value("min", Json())),
                                  str(st.value("max", Json())),
                                  str(st.value("n", Json())),
                                  check,
                                  r.value("status", ""),
                                  r.value("reason", ""),
                                  ref};
    for (std::size_t i = 0; i < c.size(); ++i) out << (i ? "," : "") << csv_field(c[i]);
    out << "\n";
  }
}

void write_json_lines(std::ostream& out, const Json& records) {
  for (const auto& r : records) out << r.dump() << "\n";
}

std::vector<std::string> reference_failures(const Json& records) {
  std::vector<std::string> out;
  for (const auto& r : records)
    for (const auto& o : r.value("references", Json::array()))
      if (o.value("outcome", "") == "fail") {
        std::string bounds;
        if (o.contains("lower_bound")) bounds += ">= " + fmt(o["lower_bound"].get<double>());
        if (o.contains("upper_bound"))
          bounds += (bounds.empty() ? "" : " and ") + std::string("<= ") + fmt(o["upper_bound"].get<double>());
        out.push_back(r.value("experiment", std::string()) + " run " + str(r["run_id"]) + " " +
                      r.value("variant", std::string()) + " " + size_of(r) + " " + r.value("metric", std::string()) +
                      " = " + fmt(r["value"].get<double>()) + " " + r.value("unit", std::string()) +
                      ", reference wants " + bounds);
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
    return s.empty() ? what(Json{{"workload", v.workload}, {"params", p}}) : s;
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
    out << "what,gpus,size,metric,unit," << csv_field(numerator) << "," << csv_field(denominator)
        << ",ratio,ci95_low,ci95_high,pairs,paired_by\n";
    for (const auto& v : ratios)
      out << csv_field(describe(v)) << "," << v.key.value("gpus", 0) << "," << size(v) << "," << v.metric << ","
          << csv_field(v.unit) << "," << v.numerator << "," << v.denominator << "," << v.ratio << "," << v.ci_low << ","
          << v.ci_high << "," << v.pairs << "," << v.paired_by << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& v : ratios) {
    std::ostringstream ci;
    ci << std::fixed << std::setprecision(3) << "[" << v.ci_low << ", " << v.ci_high << "]";
    std::ostringstream ratio;
    ratio << std::fixed << std::setprecision(3) << v.ratio;
    rows.push_back({describe(v), std::to_string(v.key.value("gpus", 0)), size(v), v.metric, fmt(v.numerator),
                    fmt(v.denominator), ratio.str(), ci.str(),
                    std::to_string(v.pairs) + (v.paired_by == "samples" ? "s" : "r")});
  }
  write_aligned(out, {"what", "gpus", "size", "metric", numerator, denominator, "ratio", "95% CI", "pairs"}, rows,
                {false, true, true, false, true, true, true, true, false});
  if (!ratios.empty())
    out << "pairs: r = interleaved rounds, s = samples of one round in order; ratio = geometric mean of the pairs\n";
}

}  // namespace scalebench
