#include "report/sections/sections.hpp"

#include <set>

#include "record/record_reader.hpp"
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
  for (const Json* json : recs) {
    const RecordView r(*json);
    if (r.status.empty() || r.ok()) continue;  // a record without a status counts as ok
    std::string reason = r.reason;
    if (reason.size() > 300) reason = reason.substr(0, 300) + " ...";
    const std::string run = r.run_id ? std::to_string(*r.run_id) : "null";
    if (!seen.insert(run + "\x1f" + r.status + "\x1f" + reason).second) continue;
    t.rows.push_back({run, r.workload, r.variant, std::to_string(workers_of(*json)), r.status, reason});
  }
  if (!t.rows.empty()) sec.tables.push_back(t);
}

}  // namespace scalebench::sections
