#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// Per-node outliers within one experiment, the way a cluster acceptance diagnosis rules over a
// group of nodes (docs/compare.md#per-node-outliers): the same point measured on several hosts,
// one host's figure compared with the group's median.
struct NodeOutlier {
  std::string host;
  std::string metric, unit;
  Json key;                // the group: workload, variant, metric, unit, params, ranks, gpus, point
  double value;            // the host's median over its records of the point (rounds)
  double group_median;     // median of the hosts' values
  double deviation_pct;    // (value - group_median) / |group_median| x 100, signed as measured
  std::size_t group_size;  // hosts in the group
};

// Groups the ok point records of one run on one host each (a run spanning hosts is no node's
// figure) by everything but the host, and flags, in groups of at least 3 hosts, each host whose
// value is worse than the group median by more than threshold_pct (worse: lower for
// better=higher, higher for better=lower). Worst first.
std::vector<NodeOutlier> find_node_outliers(const Json& records, double threshold_pct = 10);

// The host a record's run ran on, or "" when it ran on several (or says nothing of its hosts).
std::string single_host(const Json& record);

Json to_json(const NodeOutlier& o);

}  // namespace scalebench
