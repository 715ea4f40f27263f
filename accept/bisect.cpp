#include "accept/bisect.hpp"

#include <algorithm>

namespace scalebench::accept {

namespace {

// The groups of one step are measured under the same load of the machines, at once or one right
// after the other: one under kSlowBesideOthers of the busbw of the fastest of its step is slow
// whatever its band says (a band from another moment, or from groups of another size, may let a
// bad link through). Healthy groups of one step agreed within 17% on a busy 2-core testbed; a
// link with 2 ms and 1% loss left its groups at 0.5-0.64 of the others there, and further below on
// real networks, where the link rather than the CPU limits.
constexpr double kSlowBesideOthers = 0.7;

void mark_slow_beside_others(std::vector<GroupResult>& results) {
  double fastest = 0;
  for (const auto& g : results) fastest = std::max(fastest, g.value);
  if (results.size() < 2 || fastest <= 0) return;
  for (auto& g : results)
    if (!g.slow && g.value < kSlowBesideOthers * fastest) {
      g.slow = true;
      g.why = "busbw " + std::to_string(g.value) + " GB/s, under " + std::to_string(kSlowBesideOthers) + " x the " +
              std::to_string(fastest) + " GB/s of another group of the same step";
    }
}

// The suspects' halves, each made measurable: a lone node gets `good` beside it.
std::vector<std::vector<std::string>> halves(const std::vector<std::string>& suspects, std::vector<std::string>* a,
                                             std::vector<std::string>* b) {
  const auto mid = suspects.begin() + static_cast<std::ptrdiff_t>(suspects.size() / 2);
  a->assign(suspects.begin(), mid);
  b->assign(mid, suspects.end());
  return {*a, *b};
}

// Three nodes and no node known good: each pair, one after another; the node in both slow
// pairs and not in the fast one is named.
BisectOutcome three(const std::vector<std::string>& s, const MeasureGroups& measure, BisectOutcome out) {
  const std::vector<std::vector<std::string>> pairs = {{s[0], s[1]}, {s[1], s[2]}, {s[0], s[2]}};
  BisectStep step;
  for (const auto& p : pairs) {
    step.groups.push_back(p);
    step.results.push_back(measure({p}).at(0));
  }
  mark_slow_beside_others(step.results);
  out.steps.push_back(step);
  for (const std::string& n : s) {
    bool in_all_slow = true;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const bool has = pairs[i][0] == n || pairs[i][1] == n;
      if (has != step.results[i].slow) in_all_slow = false;
    }
    if (in_all_slow) {
      out.named = {n};
      out.conclusion = n + " makes the collective slow: both pairs with it were slow, the pair without it was not";
      return out;
    }
  }
  out.conclusion = "no single node of the three explains which pairs were slow";
  return out;
}

}  // namespace

BisectOutcome bisect(const std::vector<std::string>& nodes, const MeasureGroups& measure) {
  BisectOutcome out;
  if (nodes.size() < 3) {
    out.conclusion = "cannot tell which of " + std::to_string(nodes.size()) +
                     " nodes is slow: every group of two holds both (add a third node, or compare each node's own "
                     "figures)";
    return out;
  }
  std::vector<std::string> suspects = nodes;
  std::string good;  // a node seen in a group that was not slow
  while (suspects.size() > 1) {
    if (suspects.size() == 3 && good.empty()) return three(suspects, measure, std::move(out));
    std::vector<std::string> a, b;
    halves(suspects, &a, &b);
    std::vector<std::vector<std::string>> groups = {a, b};
    const bool lone = a.size() == 1 || b.size() == 1;
    std::vector<GroupResult> results;
    if (!lone) {
      results = measure(groups);  // disjoint: both at once
    } else {
      // A lone node is measured beside a good one, so the groups share it: one after the other.
      for (auto& g : groups)
        if (g.size() == 1) g.push_back(good);
      for (const auto& g : groups) results.push_back(measure({g}).at(0));
    }
    mark_slow_beside_others(results);
    out.steps.push_back({groups, results});
    const bool slow_a = results.at(0).slow, slow_b = results.at(1).slow;
    if (slow_a == slow_b) {
      out.conclusion = slow_a ? "both halves are slow (" + std::to_string(a.size() + b.size()) +
                                    " suspects): more than one node, or what they share, is at fault"
                              : "neither half is slow alone: the fault needs both (the network between them?)";
      out.named.clear();
      return out;
    }
    const std::vector<std::string>& fast_half = slow_a ? b : a;
    good = fast_half.front();
    suspects = slow_a ? a : b;
  }
  out.named = suspects;
  out.conclusion = suspects.front() +
                   " makes the collective slow: every group with it was slow, every group without "
                   "it was not";
  return out;
}

}  // namespace scalebench::accept
