#include "accept/battery.hpp"

#include <algorithm>

#include "catalog/registry.hpp"
#include "common/error.hpp"

namespace scalebench::accept {

namespace {

// Experiment names are [A-Za-z0-9_.-]: an agent's name is kept to those.
std::string safe(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out;
}

std::string agent_list(const std::vector<std::string>& agents) {
  std::string s;
  for (const auto& a : agents) s += (s.empty() ? "" : ", ") + std::string("\"") + a + "\"";
  return "[" + s + "]";
}

// The experiment text of one item.
std::string experiment(const std::string& name, const std::string& workload, const std::string& params,
                       const std::vector<std::string>& agents, bool gpus, int repetitions, int timeout_s) {
  std::string placement = "{nodes: " + std::to_string(agents.size()) + ", agents: " + agent_list(agents) +
                          (gpus ? ", gpus_per_node: [all]}" : ", ranks_per_node: [1]}");
  return "name: " + name + "\nworkload: " + workload + "\nparams: {" + params + "}\nplacement: " + placement +
         "\nrepetitions: " + std::to_string(repetitions) + "\ntimeout: " + std::to_string(timeout_s) + "s\n";
}

}  // namespace

Level level_named(const std::string& name) {
  if (name == "quick") return {"quick", 60};
  if (name == "standard") return {"standard", 300};
  if (name == "long") return {"long", 1200};
  throw Error("--level takes quick (<= 1 min per node), standard (<= 5 min) or long (<= 20 min), got '" + name + "'");
}

Item cross_node_all_reduce(const Level& level, const std::vector<std::string>& agents, bool gpus,
                           const std::string& name) {
  // One size, large enough to be bandwidth-bound: 256 MiB between GPUs, 4 MiB on host memory.
  const std::string size = gpus ? "256MiB" : "4MiB";
  const std::string params = "op: all_reduce, min_bytes: " + size + ", max_bytes: " + size +
                             ", step_factor: 1, time_cap: " + (level.name == "quick" ? "1" : "3");
  Item it;
  it.label = "all_reduce over " + std::to_string(agents.size()) + " nodes";
  it.workload = "collective";
  it.agents = agents;
  it.expected_s = level.name == "quick" ? 6 : 12;
  it.yaml = experiment(name, "collective", params, agents, gpus, 20, level.bound_s);
  return it;
}

std::vector<Item> battery(const Level& level, const std::vector<Node>& nodes, const std::string& tag,
                          std::vector<std::string>* left_out) {
  const bool quick = level.name == "quick", lng = level.name == "long";
  const int burn_s = quick ? 0 : lng ? 300 : 30;
  struct Template {
    std::string label, workload, params;
    bool gpu_only;
    double expected_s;
  };
  const int watch_s = quick ? 2 : lng ? 30 : 10;
  std::vector<Template> per_node = {
      {"nodecheck", "nodecheck", "watch_s: " + std::to_string(watch_s), false, watch_s + 2.0},
      {"gemm bf16", "gemm", "precision: bf16, sizes: \"8192\", time_cap: 0.5", true, 5.0},
      {"hbm", "hbm", "", true, quick ? 3.0 : 10.0},
      {"copy h2d", "copy", "test: h2d, bytes: 256MiB, time_cap: 0.5", true, 4},
      {"copy d2h", "copy", "test: d2h, bytes: 256MiB, time_cap: 0.5", true, 4},
      {"all_reduce in the node", "collective",
       "op: all_reduce, min_bytes: 256MiB, max_bytes: 256MiB, step_factor: 1, time_cap: 1", true, 6},
      // long: a larger GEMM, run more times, gives a corrupting GPU more chances to show.
      {"checksum", "checksum", lng ? "n: 8192, repeats: 20" : "", true, lng ? 10.0 : 5.0},
  };
  // Silent data corruption in a training step's kernels too (GEMMs of three shapes, softmax,
  // updates), not only in one GEMM.
  if (!quick)
    per_node.push_back({"checksum train", "checksum", lng ? "kind: train, steps: 40, repeats: 5" : "kind: train", true,
                        lng ? 10.0 : 5.0});
  if (!quick) {
    // standard: the training precisions; long: every precision the gemm workload has.
    std::vector<std::string> precisions = {"fp32", "tf32", "fp16", "fp8e4m3"};
    if (lng) precisions.insert(precisions.end(), {"fp64", "fp8e5m2", "int8"});
    for (const std::string& p : precisions)
      per_node.push_back({"gemm " + p, "gemm", "precision: " + p + ", sizes: \"4096,8192\", time_cap: 1", true, 8.0});
    per_node.push_back({"copy d2d", "copy", "test: d2d, bytes: 256MiB, time_cap: 0.5", true, 20});
    per_node.push_back({"burn gemm", "burn", "target: gemm, duration_s: " + std::to_string(burn_s), true,
                        static_cast<double>(burn_s + 5)});
    per_node.push_back({"burn hbm", "burn", "target: hbm, duration_s: " + std::to_string(burn_s), true,
                        static_cast<double>(burn_s + 5)});
  }
  std::vector<Item> out;
  int k = 0;
  for (const Template& t : per_node) {
    if (!find_workload(t.workload)) {
      if (left_out && std::find(left_out->begin(), left_out->end(), t.workload) == left_out->end())
        left_out->push_back(t.workload);
      continue;
    }
    for (const Node& n : nodes) {
      if (t.gpu_only && n.gpus == 0) continue;
      if (t.workload == "collective" && n.gpus < 2) continue;  // nothing to reduce between
      Item it;
      it.label = t.label;
      it.workload = t.workload;
      it.agents = {n.agent};
      it.expected_s = t.expected_s;
      const std::string name = tag + "-" + std::to_string(++k) + "-" + safe(n.agent);
      it.yaml = experiment(name, t.workload, t.params, it.agents, n.gpus > 0, 5, level.bound_s);
      out.push_back(std::move(it));
    }
  }
  if (nodes.size() >= 2) {
    std::vector<std::string> all;
    bool gpus = true;
    for (const Node& n : nodes) {
      all.push_back(n.agent);
      gpus = gpus && n.gpus > 0;
    }
    out.push_back(cross_node_all_reduce(level, all, gpus, tag + "-allnodes"));
  }
  return out;
}

}  // namespace scalebench::accept
