#include "report/sections/sections.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/variant_ratio.hpp"
#include "common/units.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

// NVLink against PCIe: every pair of variants whose transports are nvlink and pcie and that ran
// the same workload, paired by rounds (variant_ratio.hpp).
void add_transport_ratios(Section& sec, const Json& exp_records) {
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
  for (const auto& [nv, pc] : nvlink_pcie_variants(exp_records)) {
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
  if (!t.rows.empty()) sec.tables.push_back(t);
}

}  // namespace scalebench::sections
