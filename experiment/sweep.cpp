#include "experiment/sweep.hpp"

#include <algorithm>

#include "catalog/workload_schema.hpp"

namespace scalebench {

Json to_json(const RunSpec& r) {
  Json env = Json::object();
  for (const auto& [k, v] : r.env) env[k] = v;
  Json j{{"index", r.index},
         {"experiment", r.experiment},
         {"workload", r.workload},
         {"params", r.params},
         {"variant", r.variant},
         {"round", r.round},
         {"transport", r.transport},
         {"env", env},
         {"nodes", r.nodes},
         {"ranks_per_node", r.ranks_per_node},
         {"gpus_per_node", r.gpus_per_node},
         {"gpu", r.gpu},
         {"repetitions", r.repetitions},
         {"timeout_s", r.timeout_s},
         {"priority", r.priority},
         {"retries", r.retries},
         {"skip_reason", r.skip_reason},
         {"fail_reason", r.fail_reason}};
  if (!r.command.is_null()) j["command"] = r.command;
  if (!r.agents.empty()) j["agents"] = r.agents;
  return j;
}

int gpus_per_node_of(const Json& spec) {
  if (!spec.value("gpu", false)) return 0;
  return spec.value("gpus_per_node", spec.value("ranks_per_node", 1));
}

RunSpec run_spec_from_json(const Json& j) {
  RunSpec r;
  r.index = j.value("index", 0);
  r.experiment = j.value("experiment", "");
  r.workload = j.value("workload", "");
  r.params = j.value("params", Json::object());
  r.variant = j.value("variant", "");
  r.round = j.value("round", 1);
  r.transport = j.value("transport", "");
  if (j.contains("env"))
    for (const auto& [k, v] : j["env"].items()) r.env[k] = v.get<std::string>();
  r.nodes = j.value("nodes", 1);
  r.ranks_per_node = j.value("ranks_per_node", 1);
  r.gpus_per_node = gpus_per_node_of(j);
  r.gpu = j.value("gpu", false);
  r.repetitions = j.value("repetitions", 20);
  r.timeout_s = j.value("timeout_s", 600.0);
  r.priority = j.value("priority", 0);
  r.retries = j.value("retries", 0);
  r.skip_reason = j.value("skip_reason", "");
  r.fail_reason = j.value("fail_reason", "");
  r.command = j.value("command", Json());
  if (j.contains("agents") && j["agents"].is_array()) r.agents = j["agents"].get<std::vector<std::string>>();
  return r;
}

namespace {
// Every assignment of the sweep's parameters: the matrix's product times the zip's tuples.
std::vector<Json> sweep_points(const Experiment& ex) {
  std::vector<Json> points{Json::object()};
  for (const auto& axis : ex.matrix) {
    std::vector<Json> next;
    for (const auto& p : points)
      for (const auto& v : axis.values) {
        Json q = p;
        q[axis.param] = v;
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  if (!ex.zip.empty()) {
    std::vector<Json> next;
    for (const auto& p : points)
      for (std::size_t i = 0; i < ex.zip.front().values.size(); ++i) {
        Json q = p;
        for (const auto& axis : ex.zip) q[axis.param] = axis.values[i];
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}
}  // namespace

std::vector<RunSpec> expand(const Experiment& ex, const ClusterShape& shape) {
  // Placements: GPU counts on GPU clusters, rank counts on host-memory ones; "all" resolves here.
  std::vector<int> per_node;
  if (shape.gpu) {
    for (const auto& g : ex.placement.gpus_per_node)
      per_node.push_back(g.is_string() ? shape.gpus_per_node : g.get<int>());
  } else {
    per_node = ex.placement.ranks_per_node;
  }
  std::vector<int> unique;
  for (int n : per_node)
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(n);

  std::vector<Variant> variants;
  for (const auto& v : ex.variants)
    if (v.when == "any" || (v.when == "gpu") == shape.gpu) variants.push_back(v);
  if (variants.empty()) {
    Variant only;
    only.name = "default";
    variants.push_back(std::move(only));
  }

  std::vector<RunSpec> runs;
  for (int nodes : ex.placement.nodes)
    for (int n : unique)
      for (const auto& point : sweep_points(ex))
        for (int round = 1; round <= ex.rounds; ++round)
          for (const auto& v : variants) {
            RunSpec r;
            r.index = static_cast<int>(runs.size());
            r.experiment = ex.name;
            r.workload = v.workload.empty() ? ex.workload : v.workload;
            if (v.command)
              r.command = to_json(*v.command);
            else if (ex.command && r.workload == "command")
              r.command = to_json(*ex.command);
            r.params = ex.params;
            for (const auto& [k, val] : point.items()) r.params[k] = val;
            for (const auto& [k, val] : v.params.items()) r.params[k] = val;
            r.variant = v.name;
            r.round = round;
            r.transport = v.transport;
            r.env = v.env;
            r.nodes = nodes;
            r.ranks_per_node = n;
            r.gpu = shape.gpu;
            r.repetitions = ex.repetitions;
            r.timeout_s = ex.timeout_s;
            r.priority = ex.priority;
            r.agents = ex.placement.agents;
            r.retries = ex.retries;
            if (r.gpu) {
              r.gpus_per_node = n;
              std::string why;
              r.ranks_per_node = processes_per_node(r.workload, r.params, n, &why);
              if (!why.empty()) r.skip_reason = why;
            }
            if (r.workload == "command" && r.command.value("launch", "") == "once") r.ranks_per_node = 1;
            // GPU-only workloads on a cluster without GPUs: skipped records with the reason, not failed runs.
            const WorkloadDef* run_wl = find_workload(r.workload);
            if (run_wl && run_wl->needs_gpus && !shape.gpu)
              r.skip_reason = "the " + r.workload + " workload needs GPUs; no agent has any";
            if (r.params.contains("backend")) {
              std::string b = r.params["backend"];
              if (b == "auto")
                r.params["backend"] = shape.gpu ? "nccl" : "mpi";
              else if (b == "nccl" && !shape.gpu)
                r.skip_reason = "backend nccl needs GPUs; no agent has any";
              else if (b == "mpi" && shape.gpu) {
                r.gpu = false;  // host-memory run on a GPU node
                r.gpus_per_node = 0;
                r.ranks_per_node = n;
                r.skip_reason.clear();
              }
            }
            const int capacity = std::max(shape.max_gpus_per_node, shape.gpus_per_node);
            if (r.skip_reason.empty() && shape.gpu && r.gpu && n > capacity) {
              std::string why =
                  "needs " + std::to_string(n) + " GPUs per node; the largest agent has " + std::to_string(capacity);
              if (ex.placement.oversize == "skip")
                r.skip_reason = why;
              else
                r.fail_reason = why;
            }
            if (r.skip_reason.empty() && r.gpu && !r.transport.empty() && r.transport != "nvlink" &&
                r.nodes * r.gpus_per_node == 1)
              r.skip_reason = "one GPU crosses no link: transport " + r.transport + " would measure the same as nvlink";
            if (run_wl && r.skip_reason.empty()) {
              std::string cross = check_param_set(*run_wl, r.params);
              if (!cross.empty()) r.skip_reason = "invalid parameter combination: " + cross;
            }
            runs.push_back(std::move(r));
          }
  return runs;
}

}  // namespace scalebench
