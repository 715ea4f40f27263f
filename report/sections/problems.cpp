#include "report/sections/sections.hpp"

#include <set>

#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

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

}  // namespace scalebench::sections
