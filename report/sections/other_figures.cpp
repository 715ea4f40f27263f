#include "report/sections/sections.hpp"

#include <map>

#include "common/units.hpp"
#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

// Every other figure (copy bandwidths, command figures, ...), one row per point and metric.
void add_other_figures(Section& sec, const std::vector<const Json*>& recs) {
  std::map<std::string, std::vector<const Json*>> rows;
  std::vector<std::string> order;
  for (const Json* json : recs) {
    const RecordView r(*json);
    const std::string& metric = r.metric;
    const bool collective_point = r.params().contains("op") && r.point().contains("size") &&
                                  (metric == "busbw" || metric == "algbw" || metric == "time");
    if (collective_point || is_throughput(*json) || is_inference(*json)) continue;
    std::string what = r.workload;
    const Json& p = r.params();
    for (auto it = p.begin(); it != p.end(); ++it)
      if (!measurement_params().count(it.key()) && it.key() != "backend" && (it->is_string() || it->is_boolean()))
        what += " " + it.key() + "=" + text_of(*it);
    for (auto it = r.point().begin(); it != r.point().end(); ++it)
      what += " " + it.key() + "=" +
              (it.key() == "size" && it->is_number_unsigned() ? format_size(it->get<std::uint64_t>()) : text_of(*it));
    const std::string key =
        what + "\x1f" + r.variant + "\x1f" + std::to_string(workers_of(*json)) + "\x1f" + metric + "\x1f" + r.unit;
    if (!rows.count(key)) order.push_back(key);
    rows[key].push_back(json);
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

}  // namespace scalebench::sections
