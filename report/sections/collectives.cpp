#include <algorithm>
#include <optional>
#include <set>

#include "common/units.hpp"
#include "record/record_reader.hpp"
#include "report/sections/collective_curves.hpp"
#include "report/sections/section_helpers.hpp"
#include "report/sections/sections.hpp"

namespace scalebench::sections {
namespace {

// Parameters that name a collective curve's group (one chart each).
const std::vector<std::string> kCollectiveGroupParams = {"op", "dtype", "reduce_op", "in_place"};

// Each metric of a sized point, as a chart against message size.
struct SizeChart {
  const char* metric;
  const char* what;  // in the title
  const char* y_label;
  bool log_y;
};
const SizeChart kSizeCharts[] = {{"busbw", "bus bandwidth", "busbw (GB/s)", false},
                                 {"algbw", "algorithm bandwidth", "algbw (GB/s)", false},
                                 {"time", "time per operation", "time (µs)", true}};

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
    const RecordView v(r);
    return series_name(v.variant, workers_of(r), gpus, params_text(v.params(), extra_keys));
  }
};

bool is_sized(const Json& r) {
  const RecordView v(r);
  const std::string& m = v.metric;
  return (m == "busbw" || m == "algbw" || m == "time") && v.params().contains("op") && v.number_at("point.size");
}

// One curve's points of one metric as a chart series; none (nullopt) when it has no point to show.
std::optional<Series> size_series(const std::string& name, const Curve& c, const SizeChart& sc) {
  const auto found = c.at.find(sc.metric);
  if (found == c.at.end()) return std::nullopt;
  Series s;
  s.name = name;
  for (const auto& [size, rs] : found->second) {
    const Pooled p = pool(rs);
    s.points.push_back({size, p.median, p.min, p.max});
  }
  // One rank moves nothing between ranks (all_reduce's busbw factor is 0 there): no busbw curve.
  if (std::none_of(s.points.begin(), s.points.end(), [](const ChartPoint& p) { return p.y > 0; })) return std::nullopt;
  return s;
}

// busbw, algbw and time against message size for one group, with the overlaid runs' curves of the
// same group dashed in the colour of the curve they overlay.
void add_size_charts(Section& sec, const CollectiveGroup& g,
                     const std::vector<std::pair<std::string, CollectiveGroups>>& overlays) {
  for (const SizeChart& sc : kSizeCharts) {
    Chart chart;
    chart.id = sec.id + "-" + sc.metric + "-" + g.id;
    chart.title = sec.title + ": " + g.title + " " + sc.what + " by message size";
    chart.x_label = "message size", chart.y_label = sc.y_label;
    chart.log_x = true, chart.x_bytes = true, chart.log_y = sc.log_y;
    for (const auto& [name, c] : g.curves)
      if (auto s = size_series(name, c, sc)) chart.series.push_back(*s);
    if (chart.series.empty()) continue;
    for (const auto& [label, groups] : overlays) {
      const auto og = groups.find(g.title);
      if (og == groups.end()) continue;
      for (const auto& [name, c] : og->second.curves)
        if (auto s = size_series(label + ": " + name, c, sc)) {
          s->dashed = true;
          if (g.curves.count(name)) s->colour_of = name;
          chart.series.push_back(*s);
        }
    }
    sec.charts.push_back(chart);
  }
}

Table per_size_table(const Section& sec) {
  return make_table(sec.id + "-per-size", "Every message size",
                    "median of all samples of all rounds: time per operation, algbw = size / time, busbw = algbw × "
                    "nccl-tests' factor (0 on one rank: nothing crosses between ranks); min – max and cv of the busbw "
                    "samples; % of peak of the link the traffic took",
                    {{"collective", false},
                     {"series", false},
                     {"size", true},
                     {"time µs", true},
                     {"algbw GB/s", true},
                     {"busbw GB/s", true},
                     {"busbw min – max", true},
                     {"cv %", true},
                     {"samples", true},
                     {"% of peak", true}});
}

