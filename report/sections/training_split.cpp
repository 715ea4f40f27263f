#include "report/sections/sections.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/stats.hpp"
#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

// Where a multi-GPU training step loses against one GPU. Each rank's time record carries its step
// with the all-reduces (details.step_ms) and the same step timed without them in the same run
// (details.step_ms_without_allreduce). The slowest rank's step without communication, against
// the 1-GPU step, is what the GPUs cost before any communication (one slow GPU, power and heat
// beside busy neighbours); the rest of the loss is communication. A node's acceptance turns on
// which of the two it is.
namespace {

struct RunSplit {
  double step = 0;                      // the slowest rank's step, ms
  double alone_min = 0, alone_max = 0;  // each rank's step without all-reduce, ms
  long long slowest = -1;               // the rank (point.gpu) with alone_max
};

// details.step_ms and details.step_ms_without_allreduce, -1 when the record lacks it.
double step_ms(const RecordView& r, bool without_allreduce = false) {
  return r.number_at(without_allreduce ? "details.step_ms_without_allreduce" : "details.step_ms").value_or(-1.0);
}

// The time records that carry a step; nothing when none of them has the split.
std::vector<const Json*> records_with_steps(const std::vector<const Json*>& recs) {
  std::vector<const Json*> timed;
  bool any_split = false;
  for (const Json* r : recs) {
    const RecordView v(*r);
    if (v.metric != "time" || step_ms(v) <= 0) continue;
    timed.push_back(r);
    any_split |= step_ms(v, true) > 0;
  }
  if (!any_split) return {};
  return timed;
}

// series (workload, varying params, point without its GPU) -> variant -> workers -> run -> split
using SplitsByWorkers = std::map<int, std::map<std::string, RunSplit>>;
using SplitGroups = std::map<std::string, std::map<std::string, SplitsByWorkers>>;

SplitGroups group_splits(const std::vector<const Json*>& timed) {
  const auto extra_keys = varying_params(timed, {"batch_size", "batch", "global_batch"});
  SplitGroups groups;
  for (const Json* r : timed) {
    const RecordView v(*r);
    const std::string key = v.workload + series_suffix(*r, extra_keys);
    const long long rank = std::max(v.gpu(), 0);  // point.gpu "all", or none: the run as a whole
    const int w = workers_of(*r);
    const double alone = step_ms(v, true);
    if (w > 1 && alone <= 0) continue;  // a multi-GPU record without the split says nothing here
    RunSplit& s = groups[key][v.variant][w][v.run_id ? std::to_string(*v.run_id) : "null"];
    s.step = std::max(s.step, step_ms(v));
    if (w > 1) {
      if (s.slowest < 0 || alone > s.alone_max) s.alone_max = alone, s.slowest = rank;
      s.alone_min = s.alone_min > 0 ? std::min(s.alone_min, alone) : alone;
    }
  }
  return groups;
}

Table split_table(const Section& sec, bool gpus) {
  const std::string one = gpus ? "GPU" : "rank";
  return make_table(
      sec.id + "-training-split", "Where the multi-" + one + " step loses",
      "per run, the slowest rank's step with its all-reduces and each rank's step without them, timed in the same "
      "run; medians over runs. beside the others = the slowest rank alone − the 1-" +
          one + " step (a slower " + one +
          ", power or heat); communication = the step − the slowest rank alone; efficiency = the 1-" + one +
          " step / the step; against the ranks alone = the slowest rank alone / the step (100% is a link that costs "
          "nothing)",
      {{"series", false},
       {gpus ? "GPUs" : "ranks", true},
       {"runs", true},
       {"1-" + one + " step ms", true},
       {"step ms", true},
       {"each rank alone ms", true},
       {"slowest " + one, true},
       {"beside the others ms", true},
       {"communication ms", true},
       {"efficiency %", true},
       {"against the ranks alone %", true}});
}

// The row of one variant at one worker count: `base` is the 1-GPU step it is measured against.
std::vector<std::string> split_row(const std::string& series, int w, const std::map<std::string, RunSplit>& runs,
                                   double base) {
  std::vector<double> step, lo, hi;
  std::map<long long, int> slowest;
  for (auto& [run, s] : runs) {
    step.push_back(s.step), lo.push_back(s.alone_min), hi.push_back(s.alone_max);
    ++slowest[s.slowest];
  }
  const double st = median(step), alone = median(hi);
  // The rank slowest alone in most runs: one GPU that keeps being it is the node's problem.
  const auto most = std::max_element(slowest.begin(), slowest.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  return {series,
          std::to_string(w),
          std::to_string(runs.size()),
          format_number(base),
          format_number(st),
          format_number(median(lo)) + " – " + format_number(alone),
          std::to_string(most->first) +
              (runs.size() > 1 ? " (" + std::to_string(most->second) + " of " + std::to_string(runs.size()) + ")" : ""),
          format_number(alone - base),
          format_number(st - alone),
          format_number(100 * base / st),
          format_number(100 * alone / st)};
}

}  // namespace

void add_training_split(Section& sec, const std::vector<const Json*>& recs, bool gpus) {
  const std::vector<const Json*> timed = records_with_steps(recs);
  if (timed.empty()) return;
  SplitGroups groups = group_splits(timed);
  const std::string one = gpus ? "GPU" : "rank";
  Table t = split_table(sec, gpus);
  for (auto& [key, variants] : groups) {
    // The 1-GPU step: the variant's own, else any variant's (one GPU crosses no link).
    std::map<std::string, double> base_of;
    std::vector<double> any_base;
    for (auto& [v, by_w] : variants) {
      if (!by_w.count(1)) continue;
      std::vector<double> steps;
      for (auto& [run, s] : by_w.at(1)) steps.push_back(s.step);
      base_of[v] = median(steps);
      any_base.insert(any_base.end(), steps.begin(), steps.end());
    }
    if (any_base.empty()) continue;
    for (auto& [variant, by_w] : variants) {
      const double base = base_of.count(variant) ? base_of[variant] : median(any_base);
      for (auto& [w, runs] : by_w) {
        if (w < 2) continue;
        t.rows.push_back(split_row(
            key + " · " + variant + (base_of.count(variant) ? "" : " (1-" + one + " step of another variant)"), w, runs,
            base));
      }
    }
  }
  if (!t.rows.empty()) sec.tables.push_back(t);
}

}  // namespace scalebench::sections
