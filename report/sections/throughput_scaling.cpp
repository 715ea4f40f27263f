#include "report/sections/sections.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "analysis/scaling_model.hpp"
#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

namespace {

constexpr std::size_t kMaxScalingCharts = 24;

// DLBS's terms: weak scaling keeps the per-GPU batch, strong scaling keeps the global batch.
std::string scaling_kind(const std::map<int, std::vector<const Json*>>& by_workers) {
  for (const char* key : {"batch_size", "batch", "global_batch"}) {
    std::map<int, double> batch;
    for (auto& [w, rs] : by_workers) {
      const Json& params = RecordView(*rs.front()).params();
      if (params.contains(key) && params[key].is_number()) batch[w] = params[key].get<double>();
    }
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
bool per_worker(const RecordView& r) {
  std::string m = r.metric + " " + r.unit;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* k : {"per_gpu", "per-gpu", "per_rank", "per_worker", "/gpu"})
    if (m.find(k) != std::string::npos) return true;
  return false;
}

// The throughput records of a run: the compute workloads (gemm, conv, rnn) report each GPU and,
// with several, the total: the total is the run's figure, and a one-GPU run's GPU 0 is its total.
std::vector<const Json*> run_throughputs(const std::vector<const Json*>& recs) {
  std::vector<const Json*> tp;
  for (const Json* r : recs) {
    if (!is_throughput(*r) || is_inference(*r)) continue;
    if (RecordView(*r).gpu() >= 0 && workers_of(*r) > 1) continue;  // one GPU's figure (point.gpu "all": the total)
    tp.push_back(r);
  }
  return tp;
}

// chart: workload metric · extra params; inside it variant -> workers -> records.
using ByVariant = std::map<std::string, std::map<int, std::vector<const Json*>>>;
struct ThroughputGroups {
  std::map<std::string, ByVariant> groups;
  std::map<std::string, std::string> unit_of;
  std::map<std::string, bool> per_gpu;
};

ThroughputGroups group_throughputs(const std::vector<const Json*>& tp) {
  const auto extra_keys = varying_params(tp, {"batch_size", "batch", "global_batch"});
  ThroughputGroups g;
  for (const Json* r : tp) {
    const RecordView v(*r);
    const std::string metric = v.metric == "throughput_total" ? "throughput" : v.metric;
    const std::string key = v.workload + " " + metric + series_suffix(*r, extra_keys);
    g.groups[key][v.variant][workers_of(*r)].push_back(r);
    g.unit_of[key] = v.unit;
    g.per_gpu[key] = per_worker(v);
  }
  return g;
}

Table scaling_table(const Section& sec, const std::string& axis, const std::string& one) {
  return make_table(
      sec.id + "-scaling", "Throughput scaling",
      "speedup = total throughput / total at the smallest count (a per-" + one +
          " figure times the count); efficiency = speedup / (count / smallest count); a variant without a run at "
          "the smallest count (one " +
          one + " crosses no link) takes that of another variant; weak scaling keeps the work per " + one +
          ", strong scaling the total (as DLBS defines them); % of peak: of the peak the record names (a GEMM's "
          "FLOP peak for its precision)",
      {{"series", false},
       {axis, true},
       {"throughput", true},
       {"unit", false},
       {"min – max", true},
       {"cv %", true},
       {"speedup", true},
       {"efficiency %", true},
       {"scaling", false},
       {"% of peak", true}});
}

Table scaling_model_table(const Section& sec, const std::string& one, const ReportOptions& opt) {
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
  m.columns.push_back("extrapolation");
  m.numeric.push_back(false);
  m.note += "; extrapolation: why the @N columns are a guess (fewer than 3 measured counts, or R² under 0.9)";
  return m;
}

// The base of every variant's speedup in a group: the smallest count of any variant, and its figure.
struct ScalingBase {
  int w0 = INT32_MAX;
  std::string variant;
  Pooled p;
  double total = 0;
};

ScalingBase scaling_base(ByVariant& variants, bool pg) {
  ScalingBase b;
  for (auto& [v, by_w] : variants)
    if (by_w.begin()->first < b.w0) b.w0 = by_w.begin()->first, b.variant = v;
  b.p = pool(variants[b.variant][b.w0]);
  b.total = b.p.median * (pg ? b.w0 : 1);
  return b;
}

// What one group's tables and chart are written with.
struct ScalingGroup {
  const std::string& key;
  bool pg;  // a per-GPU figure
  const std::string& unit;
  const std::string& axis;
  bool gpus;
  const ReportOptions& opt;
};

// One variant of a group: its rows of the scaling table, its measured series and, with 2+
// counts, the throughput model's row and continuation. Returns whether it has 2+ counts.
bool add_variant_scaling(const ScalingGroup& sg, const ScalingBase& base, const std::string& variant,
                         const std::map<int, std::vector<const Json*>>& by_w, Table& t, Table& m, Chart& c,
                         std::vector<std::string>& notes) {
  const int top = sg.opt.extrapolate_to.back();
  const std::string name = sg.key + " · " + variant;
  const bool borrowed = !by_w.count(base.w0);
  const std::string kind =
      scaling_kind(by_w) + (borrowed ? " (base: " + base.variant + " at " + std::to_string(base.w0) + ")" : "");
  std::vector<int> ws;
  std::vector<double> totals;
  if (borrowed) ws.push_back(base.w0), totals.push_back(base.total);
  Series measured;
  measured.name = variant;
  for (auto& [w, rs] : by_w) {
    const Pooled p = pool(rs);
    const double total = p.median * (sg.pg ? w : 1);
    const double speedup = base.total > 0 ? total / base.total : 0;
    t.rows.push_back({name, std::to_string(w), format_number(p.median), sg.unit, spread_text(p), cv_text(p),
                      format_number(speedup), format_number(100 * speedup / (double(w) / base.w0)), kind,
                      p.pct_of_peak >= 0 ? format_number(p.pct_of_peak) : ""});
    ws.push_back(w), totals.push_back(total);
    measured.points.push_back({double(w), p.median, p.min, p.max});
  }
  c.series.push_back(measured);
  if (ws.size() < 2) return false;
  const ThroughputModel tm = fit_throughput(ws, totals);
  if (!tm.ok()) return true;
  std::vector<std::string> row = {name, std::to_string(ws.size()) + " counts, " + std::to_string(ws.front()) + "–" +
                                            std::to_string(ws.back()) + " " + sg.axis};
  for (int n : sg.opt.extrapolate_to) row.push_back(format_number(100 * predict_efficiency(tm, n)));
  const std::string doubt = extrapolation_doubt(static_cast<int>(ws.size()), tm.r2, sg.gpus);
  row.push_back(doubt.empty() ? "supported" : "a guess: " + doubt);
  m.rows.push_back(row);
  if (!doubt.empty()) {
    if (c.warning.empty()) c.warning = "Warning: model extrapolated from " + doubt;
    notes.push_back(
        extrapolation_warning(name + " beyond " + std::to_string(ws.back()) + " " + sg.axis, doubt, sg.gpus));
  }
  Series model;
  model.name = variant + (doubt.empty() ? " model" : " model (a guess)");
  model.dashed = true, model.markers = model.error_bars = false;
  for (int n = by_w.rbegin()->first; n <= top; n *= 2) {
    const double v = predict_throughput(tm, n) / (sg.pg ? n : 1);
    model.points.push_back({double(n), v, v, v});
  }
  c.series.push_back(model);
  return true;
}

Series ideal_series(const ScalingBase& base, bool pg, int top) {
  Series ideal;
  ideal.name = "ideal (from " + base.variant + " at " + std::to_string(base.w0) + ")";
  ideal.dashed = true, ideal.markers = ideal.error_bars = false;
  for (int n = base.w0; n <= top; n *= 2) {
    const double v = pg ? base.p.median : base.p.median * n / base.w0;
    ideal.points.push_back({double(n), v, v, v});
  }
  return ideal;
}

// The overlaid runs' throughput groups, each with its label.
using OverlayGroups = std::vector<std::pair<std::string, ThroughputGroups>>;

OverlayGroups overlay_groups(const ReportOptions& opt) {
  OverlayGroups out;
  for (const Overlay& o : opt.overlays) {
    std::vector<const Json*> ok;
    for (const Json& r : o.records)
      if (is_ok_point(r)) ok.push_back(&r);
    const std::vector<const Json*> tp = run_throughputs(ok);
    if (!tp.empty()) out.emplace_back(o.label, group_throughputs(tp));
  }
  return out;
}

// The overlaid runs' series of the chart `key`, dashed in the colour of the variant they overlay.
// Returns whether any was drawn.
bool add_overlay_series(Chart& c, const std::string& key, const ByVariant& variants, const OverlayGroups& overlays) {
  bool any = false;
  for (const auto& [label, og] : overlays) {
    const auto found = og.groups.find(key);
    if (found == og.groups.end()) continue;
    for (const auto& [variant, by_w] : found->second) {
      Series s;
      s.name = label + ": " + variant;
      s.dashed = true;
      if (variants.count(variant)) s.colour_of = variant;
      for (const auto& [w, rs] : by_w) {
        const Pooled p = pool(rs);
        s.points.push_back({double(w), p.median, p.min, p.max});
      }
      c.series.push_back(s);
      any = true;
    }
  }
  return any;
}

}  // namespace

// Throughput scaling (images/s, samples/s, TFLOP/s ...: higher-is-better figures that are not a
// bandwidth): speedup and efficiency against the smallest worker count, the ideal line, and the
// throughput model's continuation.
void add_throughput_scaling(Section& sec, const std::vector<const Json*>& recs, bool gpus, const ReportOptions& opt) {
  const std::vector<const Json*> tp = run_throughputs(recs);
  if (tp.empty()) return;
  ThroughputGroups tg = group_throughputs(tp);
  const std::string axis = gpus ? "GPUs" : "ranks", one = gpus ? "GPU" : "rank";
  Table t = scaling_table(sec, axis, one);
  Table m = scaling_model_table(sec, one, opt);
  // A chart per point is readable for a handful of points (a training run's images/s); a
  // compute sweep has hundreds (every layer, pass and precision): those get the tables only.
  const bool draw = tg.groups.size() <= kMaxScalingCharts;
  if (!draw) t.note += "; " + std::to_string(tg.groups.size()) + " points: tables only, no charts";
  const OverlayGroups overlays = overlay_groups(opt);
  bool overlaid = false;
  for (auto& [key, variants] : tg.groups) {
    const bool pg = tg.per_gpu[key];
    const ScalingBase base = scaling_base(variants, pg);
    Chart c;
    c.id = bounded_id(sec.id + "-throughput-" + id_safe(key));
    c.title = sec.title + ": " + key + " by " + one + " count";
    c.x_label = axis, c.y_label = key.substr(0, key.find(" · ")) + " (" + tg.unit_of[key] + ")";
    c.log_x = true, c.log_y = !pg;
    const ScalingGroup sg{key, pg, tg.unit_of[key], axis, gpus, opt};
    bool any_scaling = false;
    std::vector<std::string> notes;
    for (auto& [variant, by_w] : variants) any_scaling |= add_variant_scaling(sg, base, variant, by_w, t, m, c, notes);
    if (!any_scaling) continue;
    c.series.push_back(ideal_series(base, pg, opt.extrapolate_to.back()));
    if (!draw) continue;
    overlaid |= add_overlay_series(c, key, variants, overlays);
    sec.charts.push_back(c);
    sec.paragraphs.insert(sec.paragraphs.end(), notes.begin(), notes.end());
  }
  if (overlaid) {
    std::string labels;
    for (const auto& [label, og] : overlays) labels += (labels.empty() ? "" : ", ") + label;
    sec.paragraphs.push_back("Dashed in the throughput charts: " + labels +
                             ", each series in the colour of the variant of the same name here.");
  }
  sec.tables.push_back(t);
  if (!m.rows.empty()) sec.tables.push_back(m);
}

}  // namespace scalebench::sections