void add_per_size_rows(Table& t, const CollectiveGroup& g) {
  for (const auto& [name, c] : g.curves) {
    std::set<double> sizes;
    for (const auto& [metric, by_size] : c.at)
      for (const auto& [size, rs] : by_size) sizes.insert(size);
    auto median_at = [&](const char* metric, double size) -> std::string {
      const auto m = c.at.find(metric);
      if (m == c.at.end() || !m->second.count(size)) return "";
      return format_number(pool(m->second.at(size)).median);
    };
    for (double size : sizes) {
      std::vector<std::string> row = {g.title,
                                      name,
                                      format_size(static_cast<std::uint64_t>(size)),
                                      median_at("time", size),
                                      median_at("algbw", size),
                                      median_at("busbw", size)};
      const auto bw = c.at.find("busbw");
      if (bw != c.at.end() && bw->second.count(size)) {
        const Pooled p = pool(bw->second.at(size));
        row.insert(row.end(), {spread_text(p), cv_text(p), std::to_string(p.n),
                               p.pct_of_peak >= 0 ? format_number(p.pct_of_peak) : ""});
      } else {
        row.insert(row.end(), {"", "", "", ""});
      }
      t.rows.push_back(row);
    }
  }
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

void add_largest_rows(Table& t, const CollectiveGroup& g) {
  for (const auto& [name, c] : g.curves) {
    const auto bw = c.at.find("busbw");
    if (bw == c.at.end() || bw->second.empty()) continue;
    const double top = bw->second.rbegin()->first;
    const Pooled p = pool(bw->second.rbegin()->second);
    t.rows.push_back({g.title, name, format_size(static_cast<std::uint64_t>(top)), format_number(p.median),
                      spread_text(p), cv_text(p), std::to_string(p.n), p.link,
                      p.pct_of_peak >= 0 ? format_number(p.pct_of_peak) : ""});
  }
}

}  // namespace

CollectiveGroups collective_groups(const std::vector<const Json*>& recs, bool gpus) {
  std::vector<const Json*> sized;
  for (const Json* r : recs)
    if (is_sized(*r)) sized.push_back(r);
  std::set<std::string> group_keys(kCollectiveGroupParams.begin(), kCollectiveGroupParams.end());
  group_keys.insert("backend");  // a variant running another program may name no backend
  const CollectivePoints cp{varying_params(sized, group_keys), gpus};
  CollectiveGroups groups;
  for (const Json* r : sized) {
    const RecordView v(*r);
    const Json& p = v.params();
    const std::string title = cp.group_title(p);
    auto& g = groups[title];
    g.title = title, g.op = text_of(p["op"]), g.id = bounded_id(id_safe(title));
    auto& c = g.curves[cp.name_of(*r)];
    c.variant = v.variant, c.extra = params_text(p, cp.extra_keys), c.workers = workers_of(*r);
    c.at[v.metric][*v.number_at("point.size")].push_back(r);
  }
  return groups;
}

// Collectives: busbw, algbw and time against size per group (with overlaid runs), every size and
// the largest per curve in tables, busbw against the worker count with the alpha-beta model.
void add_collectives(Section& sec, const std::vector<const Json*>& recs, bool gpus, const ReportOptions& opt) {
  const CollectiveGroups groups = collective_groups(recs, gpus);
  if (groups.empty()) return;
  std::vector<std::pair<std::string, CollectiveGroups>> overlays;
  for (const Overlay& o : opt.overlays) {
    std::vector<const Json*> ok;
    for (const Json& r : o.records)
      if (is_ok_point(r)) ok.push_back(&r);
    CollectiveGroups og = collective_groups(ok, on_gpus(o.records));  // named as they were measured
    std::size_t shared = 0;
    for (const auto& [title, g] : og) shared += groups.count(title);
    if (shared == 0) continue;
    sec.paragraphs.push_back("Dashed in the charts by message size: " + o.label + " (" + std::to_string(ok.size()) +
                             " records), each curve in the colour of the curve of the same name here.");
    overlays.emplace_back(o.label, std::move(og));
  }
  Table per_size = per_size_table(sec), largest = largest_table(sec);
  for (const auto& [title, g] : groups) {
    add_size_charts(sec, g, overlays);
    add_per_size_rows(per_size, g);
    add_largest_rows(largest, g);
  }
  sec.tables.push_back(per_size);
  sec.tables.push_back(largest);
  add_collective_scaling(sec, groups, gpus, opt);
}

}  // namespace scalebench::sections
