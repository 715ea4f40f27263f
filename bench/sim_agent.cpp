#include "bench/sim_agent.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

#include "bench/elapsed.hpp"
#include "common/error.hpp"
#include "common/json.hpp"

namespace scalebench::load {

std::string sim_agent_name(const std::string& prefix, int index) {
  char name[64];
  std::snprintf(name, sizeof name, "%s-%05d", prefix.c_str(), index);
  return name;
}

SimAgent register_sim_agent(const std::string& url, const std::string& name, int gpus) {
  SimAgent a;
  a.name = name;
  a.heartbeat_path = "/api/v1/agents/" + name + "/heartbeat";
  a.client = std::make_unique<HttpClient>(url);
  Json list = Json::array();
  for (int g = 0; g < gpus; ++g)  // every field a real agent's inventory has: the coordinator requires them
    list.push_back({{"index", g},
                    {"name", "NVIDIA H200"},
                    {"uuid", "GPU-" + name + "-" + std::to_string(g)},
                    {"pci_bus_id", ""},
                    {"memory_mib", 143771},
                    {"driver", ""},
                    {"pcie_gen", 5},
                    {"pcie_gen_max", 5},
                    {"pcie_width", 16},
                    {"pcie_width_max", 16},
                    {"numa_node", -1}});
  a.client->post_json("/api/v1/agents/register", Json{{"name", name},
                                                      {"hostname", name},
                                                      {"gpus", list},
                                                      {"slots", gpus},
                                                      {"capabilities", {"nccl", "mpi"}},
                                                      {"version", "load"}});
  return a;
}

bool take_run(SimAgent& agent, const Json& answer) {
  const auto runs = answer.find("runs");
  if (agent.run_id > 0 || runs == answer.end() || !runs->is_array() || runs->empty()) return false;
  agent.run_id = (*runs)[0].at("run_id").get<long long>();
  agent.attempt = (*runs)[0].at("attempt").get<int>();
  agent.next_seq = 0;
  return true;
}

void take_first_run(SimAgent& agent, std::vector<double>* ms, int* busy) {
  Json answer;
  for (int tries = 0; tries < 100; ++tries) {
    const auto start = std::chrono::steady_clock::now();
    answer = agent.client->post_json(agent.heartbeat_path, Json{{"active", Json::array()}});  // it holds none yet
    ms->push_back(ms_since(start));
    if (!answer.value("busy", false)) break;
    ++*busy;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!take_run(agent, answer)) throw Error("heartbeat of " + agent.name + " got no run: " + answer.dump());
}

std::string heartbeat_body(const SimAgent& agent) {
  return agent.run_id > 0 ? "{\"active\":[" + std::to_string(agent.run_id) + "]}" : "{\"active\":[]}";
}

long long submit_runs(const std::string& url, const std::string& name, long long runs, int gpus) {
  const std::string yaml = "name: " + name +
                           "\nworkload: collective\nparams:\n  op: all_reduce\n  dtype: float32\n"
                           "placement:\n  gpus_per_node: [" +
                           std::to_string(gpus) + "]\nrounds: " + std::to_string(runs) + "\n";
  HttpClient user(url, std::chrono::seconds(120));
  HttpResponse r = user.request("POST", "/api/v1/experiments", yaml, "application/yaml");
  if (r.status != 201) throw Error("submit " + name + ": HTTP " + std::to_string(r.status) + " " + r.body);
  return Json::parse(r.body).at("experiment_id").get<long long>();
}

}  // namespace scalebench::load
