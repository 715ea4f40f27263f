#include "report/sections/sections.hpp"

#include <set>

#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

Section overview(const std::vector<std::string>& names, const std::map<std::string, std::vector<const Json*>>& by_exp) {
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
  for (const auto& name : names) {
    std::set<std::string> workloads, variants;
    std::map<std::string, int> status;
    for (const Json* json : by_exp.at(name)) {
      const RecordView r(*json);
      workloads.insert(r.workload), variants.insert(r.variant);
      ++status[r.status];
    }
    auto join = [](const std::set<std::string>& s) {
      std::string out;
      for (const auto& v : s) out += (out.empty() ? "" : ", ") + v;
      return out;
    };
    ex.rows.push_back({name, join(workloads), join(variants), std::to_string(by_exp.at(name).size()),
                       std::to_string(status["ok"]), std::to_string(status["failed"]),
                       std::to_string(status["timeout"]), std::to_string(status["skipped"]),
                       std::to_string(status["cancelled"])});
  }
  overview.tables.push_back(ex);
  return overview;
}

}  // namespace scalebench::sections
