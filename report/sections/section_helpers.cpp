#include "report/sections/section_helpers.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "analysis/stats.hpp"
#include "catalog/registry.hpp"
#include "record/record_reader.hpp"

namespace scalebench::sections {

const std::set<std::string>& measurement_params() {
  static const std::set<std::string> params = [] {
    std::set<std::string> s(all_measurement_params().begin(), all_measurement_params().end());
    s.insert({"repetitions", "round", "timeout_s"});
    return s;
  }();
  return params;
}

std::string text_of(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return j.get<bool>() ? "yes" : "no";
  if (j.is_null()) return "";
  return j.dump();
}

int workers_of(const Json& r) {
  const RecordPlacement pl = RecordView(r).placement;
  const long long gpus = pl.gpus.value_or(0);
  return static_cast<int>(gpus > 0 ? gpus : pl.ranks.value_or(0));
}

bool on_gpus(const Json& records) {
  for (const auto& r : records)
    if (RecordView(r).placement.gpus.value_or(0) > 0) return true;
  return false;
}

std::string id_safe(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  std::string squeezed;
  for (char c : out)
    if (!(c == '-' && (squeezed.empty() || squeezed.back() == '-'))) squeezed += c;
  while (!squeezed.empty() && squeezed.back() == '-') squeezed.pop_back();
  return squeezed;
}

std::string bounded_id(const std::string& id) {
  if (id.size() <= 100) return id;
  char hash[20];
  std::snprintf(hash, sizeof hash, "-%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(id)));  // stable within a build
  return id.substr(0, 80) + hash;
}

bool is_ok_point(const Json& r) {
  const RecordView v(r);
  return v.ok() && v.value && v.is_figure();
}

Pooled pool(const std::vector<const Json*>& recs) {
  std::vector<double> samples;
  std::vector<double> pct;
  Pooled p;
  for (const Json* r : recs) {
    const RecordView v(*r);
    const auto recorded = v.samples();
    if (recorded && !recorded->empty()) {
      samples.insert(samples.end(), recorded->begin(), recorded->end());
    } else if (v.value) {
      samples.push_back(*v.value);
    }
    if (const auto pop = v.number_at("pct_of_peak")) pct.push_back(*pop);
    if (const auto path = v.text_at("link.path")) p.link = *path;
  }
  if (samples.empty()) return p;
  const Summary s = summarize(samples);
  p.median = s.median, p.min = s.min, p.max = s.max, p.cv = s.cv, p.n = s.n;
  if (!pct.empty()) p.pct_of_peak = median(pct);
  return p;
}

std::string series_name(const std::string& variant, int workers, bool gpus, const std::string& extra) {
  std::string s = variant.empty() ? "default" : variant;
  s += " · " + std::to_string(workers) +
       (gpus ? (workers == 1 ? " GPU" : " GPUs") : (workers == 1 ? " rank" : " ranks"));
  if (!extra.empty()) s += " · " + extra;
  return s;
}

std::vector<std::string> varying_params(const std::vector<const Json*>& recs, const std::set<std::string>& exclude) {
  std::map<std::string, std::set<std::string>> values;
  std::set<std::string> keys;
  for (const Json* r : recs)
    for (const auto& [k, v] : RecordView(*r).params().items()) keys.insert(k);
  for (const Json* r : recs) {
    const Json& params = RecordView(*r).params();
    for (const auto& k : keys) values[k].insert(params.contains(k) ? params[k].dump() : "-");
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : values)
    if (v.size() > 1 && !exclude.count(k) && !measurement_params().count(k)) out.push_back(k);
  return out;
}

std::string params_text(const Json& params, const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys)
    if (params.contains(k)) s += (s.empty() ? "" : " ") + k + "=" + text_of(params[k]);
  return s;
}

std::vector<std::pair<std::string, std::string>> nvlink_pcie_variants(const Json& exp_records) {
  std::map<std::string, std::string> transport;
  std::map<std::string, std::set<std::string>> workloads;
  for (const auto& json : exp_records) {
    const RecordView r(json);
    transport[r.variant] = r.transport;
    workloads[r.variant].insert(r.workload);
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [nv, tn] : transport)
    for (const auto& [pc, tp] : transport)
      if (tn == "nvlink" && tp == "pcie" && workloads[nv] == workloads[pc]) pairs.emplace_back(nv, pc);
  return pairs;
}

Table make_table(const std::string& id, const std::string& title, const std::string& note,
                 std::vector<std::pair<std::string, bool>> columns) {
  Table t;
  t.id = id, t.title = title, t.note = note;
  for (auto& [name, numeric] : columns) {
    t.columns.push_back(name);
    t.numeric.push_back(numeric);
  }
  return t;
}

std::string extrapolation_doubt(int counts, double r2, bool gpus) {
  std::string why;
  if (counts < kMinPlacements)
    why = std::to_string(counts) + " measured " + (gpus ? "GPU" : "rank") + (counts == 1 ? " count" : " counts") +
          " (fewer than " + std::to_string(kMinPlacements) + ")";
  if (!(r2 >= kMinR2)) why += (why.empty() ? "" : ", ") + std::string("R² ") + format_number(r2) + " (under 0.9)";
  return why;
}

std::string extrapolation_warning(const std::string& what, const std::string& doubt, bool gpus) {
  return "Warning: " + what + " is extrapolated from " + doubt +
         ". The report extrapolates without warning only from " + std::to_string(kMinPlacements) +
         " or more measured " + (gpus ? "GPU" : "rank") +
         " counts fitted with R² of at least 0.9: read these dashed lines and @N columns as a guess, and measure "
         "more counts to test them.";
}

std::string spread_text(const Pooled& p) { return format_number(p.min) + " – " + format_number(p.max); }
std::string cv_text(const Pooled& p) { return p.n > 1 ? format_number(100 * p.cv) : ""; }

std::string series_suffix(const Json& r, const std::vector<std::string>& extra_keys) {
  const RecordView v(r);
  const Json& params = v.params();
  std::string s;
  const std::string extra = params_text(params, extra_keys);
  if (!extra.empty()) s += " · " + extra;
  Json point = v.point();
  if (!point.contains("size")) {
    point.erase("gpu"), point.erase("gpus");
    // A varying parameter already named above, with the point's value, is not said twice.
    for (const std::string& k : extra_keys)
      if (point.contains(k) && params.contains(k) && text_of(point[k]) == text_of(params[k])) point.erase(k);
    if (!point.empty()) s += " · " + point.dump();
  }
  return s;
}

bool is_throughput(const Json& r) {
  const RecordView v(r);
  const std::string& unit = v.unit;
  return v.better == "higher" && unit.size() > 2 && unit.substr(unit.size() - 2) == "/s" &&
         unit.find("B/s") == std::string::npos;
}

std::vector<ChartPoint> cdf_points(const Json& cdf) {
  std::vector<ChartPoint> points;
  const Json& percent = cdf.at("percent");
  const Json& ms = cdf.at("ms");
  for (std::size_t i = 0; i < std::min(percent.size(), ms.size()); ++i) {
    const double x = ms[i].get<double>(), y = percent[i].get<double>();
    points.push_back({x, y, y, y});
  }
  return points;
}

Chart arrival_rate_chart(const std::string& id, const std::string& title, const std::string& y_label) {
  Chart c;
  c.id = bounded_id(id);
  c.title = title;
  c.x_label = "queries/s (Poisson arrivals)";
  c.y_label = y_label;
  c.log_y = true;
  return c;
}

Series bound_line(const std::string& name, double y, double from, double to) {
  Series b;
  b.name = name;
  b.dashed = true;
  b.markers = false;
  b.error_bars = false;
  b.points = {{from, y, y, y}, {to, y, y, y}};
  return b;
}

void sort_by_x(Series& s) {
  std::sort(s.points.begin(), s.points.end(), [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
}

}  // namespace scalebench::sections
