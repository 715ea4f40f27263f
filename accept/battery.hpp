#pragma once
#include <string>
#include <vector>

namespace scalebench::accept {

// The levels of `scalebench accept`, each with the time it may take per node.
struct Level {
  std::string name;  // quick | standard | long
  int bound_s = 60;  // per node: every item of a node, one after another, fits in this
};
// Throws Error naming the levels for an unknown name.
Level level_named(const std::string& name);

// One node as the battery sees it: its agent's name and how many GPUs it has.
struct Node {
  std::string agent;
  int gpus = 0;
};

// One experiment of the battery: on one node (`agents` = {that node}) or over several (the
// collective between nodes, and the bisection's halves and pairs).
struct Item {
  std::string label;  // "gemm bf16", "nodecheck", ...
  std::string workload;
  std::vector<std::string> agents;
  double expected_s = 0;  // what it should take, for the ETA
  std::string yaml;       // the experiment, ready to submit
};

// The battery of `level` for these nodes: per node the configuration checks and, where it has
// GPUs, GEMM, HBM, host and peer copies, all-reduce inside the node, stress and the checksum;
// over the nodes (two or more) an all-reduce between them. Workloads this build does not know
// (find_workload) are left out, and named in `left_out`. `tag` makes the experiment names unique.
std::vector<Item> battery(const Level& level, const std::vector<Node>& nodes, const std::string& tag,
                          std::vector<std::string>* left_out);

// The all-reduce between `agents` (one rank per node on host memory, every GPU on GPU nodes),
// at the battery's one message size: the battery's cross-node item and each bisection step.
Item cross_node_all_reduce(const Level& level, const std::vector<std::string>& agents, bool gpus,
                           const std::string& name);

}  // namespace scalebench::accept
