#include "report/sections/sections.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "common/units.hpp"
#include "analysis/scaling_model.hpp"
#include "report/sections/section_helpers.hpp"
#include "analysis/bus_bandwidth.hpp"

namespace scalebench::sections {
namespace {

// Parameters that name a collective curve's group (one chart each).
const std::vector<std::string> kCollectiveGroupParams = {"op", "dtype", "reduce_op", "in_place"};

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

// The chart a collective point belongs to ("all_reduce float32 sum in-place") and its curve in it.
struct CollectivePoints {
  std::vector<std::string> extra_keys;  // parameters that vary besides the group's
  bool gpus = false;
  std::string group_title(const Json& p) const {
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
  }
  std::string name_of(const Json& r) const {
    return series_name(r.value("variant", ""), workers_of(r), gpus, params_text(r["params"], extra_keys));
  }
};

bool is_sized(const Json& r, const char* metric) {
  return r["metric"] == metric && r["params"].contains("op") && r.contains("point") && r["point"].contains("size");
}

// The time records of the same points (chart, curve, size), indexed once for the alpha-beta fits.
using TimesAt = std::map<std::tuple<std::string, std::string, double>, std::vector<const Json*>>;

std::map<std::string, CollectiveGroup> group_curves(const std::vector<const Json*>& bw, const CollectivePoints& cp) {
  std::map<std::string, CollectiveGroup> groups;
  for (const Json* r : bw) {
    const Json& p = (*r)["params"];
    const std::string title = cp.group_title(p);
    auto& g = groups[title];
    g.title = title, g.op = text_of(p["op"]), g.id = bounded_id(id_safe(title));
    auto& c = g.curves[cp.name_of(*r)];
    c.variant = r->value("variant", ""), c.extra = params_text(p, cp.extra_keys), c.workers = workers_of(*r);
    c.by_size[(*r)["point"]["size"].get<double>()].push_back(r);
  }
  return groups;
}

Table largest_table(const Section& sec) {
  return make_table(
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
}

Table model_table(const Section& sec, const ReportOptions& opt) {
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
  return model;
}

// What one group's size chart leaves for its scaling chart: busbw at the largest size against the
// worker count, per variant (and extra params), with the alpha-beta fits.
struct GroupScaling {
  std::map<std::string, std::map<int, Pooled>> by_workers;
  std::map<std::string, std::map<int, AlphaBetaFit>> fits;
  double common_size = 0;
};

// busbw against size, one curve per series, with a row per curve in `largest` and, fitted on the
// time records of the same points, in `model`.
GroupScaling add_size_chart(Section& sec, const std::string& title, const CollectiveGroup& g, const TimesAt& times_at,
                            Table& largest, Table& model, const ReportOptions& opt) {
  GroupScaling gs;
  Chart chart;
  chart.id = sec.id + "-busbw-" + g.id;
  chart.title = sec.title + ": " + title + " bus bandwidth by message size";
  chart.x_label = "message size", chart.y_label = "busbw (GB/s)";
  chart.log_x = true, chart.x_bytes = true;
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
    gs.common_size = std::max(gs.common_size, top);
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
        gs.fits[line][c.workers] = fit;
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
    gs.by_workers[line][c.workers] = p;
  }
  sec.charts.push_back(chart);
  return gs;
}

// busbw at the largest size against GPUs, measured and modelled (only with 2+ counts).
void add_scaling_chart(Section& sec, const std::string& title, const CollectiveGroup& g, GroupScaling& gs, bool gpus,
                       const ReportOptions& opt) {
  bool several = false;
  for (auto& [line, m] : gs.by_workers) several |= m.size() >= 2 || !gs.fits[line].empty();
  if (!several || ring_steps(g.op, 2) == 0) return;
  Chart scale;
  scale.id = sec.id + "-busbw-scaling-" + g.id;
  scale.title = sec.title + ": " + title + " busbw at " + format_size(static_cast<std::uint64_t>(gs.common_size)) +
                " by " + (gpus ? "GPU" : "rank") + " count, with the alpha-beta model's continuation";
  scale.x_label = gpus ? "GPUs" : "ranks", scale.y_label = "busbw (GB/s)";
  scale.log_x = true;
  for (auto& [line, m] : gs.by_workers) {
    Series s;
    s.name = line + " measured";
    for (auto& [w, p] : m)
      if (w >= 2) s.points.push_back({double(w), p.median, p.min, p.max});
    if (!s.points.empty()) scale.series.push_back(s);
    if (gs.fits[line].empty()) continue;
    const auto& [n_fit, fit] = *gs.fits[line].rbegin();  // the largest measured count
    Series model_line;
    model_line.name = line + " model";
    model_line.dashed = true, model_line.markers = false, model_line.error_bars = false;
    const double anchor = m.count(n_fit) ? m[n_fit].median / predict_busbw(fit, g.op, n_fit, n_fit, gs.common_size) : 1;
    for (int n = n_fit; n <= opt.extrapolate_to.back(); n *= 2) {
      const double b = anchor * predict_busbw(fit, g.op, n_fit, n, gs.common_size);
      model_line.points.push_back({double(n), b, b, b});
    }
    scale.series.push_back(model_line);
  }
  sec.charts.push_back(scale);
}

}  // namespace

// Collectives: busbw against size per group, the largest size per curve, busbw against GPU
// count with the alpha-beta model's continuation.
void add_collectives(Section& sec, const std::vector<const Json*>& recs, bool gpus, const ReportOptions& opt) {
  std::vector<const Json*> bw;
  for (const Json* r : recs)
    if (is_sized(*r, "busbw")) bw.push_back(r);
  if (bw.empty()) return;
  std::set<std::string> group_keys(kCollectiveGroupParams.begin(), kCollectiveGroupParams.end());
  group_keys.insert("backend");  // a variant running another program may name no backend
  const CollectivePoints cp{varying_params(bw, group_keys), gpus};
  std::map<std::string, CollectiveGroup> groups = group_curves(bw, cp);
  TimesAt times_at;
  for (const Json* r : recs)
    if (is_sized(*r, "time"))
      times_at[{cp.group_title((*r)["params"]), cp.name_of(*r), (*r)["point"]["size"].get<double>()}].push_back(r);

  Table largest = largest_table(sec);
  Table model = model_table(sec, opt);
  for (auto& [title, g] : groups) {
    GroupScaling gs = add_size_chart(sec, title, g, times_at, largest, model, opt);
    add_scaling_chart(sec, title, g, gs, gpus, opt);
  }
  sec.tables.push_back(largest);
  if (!model.rows.empty()) sec.tables.push_back(model);
}

}  // namespace scalebench::sections
