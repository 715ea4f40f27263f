// The agreement rules: values that must be equal across GPUs (checksums of a deterministic
// computation, driver versions), judged by majority with no golden value.
#include <map>

#include "accept/rule_selection.hpp"
#include "accept/verdict.hpp"
#include "record/record_reader.hpp"

namespace scalebench::accept {

namespace {
std::string as_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }
}  // namespace

std::vector<Verdict> agreement(const Rule& rule, const std::vector<const Json*>& records) {
  std::map<std::string, std::vector<const Json*>> groups;
  for (const Json* r : records) groups[group_key(rule, *r) + "|" + point_identity(*r).dump()].push_back(r);
  std::vector<Verdict> out;
  for (const auto& [key, members] : groups) {
    std::map<std::string, int> counts;
    for (const Json* r : members) counts[as_text(field_at(*r, rule.agree))]++;
    std::string majority;
    int top = 0;
    for (const auto& [value, n] : counts)
      if (n > top) {
        top = n;
        majority = value;
      }
    const int total = static_cast<int>(members.size());
    const bool has_majority = 2 * top > total;
    const std::string model = RecordView(*members.front()).model();
    for (const Json* r : members) {
      const RecordView record(*r);
      Verdict v;
      v.host = record.host();
      v.gpu = record.gpu();
      v.model = model;
      v.check = check_label(*r);
      v.rule = rule.name;
      v.rule_where = rule.where;
      v.unit = record.unit;
      const std::string mine = as_text(field_at(*r, rule.agree));
      v.band.basis = "majority of " + std::to_string(total) + (model.empty() ? "" : " " + model);
      if (!has_majority) {
        v.outcome = "warn";
        v.reason = rule.agree + " " + mine + ": no majority among " + std::to_string(total) + " (" +
                   std::to_string(counts.size()) + " different values)";
      } else if (mine == majority) {
        v.outcome = "pass";
        v.reason = rule.agree + " agrees with " + std::to_string(top) + " of " + std::to_string(total);
      } else {
        v.outcome = rule.severity;
        v.reason = rule.agree + " " + mine + " differs from " + majority + ", the value of " + std::to_string(top) +
                   " of " + std::to_string(total) + (model.empty() ? "" : " " + model) + " GPUs";
      }
      out.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace scalebench::accept
