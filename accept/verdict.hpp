#pragma once
#include <optional>
#include <string>
#include <vector>

#include "accept/band.hpp"
#include "accept/rules.hpp"
#include "common/json.hpp"

namespace scalebench::accept {

// One rule's judgement of one record.
struct Verdict {
  std::string host;  // "" for a run over several nodes
  int gpu = -1;      // -1: the node (or run) as a whole
  std::string model;
  std::string check;  // "gemm.throughput precision=bf16 ...": workload.metric and the point
  std::string rule, rule_where;
  std::string outcome;  // pass | warn | fail | skip
  std::optional<double> value;
  std::string unit;
  Band band;
  std::string reason;  // why it is not a pass (or, for a pass, how it was judged when not by a band)
};

// The worse of two outcomes: fail > warn > pass > skip.
const std::string& worse(const std::string& a, const std::string& b);

// Every rule over every record it selects. `baseline`: the records of a named baseline run, for
// `from: baseline` bands (empty when none was given). A run record that failed or timed out gets
// one verdict, from the first rule of its workload, by that rule's on_skipped.
std::vector<Verdict> evaluate(const RuleSet& rules, const std::vector<Json>& records,
                              const std::vector<Json>& baseline = {});

// The agreement rules (`agree`): in each group, the value most records share wins when they are
// more than half; a record that differs gets the rule's severity and names the majority; no
// majority: every record of the group warns. (agreement.cpp)
std::vector<Verdict> agreement(const Rule& rule, const std::vector<const Json*>& records);

// The check's label, and the point without who measured it (host, gpu, uuid, model).
std::string check_label(const Json& record);
Json point_identity(const Json& record);

// Per node (host) and per GPU (host, gpu): the worst outcome and the reasons that made it.
struct Rollup {
  std::string host;
  int gpu = -1;
  std::string outcome = "pass";
  std::vector<std::string> reasons;
};
std::vector<Rollup> node_rollup(const std::vector<Verdict>& verdicts);
std::vector<Rollup> gpu_rollup(const std::vector<Verdict>& verdicts);

Json to_json(const Verdict& v);
Json to_json(const Rollup& r);
// One line: "fail nodecheck.pcie_width gpu 2: 8 lanes outside [16, -] (relative to details.max = 16)".
std::string describe(const Verdict& v);

}  // namespace scalebench::accept
