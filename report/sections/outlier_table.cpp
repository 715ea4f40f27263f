#include "report/sections/sections.hpp"

#include "common/units.hpp"
#include "report/outliers.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

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

}  // namespace scalebench::sections
