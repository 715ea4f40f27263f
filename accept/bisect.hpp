#pragma once
#include <functional>
#include <string>
#include <vector>

namespace scalebench::accept {

// One measurement of the bisection: the collective over `nodes`, and whether it fell below its
// band; bisect() also calls slow a group under 0.7 of the busbw of the fastest of its step.
struct GroupResult {
  bool slow = false;
  double value = 0;  // busbw, GB/s
  std::string why;   // the verdict line, for the log
};

// Runs the collective on several disjoint groups at once and judges each.
using MeasureGroups = std::function<std::vector<GroupResult>(const std::vector<std::vector<std::string>>& groups)>;

struct BisectStep {
  std::vector<std::vector<std::string>> groups;
  std::vector<GroupResult> results;
};

struct BisectOutcome {
  std::vector<std::string> named;  // the node(s) found responsible; empty when none could be
  std::string conclusion;          // one sentence: who, or why nobody
  std::vector<BisectStep> steps;   // what ran, in order: each step's groups ran at the same time
};

// Which of `nodes` makes the collective over all of them slow: the nodes are halved, both halves
// measured at once, and the slow half halved again, down to one node. A half of a single node is
// measured with a node of the fast half beside it (a collective needs two), one pair at a time.
// Steps grow with log2(nodes). Two nodes alone cannot be told apart (each pair is both): it says so.
BisectOutcome bisect(const std::vector<std::string>& nodes, const MeasureGroups& measure);

}  // namespace scalebench::accept
