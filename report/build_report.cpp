#include "report/build_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "analysis/bus_bandwidth.hpp"
#include "analysis/scaling_model.hpp"
#include "analysis/stats.hpp"
#include "analysis/variant_ratio.hpp"
#include "common/units.hpp"
#include "report/outliers.hpp"
#include "workloads/registry/registry.hpp"

namespace scalebench {

std::string format_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[48];
  const double a = std::fabs(v);
  if (a >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 10)
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.3f", v);
  else if (a >= 1e-3 || a == 0)
    std::snprintf(buf, sizeof buf, "%.4f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

namespace {

// Parameters that only steer how a point is measured, not what is measured: never part of a
// series' name, and never what tells two series apart. Each workload declares its own in the
// registry; the run's repetitions, round and timeout are of the same kind.
const std::set<std::string> kMeasurementParams = [] {
  std::set<std::string> s(all_measurement_params().begin(), all_measurement_params().end());
  s.insert({"repetitions", "round", "timeout_s"});
  return s;
}();
// Parameters that name a collective curve's group (one chart each).
const std::vector<std::string> kCollectiveGroupParams = {"op", "dtype", "reduce_op", "in_place"};

std::string text_of(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return j.get<bool>() ? "yes" : "no";
  if (j.is_null()) return "";
  return j.dump();
}

// "GPUs" on GPU runs, MPI ranks on host memory: the axis a scaling study grows along.
int workers_of(const Json& r) {
  const Json pl = r.value("placement", Json::object());
  const int gpus = pl.value("gpus", 0);
  return gpus > 0 ? gpus : pl.value("ranks", 0);
}

bool on_gpus(const Json& records) {
  for (const auto& r : records)
    if (r.value("placement", Json::object()).value("gpus", 0) > 0) return true;
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

// A chart id short enough for a file name (every file system takes 255 bytes): long ids keep
// their first 80 characters and a hash of the whole, so they stay distinct.
std::string bounded_id(const std::string& id) {
  if (id.size() <= 100) return id;
  char hash[20];
  std::snprintf(hash, sizeof hash, "-%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(id)));  // stable within a build
  return id.substr(0, 80) + hash;
}

bool is_ok_point(const Json& r) {
  return r.value("status", "") == "ok" && r.contains("value") && r["value"].is_number() &&
         r.value("metric", "") != "run";
}

// The samples of several records of one point (rounds, repeated runs) pooled: median and spread.
struct Pooled {
  double median = 0, min = 0, max = 0, cv = 0;
  std::size_t n = 0;
  double pct_of_peak = -1;
  std::string link;
};
Pooled pool(const std::vector<const Json*>& recs) {
  std::vector<double> samples;
  std::vector<double> pct;
  Pooled p;
  for (const Json* r : recs) {
    const Json st = r->value("stats", Json::object());
    if (st.contains("samples") && st["samples"].is_array() && !st["samples"].empty()) {
      for (const auto& s : st["samples"])
        if (s.is_number()) samples.push_back(s.get<double>());
    } else {
      samples.push_back((*r)["value"].get<double>());
    }
    if (r->contains("pct_of_peak") && (*r)["pct_of_peak"].is_number()) pct.push_back((*r)["pct_of_peak"].get<double>());
    if (r->contains("link") && (*r)["link"].is_object()) p.link = (*r)["link"].value("path", "");
  }
  if (samples.empty()) return p;
  const Summary s = summarize(samples);
  p.median = s.median, p.min = s.min, p.max = s.max, p.cv = s.cv, p.n = s.n;
  if (!pct.empty()) p.pct_of_peak = median(pct);
  return p;
}

// A name for what differs between series of one group: "variant · 4 GPUs · cuda_graph=yes".
std::string series_name(const std::string& variant, int workers, bool gpus, const std::string& extra) {
  std::string s = variant.empty() ? "default" : variant;
  s += " · " + std::to_string(workers) +
       (gpus ? (workers == 1 ? " GPU" : " GPUs") : (workers == 1 ? " rank" : " ranks"));
  if (!extra.empty()) s += " · " + extra;
  return s;
}

// Parameters whose values differ between the records of a group (besides the group's own keys).
std::vector<std::string> varying_params(const std::vector<const Json*>& recs, const std::set<std::string>& exclude) {
  std::map<std::string, std::set<std::string>> values;
  std::set<std::string> keys;
  for (const Json* r : recs)
    for (auto it = (*r)["params"].begin(); it != (*r)["params"].end(); ++it) keys.insert(it.key());
  for (const Json* r : recs)
    for (const auto& k : keys) values[k].insert((*r)["params"].contains(k) ? (*r)["params"][k].dump() : "-");
  std::vector<std::string> out;
  for (const auto& [k, v] : values)
    if (v.size() > 1 && !exclude.count(k) && !kMeasurementParams.count(k)) out.push_back(k);
  return out;
}

std::string params_text(const Json& params, const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys)
    if (params.contains(k)) s += (s.empty() ? "" : " ") + k + "=" + text_of(params[k]);
  return s;
}

// One curve: a variant at a worker count (and whatever else varies), size -> records.
struct Curve {
  std::string variant, extra;
  int workers = 0;
  std::map<double, std::vector<const Json*>> by_size;
};

struct CollectiveGroup {
  std::string op, title, id;
  std::map<std::string, Curve> curves;  // keyed by series name
};

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

std::string spread_text(const Pooled& p) { return format_number(p.min) + " – " + format_number(p.max); }
std::string cv_text(const Pooled& p) { return p.n > 1 ? format_number(100 * p.cv) : ""; }

// ---------------------------------------------------------------------------------------------
// Collectives: busbw against size per group, the largest size per curve, busbw against GPU
// count with the alpha-beta model's continuation.
void add_collectives(Section& sec, const std::vector<const Json*>& recs, bool gpus, const ReportOptions& opt) {
  std::vector<const Json*> bw;
  for (const Json* r : recs)
    if ((*r)["metric"] == "busbw" && (*r)["params"].contains("op") && (*r).contains("point") &&
        (*r)["point"].contains("size"))
      bw.push_back(r);
  if (bw.empty()) return;
  std::set<std::string> group_keys(kCollectiveGroupParams.begin(), kCollectiveGroupParams.end());
  group_keys.insert("backend");  // a variant running another program may name no backend
  const auto extra_keys = varying_params(bw, group_keys);

  // "all_reduce float32 sum in-place": the chart a collective point belongs to.
  auto group_title = [](const Json& p) {
    std::string title;
    for (const auto& k : kCollectiveGroupParams)
      if (p.contains(k)) {
        if (k == "in_place") {
          if (p[k].is_boolean() && p[k].get<bool>()) title += " in-place";
        } else if (k != "reduce_op" || text_of(p["op"]) == "all_reduce" || text_of(p["op"]) == "reduce" ||
                   text_of(p["op"]) == "reduce_scatter") {
          title += (title.empty() ? "" : " ") + text_of(p[k]);
        }
      }
    return title;
  };
  auto name_of = [&](const Json& r) {
    return series_name(r.value("variant", ""), workers_of(r), gpus, params_text(r["params"], extra_keys));
  };
  std::map<std::string, CollectiveGroup> groups;
  for (const Json* r : bw) {
    const Json& p = (*r)["params"];
    const std::string title = group_title(p);
    auto& g = groups[title];
    g.title = title, g.op = text_of(p["op"]), g.id = bounded_id(id_safe(title));
    auto& c = g.curves[name_of(*r)];
    c.variant = r->value("variant", ""), c.extra = params_text(p, extra_keys), c.workers = workers_of(*r);
    c.by_size[(*r)["point"]["size"].get<double>()].push_back(r);
  }
  // The time records of the same points (chart, curve, size), indexed once for the alpha-beta fits.
  std::map<std::tuple<std::string, std::string, double>, std::vector<const Json*>> times_at;
  for (const Json* r : recs)
    if ((*r)["metric"] == "time" && (*r)["params"].contains("op") && (*r).contains("point") &&
        (*r)["point"].contains("size"))
      times_at[{group_title((*r)["params"]), name_of(*r), (*r)["point"]["size"].get<double>()}].push_back(r);

  Table largest = make_table(
      sec.id + "-busbw-largest", "Bus bandwidth at the largest size",
      "busbw as nccl-tests defines it (GB/s = 1e9 B/s); median of all samples of all rounds, min – max of the "
      "same samples, cv = stddev/mean; % of peak of the link the traffic took",
      {{"collective", false},
       {"series", false},
       {"size", true},
       {"busbw GB/s", true},
       {"min – max", true},
       {"cv %", true},
       {"samples", true},
       {"link", false},
       {"% of peak", true}});
  Table model = make_table(
      sec.id + "-alpha-beta", "Alpha-beta model per collective and GPU count",
      "time(S) = alpha + S·beta fitted on relative error over every size; bus bandwidth = busbw factor / beta. "
      "busbw @N: the measured busbw at the largest size times model(N) / model(measured count); it assumes a ring "
      "whose added GPUs join through links as "
      "fast as the measured ones, with the same latency per step (a lower bound inside one NVLink domain; "
      "across nodes the network's bandwidth takes beta's place)",
      {{"collective", false}, {"series", false}, {"alpha µs", true}, {"bus bandwidth GB/s", true}, {"R²", true}});
  for (int n : opt.extrapolate_to) {
    model.columns.push_back("busbw @" + std::to_string(n));
    model.numeric.push_back(true);
  }

  for (auto& [title, g] : groups) {
    Chart chart;
    chart.id = sec.id + "-busbw-" + g.id;
    chart.title = sec.title + ": " + title + " bus bandwidth by message size";
    chart.x_label = "message size", chart.y_label = "busbw (GB/s)";
    chart.log_x = true, chart.x_bytes = true;
    // busbw at the largest size against the worker count, per variant (and extra params).
    std::map<std::string, std::map<int, Pooled>> by_workers;
    std::map<std::string, std::map<int, AlphaBetaFit>> fits;
    double common_size = 0;
    for (auto& [name, c] : g.curves) {
      Series s;
      s.name = name;
      for (auto& [size, rs] : c.by_size) {
        Pooled p = pool(rs);
        s.points.push_back({size, p.median, p.min, p.max});
      }
      // One rank moves nothing between ranks (all_reduce's busbw factor is 0 there): no curve.
      if (std::any_of(s.points.begin(), s.points.end(), [](const ChartPoint& p) { return p.y > 0; }))
        chart.series.push_back(s);
      const double top = c.by_size.rbegin()->first;
      common_size = std::max(common_size, top);
      Pooled p = pool(c.by_size.rbegin()->second);
      largest.rows.push_back({title, name, format_size(static_cast<std::uint64_t>(top)), format_number(p.median),
                              spread_text(p), cv_text(p), std::to_string(p.n), p.link,
                              p.pct_of_peak >= 0 ? format_number(p.pct_of_peak) : ""});
      // Fit alpha-beta on the time records of the same points.
      std::vector<double> sizes, times;
      for (auto& [size, rs] : c.by_size) {
        auto found = times_at.find({title, name, size});
        if (found == times_at.end()) continue;
        sizes.push_back(size);
        times.push_back(pool(found->second).median);
      }
      const std::string line = c.variant + (c.extra.empty() ? "" : " · " + c.extra);
      if (c.workers >= 2) {
        AlphaBetaFit fit = fit_alpha_beta(sizes, times);
        if (fit.ok()) {
          fits[line][c.workers] = fit;
          std::vector<std::string> row = {
              title, name, format_number(fit.alpha_us),
              format_number(analysis::busbw_factor(analysis::parse_op(g.op), c.workers) / fit.beta_us_per_byte / 1e3),
              format_number(fit.r2)};
          // The model gives the shape; the measurement at the largest size anchors it.
          const double at_fit = predict_busbw(fit, g.op, c.workers, c.workers, top);
          for (int n : opt.extrapolate_to)
            row.push_back(format_number(p.median * predict_busbw(fit, g.op, c.workers, n, top) / at_fit));
          model.rows.push_back(row);
        }
      }
      by_workers[line][c.workers] = p;
    }
    sec.charts.push_back(chart);

    // busbw at the largest size against GPUs, measured and modelled (only with 2+ counts).
    bool several = false;
    for (auto& [line, m] : by_workers) several |= m.size() >= 2 || !fits[line].empty();
    if (!several || ring_steps(g.op, 2) == 0) continue;
    Chart scale;
    scale.id = sec.id + "-busbw-scaling-" + g.id;
    scale.title = sec.title + ": " + title + " busbw at " + format_size(static_cast<std::uint64_t>(common_size)) +
                  " by " + (gpus ? "GPU" : "rank") + " count, with the alpha-beta model's continuation";
    scale.x_label = gpus ? "GPUs" : "ranks", scale.y_label = "busbw (GB/s)";
    scale.log_x = true;
    for (auto& [line, m] : by_workers) {
      Series s;
      s.name = line + " measured";
      for (auto& [w, p] : m)
        if (w >= 2) s.points.push_back({double(w), p.median, p.min, p.max});
      if (!s.points.empty()) scale.series.push_back(s);
      if (fits[line].empty()) continue;
      const auto& [n_fit, fit] = *fits[line].rbegin();  // the largest measured count
      Series model_line;
      model_line.name = line + " model";
      model_line.dashed = true, model_line.markers = false, model_line.error_bars = false;
      const double anchor = m.count(n_fit) ? m[n_fit].median / predict_busbw(fit, g.op, n_fit, n_fit, common_size) : 1;
      for (int n = n_fit; n <= opt.extrapolate_to.back(); n *= 2) {
        const double b = anchor * predict_busbw(fit, g.op, n_fit, n, common_size);
        model_line.points.push_back({double(n), b, b, b});
      }
      scale.series.push_back(model_line);
    }
    sec.charts.push_back(scale);
  }
  sec.tables.push_back(largest);
  if (!model.rows.empty()) sec.tables.push_back(model);
}

// ---------------------------------------------------------------------------------------------
// NVLink against PCIe: every pair of variants whose transports are nvlink and pcie and that ran
// the same workload, paired by rounds (variant_ratio.hpp).
void add_transport_ratios(Section& sec, const Json& exp_records) {
  std::map<std::string, std::string> transport;
  std::map<std::string, std::set<std::string>> workloads;
  for (const auto& r : exp_records) {
    transport[r.value("variant", "")] = r.value("transport", "");
    workloads[r.value("variant", "")].insert(r.value("workload", ""));
  }
  Table t = make_table(sec.id + "-nvlink-vs-pcie", "NVLink vs PCIe",
                       "busbw ratio of the nvlink variant over the pcie one: geometric mean over rounds run "
                       "interleaved (A B A B ...), 95% confidence interval from Student's t; rows at the smallest, "
                       "1 MiB and largest sizes (the chart has every size)",
                       {{"variants", false},
                        {"collective", false},
                        {"GPUs", true},
                        {"size", true},
                        {"nvlink GB/s", true},
                        {"pcie GB/s", true},
                        {"ratio", true},
                        {"95% CI", true},
                        {"pairs", true}});
  for (const auto& [nv, tn] : transport) {
    if (tn != "nvlink") continue;
    for (const auto& [pc, tp] : transport) {
      if (tp != "pcie" || workloads[nv] != workloads[pc]) continue;
      const auto ratios = variant_ratios(exp_records, nv, pc, "busbw");
      if (ratios.empty()) continue;
      Chart chart;
      chart.id = bounded_id(sec.id + "-ratio-" + id_safe(nv + "-" + pc));
      chart.title = sec.title + ": busbw " + nv + " / " + pc + " by message size";
      chart.x_label = "message size", chart.y_label = "busbw ratio";
      chart.log_x = true, chart.x_bytes = true;
      // One series per collective and GPU count; table rows at three sizes of each.
      std::map<std::string, Series> series;
      std::map<std::string, std::vector<const VariantRatio*>> rows;
      for (const auto& v : ratios) {
        const Json& p = v.key["params"];
        const std::string op = p.value("op", "");
        const int w = v.key.value("gpus", 0) > 0 ? v.key["gpus"].get<int>() : v.key.value("ranks", 0);
        if (w < 2) continue;  // one GPU has no traffic between GPUs
        const std::string name = op + (p.value("in_place", false) ? " in-place" : "") + " · " + std::to_string(w);
        auto& s = series[name];
        s.name = name;
        s.points.push_back({v.key["point"].get<double>(), v.ratio, v.ci_low, v.ci_high});
        rows[name].push_back(&v);
      }
      for (auto& [name, s] : series) {
        std::sort(s.points.begin(), s.points.end(), [](auto& a, auto& b) { return a.x < b.x; });
        chart.series.push_back(s);
        auto& rs = rows[name];
        std::sort(rs.begin(), rs.end(), [](auto* a, auto* b) { return a->key["point"] < b->key["point"]; });
        std::set<const VariantRatio*> pick = {rs.front(), rs.back()};
        const VariantRatio* mib = rs.front();
        for (auto* v : rs)
          if (std::fabs(std::log2(v->key["point"].get<double>() / 1048576.0)) <
              std::fabs(std::log2(mib->key["point"].get<double>() / 1048576.0)))
            mib = v;
        pick.insert(mib);
        for (auto* v : rs) {
          if (!pick.count(v)) continue;
          const Json& p = v->key["params"];
          t.rows.push_back({nv + " / " + pc, p.value("op", "") + (p.value("in_place", false) ? " in-place" : ""),
                            name.substr(name.rfind(' ') + 1), format_size(v->key["point"].get<std::uint64_t>()),
                            format_number(v->numerator), format_number(v->denominator), format_number(v->ratio),
                            format_number(v->ci_low) + " – " + format_number(v->ci_high), std::to_string(v->pairs)});
        }
      }
      if (!chart.series.empty()) sec.charts.push_back(chart);
    }
  }
  if (!t.rows.empty()) sec.tables.push_back(t);
}

// What tells a figure's series apart besides its workload: the parameters that vary in the
// group, and its point without the GPU it ran on (each GPU's record of one run is one series).
// A sized point (a collective's curve) is one series over its sizes, so the size stays out.
std::string series_suffix(const Json& r, const std::vector<std::string>& extra_keys) {
  std::string s;
  const std::string extra = params_text(r["params"], extra_keys);
  if (!extra.empty()) s += " · " + extra;
  Json point = r.value("point", Json::object());
  if (point.is_object() && !point.contains("size")) {
    point.erase("gpu"), point.erase("gpus");
    // A varying parameter already named above, with the point's value, is not said twice.
    for (const std::string& k : extra_keys)
      if (point.contains(k) && r["params"].contains(k) && text_of(point[k]) == text_of(r["params"][k])) point.erase(k);
    if (!point.empty()) s += " · " + point.dump();
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Throughput scaling (images/s, samples/s, TFLOP/s ...: higher-is-better figures that are not a
// bandwidth): speedup and efficiency against the smallest worker count, the ideal line, and the
// throughput model's continuation.
constexpr std::size_t kMaxScalingCharts = 24;

bool is_throughput(const Json& r) {
  const std::string unit = r.value("unit", "");
  return r.value("better", "") == "higher" && unit.size() > 2 && unit.substr(unit.size() - 2) == "/s" &&
         unit.find("B/s") == std::string::npos;
}

// DLBS's terms: weak scaling keeps the per-GPU batch, strong scaling keeps the global batch.
std::string scaling_kind(const std::map<int, std::vector<const Json*>>& by_workers) {
  for (const char* key : {"batch_size", "batch", "global_batch"}) {
    std::map<int, double> batch;
    for (auto& [w, rs] : by_workers)
      if ((*rs.front())["params"].contains(key) && (*rs.front())["params"][key].is_number())
        batch[w] = (*rs.front())["params"][key].get<double>();
    if (batch.size() != by_workers.size() || batch.size() < 2) continue;
    bool same = true, per_total = true;
    const auto& [w0, b0] = *batch.begin();
    for (auto& [w, b] : batch) {
      same &= b == b0;
      per_total &= std::fabs(b * w - b0 * w0) < 1e-9 * b0 * w0;
    }
    if (std::string(key) == "global_batch") return same ? "strong" : "weak";
    if (same) return "weak";
    if (per_total) return "strong";
  }
  return "weak";  // the same parameters on every worker: the work per worker is fixed
}

// A figure per GPU (images/s/gpu) rather than a total: its speedup is value x count.
bool per_worker(const Json& r) {
  std::string m = r.value("metric", "") + " " + r.value("unit", "");
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* k : {"per_gpu", "per-gpu", "per_rank", "per_worker", "/gpu"})
    if (m.find(k) != std::string::npos) return true;
  return false;
}

void add_throughput_scaling(Section& sec, const std::vector<const Json*>& recs, bool gpus, const ReportOptions& opt) {
  std::vector<const Json*> tp;
  for (const Json* r : recs) {
    if (!is_throughput(*r)) continue;
    // The compute workloads (gemm, conv, rnn) report each GPU and, with several, the total: the
    // total is the run's figure, and a one-GPU run's GPU 0 is its total.
    const Json point = r->value("point", Json::object());
    if (point.contains("gpu") && point["gpu"].is_number() && workers_of(*r) > 1) continue;
    tp.push_back(r);
  }
  if (tp.empty()) return;
  const auto extra_keys = varying_params(tp, {"batch_size", "batch", "global_batch"});
  // chart: workload metric · extra params; inside it variant -> workers -> records.
  std::map<std::string, std::map<std::string, std::map<int, std::vector<const Json*>>>> groups;
  std::map<std::string, std::string> unit_of;
  std::map<std::string, bool> per_gpu;
  for (const Json* r : tp) {
    std::string metric = (*r)["metric"].get<std::string>();
    if (metric == "throughput_total") metric = "throughput";
    const std::string key = (*r)["workload"].get<std::string>() + " " + metric + series_suffix(*r, extra_keys);
    groups[key][r->value("variant", "default")][workers_of(*r)].push_back(r);
    unit_of[key] = r->value("unit", "");
    per_gpu[key] = per_worker(*r);
  }
  const std::string axis = gpus ? "GPUs" : "ranks", one = gpus ? "GPU" : "rank";
  Table t = make_table(
      sec.id + "-scaling", "Throughput scaling",
      "speedup = total throughput / total at the smallest count (a per-" + one +
          " figure times the count); efficiency = speedup / (count / smallest count); a variant without a run at "
          "the smallest count (one " +
          one + " crosses no link) takes that of another variant; weak scaling keeps the work per " + one +
          ", strong scaling the total (as DLBS defines them)",
      {{"series", false},
       {axis, true},
       {"throughput", true},
       {"unit", false},
       {"min – max", true},
       {"cv %", true},
       {"speedup", true},
       {"efficiency %", true},
       {"scaling", false}});
  Table m = make_table(sec.id + "-scaling-model", "Extrapolated scaling efficiency",
                       "per-" + one +
                           " time per item t(N) = t1 + c·2(N−1)/N + d·(N−1): constant compute plus the exposed part "
                           "of a ring all-reduce of a fixed gradient size (bandwidth c, latency d), fitted to the "
                           "measured counts; assumes links as fast as the measured ones at every size",
                       {{"series", false}, {"fitted on", false}});
  for (int n : opt.extrapolate_to) {
    m.columns.push_back("eff. % @" + std::to_string(n));
    m.numeric.push_back(true);
  }
  // A chart per point is readable for a handful of points (a training run's images/s); a
  // compute sweep has hundreds (every layer, pass and precision): those get the tables only.
  const bool draw = groups.size() <= kMaxScalingCharts;
  if (!draw) t.note += "; " + std::to_string(groups.size()) + " points: tables only, no charts";
  for (auto& [key, variants] : groups) {
    const bool pg = per_gpu[key];
    // The smallest count of any variant, and its figure: the base of every variant's speedup.
    int w0 = INT32_MAX;
    std::string base_variant;
    for (auto& [v, by_w] : variants)
      if (by_w.begin()->first < w0) w0 = by_w.begin()->first, base_variant = v;
    const Pooled base_p = pool(variants[base_variant][w0]);
    const double base_total = base_p.median * (pg ? w0 : 1);
    Chart c;
    c.id = bounded_id(sec.id + "-throughput-" + id_safe(key));
    c.title = sec.title + ": " + key + " by " + one + " count";
    c.x_label = axis, c.y_label = key.substr(0, key.find(" · ")) + " (" + unit_of[key] + ")";
    c.log_x = true, c.log_y = !pg;
    const int top = opt.extrapolate_to.back();
    bool any_scaling = false;
    for (auto& [variant, by_w] : variants) {
      const std::string name = key + " · " + variant;
      const bool borrowed = !by_w.count(w0);
      const std::string kind =
          scaling_kind(by_w) + (borrowed ? " (base: " + base_variant + " at " + std::to_string(w0) + ")" : "");
      std::vector<int> ws;
      std::vector<double> totals;
      if (borrowed) ws.push_back(w0), totals.push_back(base_total);
      Series measured;
      measured.name = variant;
      for (auto& [w, rs] : by_w) {
        const Pooled p = pool(rs);
        const double total = p.median * (pg ? w : 1);
        const double speedup = base_total > 0 ? total / base_total : 0;
        t.rows.push_back({name, std::to_string(w), format_number(p.median), unit_of[key], spread_text(p), cv_text(p),
                          format_number(speedup), format_number(100 * speedup / (double(w) / w0)), kind});
        ws.push_back(w), totals.push_back(total);
        measured.points.push_back({double(w), p.median, p.min, p.max});
      }
      c.series.push_back(measured);
      if (ws.size() < 2) continue;
      any_scaling = true;
      const ThroughputModel tm = fit_throughput(ws, totals);
      if (!tm.ok()) continue;
      std::vector<std::string> row = {name, std::to_string(ws.size()) + " counts, " + std::to_string(ws.front()) + "–" +
                                                std::to_string(ws.back()) + " " + axis};
      for (int n : opt.extrapolate_to) row.push_back(format_number(100 * predict_efficiency(tm, n)));
      m.rows.push_back(row);
      Series model;
      model.name = variant + " model";
      model.dashed = true, model.markers = model.error_bars = false;
      for (int n = by_w.rbegin()->first; n <= top; n *= 2) {
        const double v = predict_throughput(tm, n) / (pg ? n : 1);
        model.points.push_back({double(n), v, v, v});
      }
      c.series.push_back(model);
    }
    if (!any_scaling) continue;
    Series ideal;
    ideal.name = "ideal (from " + base_variant + " at " + std::to_string(w0) + ")";
    ideal.dashed = true, ideal.markers = ideal.error_bars = false;
    for (int n = w0; n <= top; n *= 2) {
      const double v = pg ? base_p.median : base_p.median * n / w0;
      ideal.points.push_back({double(n), v, v, v});
    }
    c.series.push_back(ideal);
    if (draw) sec.charts.push_back(c);
  }
  sec.tables.push_back(t);
  if (!m.rows.empty()) sec.tables.push_back(m);
}

// ---------------------------------------------------------------------------------------------
// Where a multi-GPU training step loses against one GPU. Each rank's time record carries its step
// with the all-reduces (details.step_ms) and the same step timed without them in the same run
// (details.step_ms_without_allreduce). The slowest rank's step without communication, against
// the 1-GPU step, is what the GPUs cost before any communication (one slow GPU, power and heat
// beside busy neighbours); the rest of the loss is communication. A node's acceptance turns on
// which of the two it is.
struct RunSplit {
  double step = 0;                      // the slowest rank's step, ms
  double alone_min = 0, alone_max = 0;  // each rank's step without all-reduce, ms
  long long slowest = -1;               // the rank (point.gpu) with alone_max
};

void add_training_split(Section& sec, const std::vector<const Json*>& recs, bool gpus) {
  auto number = [](const Json& d, const char* k) {
    return d.is_object() && d.contains(k) && d[k].is_number() ? d[k].get<double>() : -1.0;
  };
  std::vector<const Json*> timed;
  bool any_split = false;
  for (const Json* r : recs) {
    if (r->value("metric", "") != "time" || !r->contains("details")) continue;
    if (number((*r)["details"], "step_ms") <= 0) continue;
    timed.push_back(r);
    any_split |= number((*r)["details"], "step_ms_without_allreduce") > 0;
  }
  if (!any_split) return;
  const auto extra_keys = varying_params(timed, {"batch_size", "batch", "global_batch"});
  // series (workload, varying params, point without its GPU) -> variant -> workers -> run -> split
  std::map<std::string, std::map<std::string, std::map<int, std::map<std::string, RunSplit>>>> groups;
  for (const Json* r : timed) {
    const std::string key = (*r)["workload"].get<std::string>() + series_suffix(*r, extra_keys);
    const Json point = r->value("point", Json::object());
    const long long rank =
        point.contains("gpu") && point["gpu"].is_number_integer() ? point["gpu"].get<long long>() : 0;
    const int w = workers_of(*r);
    const Json& d = (*r)["details"];
    const double alone = number(d, "step_ms_without_allreduce");
    if (w > 1 && alone <= 0) continue;  // a multi-GPU record without the split says nothing here
    RunSplit& s = groups[key][r->value("variant", "default")][w][r->value("run_id", Json()).dump()];
    s.step = std::max(s.step, number(d, "step_ms"));
    if (w > 1) {
      if (s.slowest < 0 || alone > s.alone_max) s.alone_max = alone, s.slowest = rank;
      s.alone_min = s.alone_min > 0 ? std::min(s.alone_min, alone) : alone;
    }
  }
  const std::string one = gpus ? "GPU" : "rank";
  Table t = make_table(
      sec.id + "-training-split", "Where the multi-" + one + " step loses",
      "per run, the slowest rank's step with its all-reduces and each rank's step without them, timed in the same "
      "run; medians over runs. beside the others = the slowest rank alone − the 1-" +
          one + " step (a slower " + one +
          ", power or heat); communication = the step − the slowest rank alone; efficiency = the 1-" + one +
          " step / the step; against the ranks alone = the slowest rank alone / the step (100% is a link that costs "
          "nothing)",
      {{"series", false},
       {gpus ? "GPUs" : "ranks", true},
       {"runs", true},
       {"1-" + one + " step ms", true},
       {"step ms", true},
       {"each rank alone ms", true},
       {"slowest " + one, true},
       {"beside the others ms", true},
       {"communication ms", true},
       {"efficiency %", true},
       {"against the ranks alone %", true}});
  for (auto& [key, variants] : groups) {
    // The 1-GPU step: the variant's own, else any variant's (one GPU crosses no link).
    std::map<std::string, double> base_of;
    std::vector<double> any_base;
    for (auto& [v, by_w] : variants) {
      if (!by_w.count(1)) continue;
      std::vector<double> steps;
      for (auto& [run, s] : by_w.at(1)) steps.push_back(s.step);
      base_of[v] = median(steps);
      any_base.insert(any_base.end(), steps.begin(), steps.end());
    }
    if (any_base.empty()) continue;
    for (auto& [variant, by_w] : variants) {
      const double base = base_of.count(variant) ? base_of[variant] : median(any_base);
      for (auto& [w, runs] : by_w) {
        if (w < 2) continue;
        std::vector<double> step, lo, hi;
        std::map<long long, int> slowest;
        for (auto& [run, s] : runs) {
          step.push_back(s.step), lo.push_back(s.alone_min), hi.push_back(s.alone_max);
          ++slowest[s.slowest];
        }
        const double st = median(step), alone = median(hi);
        // The rank slowest alone in most runs: one GPU that keeps being it is the node's problem.
        const auto most = std::max_element(slowest.begin(), slowest.end(),
                                           [](const auto& a, const auto& b) { return a.second < b.second; });
        t.rows.push_back(
            {key + " · " + variant + (base_of.count(variant) ? "" : " (1-" + one + " step of another variant)"),
             std::to_string(w), std::to_string(runs.size()), format_number(base), format_number(st),
             format_number(median(lo)) + " – " + format_number(alone),
             std::to_string(most->first) +
                 (runs.size() > 1 ? " (" + std::to_string(most->second) + " of " + std::to_string(runs.size()) + ")"
                                  : ""),
             format_number(alone - base), format_number(st - alone), format_number(100 * base / st),
             format_number(100 * alone / st)});
      }
    }
  }
  if (!t.rows.empty()) sec.tables.push_back(t);
}

// ---------------------------------------------------------------------------------------------
// Every other figure (copy bandwidths, command figures, ...), one row per point and metric.
void add_other_figures(Section& sec, const std::vector<const Json*>& recs) {
  std::map<std::string, std::vector<const Json*>> rows;
  std::vector<std::string> order;
  for (const Json* r : recs) {
    const std::string metric = (*r)["metric"];
    const bool collective_point = (*r)["params"].contains("op") && (*r).contains("point") &&
                                  (*r)["point"].contains("size") &&
                                  (metric == "busbw" || metric == "algbw" || metric == "time");
    if (collective_point || is_throughput(*r)) continue;
    std::string what = r->value("workload", "");
    const Json& p = (*r)["params"];
    for (auto it = p.begin(); it != p.end(); ++it)
      if (!kMeasurementParams.count(it.key()) && it.key() != "backend" && (it->is_string() || it->is_boolean()))
        what += " " + it.key() + "=" + text_of(*it);
    if ((*r).contains("point"))
      for (auto it = (*r)["point"].begin(); it != (*r)["point"].end(); ++it)
        what += " " + it.key() + "=" +
                (it.key() == "size" && it->is_number_unsigned() ? format_size(it->get<std::uint64_t>()) : text_of(*it));
    const std::string key = what + "\x1f" + r->value("variant", "") + "\x1f" + std::to_string(workers_of(*r)) + "\x1f" +
                            metric + "\x1f" + r->value("unit", "");
    if (!rows.count(key)) order.push_back(key);
    rows[key].push_back(r);
  }
  if (rows.empty()) return;
  Table t = make_table(sec.id + "-figures", "Other figures",
                       "median of all samples of all rounds, min – max of the same samples",
                       {{"what", false},
                        {"variant", false},
                        {"workers", true},
                        {"metric", false},
                        {"median", true},
                        {"unit", false},
                        {"min – max", true},
                        {"cv %", true},
                        {"% of peak", true}});
  for (const auto& key : order) {
    std::vector<std::string> f;
    for (std::size_t s = 0, e; s <= key.size(); s = e + 1) {
      e = key.find('\x1f', s);
      if (e == std::string::npos) e = key.size();
      f.push_back(key.substr(s, e - s));
    }
    const Pooled p = pool(rows[key]);
    t.rows.push_back({f[0], f[1], f[2], f[3], format_number(p.median), f[4], spread_text(p), cv_text(p),
                      p.pct_of_peak >= 0 ? format_number(p.pct_of_peak) : ""});
  }
  sec.tables.push_back(t);
}

void add_outliers(Section& sec, const Json& exp_records) {
  const auto outliers = find_node_outliers(exp_records);
  if (outliers.empty()) return;
  Table t = make_table(sec.id + "-outliers", "Nodes off their peers",
                       "a node whose figure is worse than the median of the nodes that measured the same point by "
                       "more than 10%",
                       {{"host", false},
                        {"metric", false},
                        {"point", false},
                        {"value", true},
                        {"unit", false},
                        {"group median", true},
                        {"deviation %", true},
                        {"nodes", true}});
  for (const auto& o : outliers) {
    std::string point = o.key.value("workload", "") + " " + o.key.value("variant", "");
    const Json params = o.key.value("params", Json::object());
    for (const char* k : {"op", "dtype", "precision"})
      if (params.contains(k) && params[k].is_string()) point += " " + params[k].get<std::string>();
    const Json pt = o.key.value("point", Json());
    if (pt.is_object() && pt.contains("size") && pt["size"].is_number_unsigned())
      point += " " + format_size(pt["size"].get<std::uint64_t>());
    point += " · " + std::to_string(o.key.value("gpus", 0) > 0 ? o.key.value("gpus", 0) : o.key.value("ranks", 0));
    t.rows.push_back({o.host, o.metric, point, format_number(o.value), o.unit, format_number(o.group_median),
                      format_number(o.deviation_pct), std::to_string(o.group_size)});
  }
  sec.tables.push_back(t);
}

// GPUs their power or thermal limit held down while they measured: the share of each run's
// measuring time (details.clock_limits of its per-GPU time records, summed over the points) that
// NVML counted the clocks below the application clocks. Runs under 1% are left out.
void add_clock_limits(Section& sec, const std::vector<const Json*>& recs) {
  struct Sum {
    double window = 0, power = 0, thermal = 0;
    bool has_power = false, has_thermal = false;
    const Json* first = nullptr;
  };
  // (run id as a number, so that run 10 follows run 9; its text; GPU) -> sums
  std::map<std::tuple<long long, std::string, long long>, Sum> by_gpu;
  for (const Json* r : recs) {
    if (r->value("metric", "") != "time") continue;
    const Json* d = r->contains("details") ? &(*r)["details"] : nullptr;
    if (!d || !d->is_object() || !d->contains("clock_limits") || !(*d)["clock_limits"].is_object()) continue;
    const Json& c = (*d)["clock_limits"];
    if (!c.contains("window_ms") || !c["window_ms"].is_number()) continue;
    const Json pt = r->value("point", Json::object());
    const long long gpu =
        pt.is_object() && pt.contains("gpu") && pt["gpu"].is_number_integer() ? pt["gpu"].get<long long>() : 0;
    const Json id = r->value("run_id", Json());
    Sum& s =
        by_gpu[{id.is_number_integer() ? id.get<long long>() : std::numeric_limits<long long>::max(), id.dump(), gpu}];
    if (!s.first) s.first = r;
    s.window += c["window_ms"].get<double>();
    if (c.contains("power_capped_ms") && c["power_capped_ms"].is_number())
      s.power += c["power_capped_ms"].get<double>(), s.has_power = true;
    if (c.contains("thermal_capped_ms") && c["thermal_capped_ms"].is_number())
      s.thermal += c["thermal_capped_ms"].get<double>(), s.has_thermal = true;
  }
  Table t = make_table(
      sec.id + "-clock-limits", "GPUs held down by their power or thermal limit",
      "share of each run's measuring time (set-up, warm-up and timed samples, summed over its "
      "points) that NVML counted the GPU's clocks below the application clocks; a figure taken "
      "there is limited by the GPU's power or cooling, not by the software; a GPU under 1% in a run is left out",
      {{"run", true},
       {"workload", false},
       {"variant", false},
       {"workers", true},
       {"GPU", true},
       {"host", false},
       {"measured s", true},
       {"power-capped %", true},
       {"thermal-capped %", true}});
  for (const auto& [key, s] : by_gpu) {
    const auto& [id_number, id, gpu] = key;
    if (s.window <= 0) continue;
    const double power = 100 * s.power / s.window, thermal = 100 * s.thermal / s.window;
    if (power < 1 && thermal < 1) continue;
    const Json& r = *s.first;
    std::string host;
    const Json pl = r.value("placement", Json::object());
    if (pl.contains("devices") && pl["devices"].is_array())
      for (const Json& dev : pl["devices"])
        if (dev.is_object() && dev.value("rank", -1LL) == gpu) host = dev.value("host", "");
    t.rows.push_back({id, r.value("workload", ""), r.value("variant", ""), std::to_string(workers_of(r)),
                      std::to_string(gpu), host, format_number(s.window / 1e3), s.has_power ? format_number(power) : "",
                      s.has_thermal ? format_number(thermal) : ""});
  }
  if (!t.rows.empty()) sec.tables.push_back(t);
}

void add_problems(Section& sec, const std::vector<const Json*>& recs) {
  Table t = make_table(sec.id + "-problems", "Runs and points that did not end ok", "status and reason as recorded",
                       {{"run", true},
                        {"workload", false},
                        {"variant", false},
                        {"workers", true},
                        {"status", false},
                        {"reason", false}});
  std::set<std::string> seen;
  for (const Json* r : recs) {
    if (r->value("status", "ok") == "ok") continue;
    std::string reason = r->value("reason", "");
    if (reason.size() > 300) reason = reason.substr(0, 300) + " ...";
    const std::string key = (*r)["run_id"].dump() + "\x1f" + r->value("status", "") + "\x1f" + reason;
    if (!seen.insert(key).second) continue;
    t.rows.push_back({(*r)["run_id"].dump(), r->value("workload", ""), r->value("variant", ""),
                      std::to_string(workers_of(*r)), r->value("status", ""), reason});
  }
  if (!t.rows.empty()) sec.tables.push_back(t);
}

// ---------------------------------------------------------------------------------------------
// The header: where and with what the records were measured.
void add_header(Report& rep, const Json& records) {
  std::set<std::string> experiments, hosts, models, scalebench, drivers, cuda, nccl, cudnn, mpi, peers;
  std::string first, last;
  int most_gpus = 0;
  for (const auto& r : records) {
    experiments.insert(r.value("experiment", ""));
    const Json pl = r.value("placement", Json::object());
    for (const auto& h : pl.value("hosts", Json::array())) hosts.insert(h.get<std::string>());
    most_gpus = std::max(most_gpus, pl.value("gpus", 0));
    const std::string time = r.value("time", "");
    if (!time.empty() && (first.empty() || time < first)) first = time;
    if (time > last) last = time;
    if (!r.contains("environment")) continue;
    const Json& e = r["environment"];
    for (const auto& m : e.value("gpu_models", Json::array())) models.insert(m.get<std::string>());
    auto add = [&](std::set<std::string>& s, const char* key) {
      if (e.contains(key) && e[key].is_string() && !e[key].get<std::string>().empty()) s.insert(e[key]);
    };
    if (e.contains("scalebench_version"))
      scalebench.insert(e.value("scalebench_version", "") + " (" + e.value("git_revision", "") + ")");
    add(drivers, "nvidia_driver"), add(cuda, "cuda_runtime"), add(nccl, "nccl"), add(cudnn, "cudnn"), add(mpi, "mpi");
    add(peers, "nccl_tests_version");
  }
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& v : s) out += (out.empty() ? "" : ", ") + v;
    return out.empty() ? std::string("-") : out;
  };
  rep.header.push_back({"experiments", join(experiments)});
  rep.header.push_back({"records", std::to_string(records.size())});
  rep.header.push_back({"measured", first.empty() ? "-" : first + " to " + last});
  rep.header.push_back({"hosts", join(hosts)});
  rep.header.push_back({"GPUs", models.empty() ? "none (host-memory MPI workloads)"
                                               : join(models) + ", up to " + std::to_string(most_gpus) + " per run"});
  rep.header.push_back({"scalebench", join(scalebench)});
  rep.header.push_back({"NVIDIA driver", join(drivers)});
  rep.header.push_back({"CUDA runtime", join(cuda)});
  rep.header.push_back({"NCCL", join(nccl)});
  rep.header.push_back({"cuDNN", join(cudnn)});
  rep.header.push_back({"MPI", join(mpi)});
  if (!peers.empty()) rep.header.push_back({"nccl-tests", join(peers)});

  // The widest topology any record carries: nvidia-smi topo -m's matrix with PCIe links.
  const Json* topo = nullptr;
  for (const auto& r : records) {
    if (!r.contains("environment") || !r["environment"].contains("topology")) continue;
    const Json& t = r["environment"]["topology"];
    if (t.value("gpus", Json::array()).size() > (topo ? (*topo)["gpus"].size() : 0)) topo = &t;
  }
  if (!topo) return;
  const Json& g = (*topo)["gpus"];
  rep.topology = make_table("topology", "GPU topology (" + topo->value("source", "") + ")",
                            "NV<n>: n NVLinks between the pair; PIX, PXB, PHB, NODE, SYS: the PCIe path class", {});
  rep.topology.columns = {"GPU", "model", "PCI bus", "PCIe", "NUMA"};
  rep.topology.numeric = {false, false, false, false, true};
  for (std::size_t j = 0; j < g.size(); ++j) {
    rep.topology.columns.push_back("GPU" + std::to_string(j));
    rep.topology.numeric.push_back(false);
  }
  for (std::size_t i = 0; i < g.size(); ++i) {
    std::vector<std::string> row = {
        "GPU" + std::to_string(i), g[i].value("name", ""), g[i].value("pci_bus_id", ""),
        "Gen" + std::to_string(g[i].value("pcie_gen", 0)) + " x" + std::to_string(g[i].value("pcie_width", 0)),
        std::to_string(g[i].value("numa_node", -1))};
    for (std::size_t j = 0; j < g.size(); ++j) {
      const Json l = (*topo)["links"][i][j];
      const std::string kind = l.value("kind", "");
      row.push_back(kind == "SELF" ? "X" : kind == "NVLINK" ? "NV" + std::to_string(l.value("nvlinks", 0)) : kind);
    }
    rep.topology.rows.push_back(row);
  }
}

}  // namespace

Report build_report(const Json& records, const ReportOptions& opt) {
  Report rep;
  rep.title = opt.title;
  add_header(rep, records);
  const bool gpus = on_gpus(records);

  // Overview: what each experiment holds.
  Section overview;
  overview.id = "overview", overview.title = "Overview";
  Table ex = make_table("overview-experiments", "Experiments", "records by status",
                        {{"experiment", false},
                         {"workloads", false},
                         {"variants", false},
                         {"records", true},
                         {"ok", true},
                         {"failed", true},
                         {"timeout", true},
                         {"skipped", true},
                         {"cancelled", true}});
  std::vector<std::string> names;
  std::map<std::string, std::vector<const Json*>> by_exp;
  for (const auto& r : records) {
    const std::string e = r.value("experiment", "");
    if (!by_exp.count(e)) names.push_back(e);
    by_exp[e].push_back(&r);
  }
  for (const auto& name : names) {
    std::set<std::string> workloads, variants;
    std::map<std::string, int> status;
    for (const Json* r : by_exp[name]) {
      workloads.insert(r->value("workload", "")), variants.insert(r->value("variant", ""));
      ++status[r->value("status", "")];
    }
    auto join = [](const std::set<std::string>& s) {
      std::string out;
      for (const auto& v : s) out += (out.empty() ? "" : ", ") + v;
      return out;
    };
    ex.rows.push_back({name, join(workloads), join(variants), std::to_string(by_exp[name].size()),
                       std::to_string(status["ok"]), std::to_string(status["failed"]),
                       std::to_string(status["timeout"]), std::to_string(status["skipped"]),
                       std::to_string(status["cancelled"])});
  }
  overview.tables.push_back(ex);
  rep.sections.push_back(overview);

  for (const auto& name : names) {
    Section sec;
    sec.id = "experiment-" + id_safe(name);
    sec.title = name;
    std::vector<const Json*> ok;
    Json exp_records = Json::array();
    for (const Json* r : by_exp[name]) {
      exp_records.push_back(*r);
      if (is_ok_point(*r)) ok.push_back(r);
    }
    add_collectives(sec, ok, gpus, opt);
    add_transport_ratios(sec, exp_records);
    add_throughput_scaling(sec, ok, gpus, opt);
    add_training_split(sec, ok, gpus);
    add_other_figures(sec, ok);
    add_outliers(sec, exp_records);
    add_clock_limits(sec, ok);
    add_problems(sec, by_exp[name]);
    rep.sections.push_back(sec);
  }
  return rep;
}

}  // namespace scalebench
