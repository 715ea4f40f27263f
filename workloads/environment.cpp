#include "workloads/environment.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "common/cpu_binding.hpp"
#include "common/split.hpp"
#include "common/version.hpp"
#include "topology/discover.hpp"

namespace scalebench {

namespace {
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." -> "580.159.04"
std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  auto pos = line.find("Kernel Module");
  if (pos == std::string::npos) return "";
  std::istringstream words(line.substr(pos));
  std::string w;
  while (words >> w)
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) return w;
  return "";
}
Json base_environment(const std::vector<std::string>& hosts, const std::set<std::string>& models,
                      const std::string& mpi_version, const std::string& backend) {
  Json e{{"hostnames", hosts},
         {"gpu_models", Json(std::vector<std::string>(models.begin(), models.end()))},
         {"nvidia_driver", nvidia_driver_version()},
         {"mpi", mpi_version},
         {"backend", backend},
         {"scalebench_version", kVersion},
         {"git_revision", kGitRevision}};
  for (const char* var : {"CUDA_VISIBLE_DEVICES", kCpuBindingVariable, "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE",
                          "NCCL_NET", "NCCL_P2P_LEVEL", "NCCL_NVLS_ENABLE", "NCCL_ALGO", "NCCL_PROTO"})
    if (const char* v = std::getenv(var)) e["env"][var] = v;
  return e;
}
}  // namespace

RunEnvironment capture_environment(const MpiSession& mpi, const std::string& backend,
                                   const std::vector<std::string>& devices, const Json& gpu_versions) {
  // One line per process: host, local rank, the CPUs it is bound to (read back from the kernel)
  // and their NUMA nodes, then its devices separated by ';'.
  const Json bound = cpu_binding_read_back();
  std::string numa;
  for (int n : bound["numa_nodes"]) numa += (numa.empty() ? "" : ",") + std::to_string(n);
  std::string mine = mpi.hostname() + "|" + std::to_string(mpi.local_rank()) + "|" + bound["cpus"].get<std::string>() +
                     "|" + numa + "|";
  for (std::size_t i = 0; i < devices.size(); ++i) mine += (i ? ";" : "") + devices[i];
  const auto all = mpi.all_gather(mine);
  std::vector<std::string> hosts;
  std::set<std::string> models;
  Json out = Json::array();
  Json binding = Json::array();
  int gpus = 0;
  for (std::size_t r = 0; r < all.size(); ++r) {
    // The first four fields; the devices after them hold '|' of their own.
    std::size_t at = 0;
    for (int i = 0; i < 4; ++i) at = all[r].find('|', at) + 1;
    const auto f = split(all[r].substr(0, at - 1), '|');
    const std::string& host = f.at(0);
    const int local_rank = std::stoi(f.at(1));
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    Json nodes = Json::array();
    for (const auto& n : split(f.at(3), ','))
      if (!n.empty()) nodes.push_back(std::stoi(n));
    binding.push_back(Json{{"rank", r}, {"host", host}, {"cpus", f.at(2)}, {"numa_nodes", nodes}});
    const std::string list = all[r].substr(at);
    if (list.empty()) {
      out.push_back(Json{{"rank", r}, {"host", host}, {"local_rank", local_rank}});
      continue;
    }
    for (const auto& dev : split(list, ';')) {
      const auto id = split(dev, '|');
      Json d{{"rank", r}, {"host", host}, {"local_rank", local_rank}};
      if (id.size() >= 3) {
        d["gpu"] = id[0];
        d["uuid"] = id[1];
        d["pci_bus_id"] = id[2];
        models.insert(id[0]);
      }
      out.push_back(std::move(d));
      ++gpus;
    }
  }
  RunEnvironment e;
  e.placement = Json{{"nodes", hosts.size()}, {"ranks", mpi.size()}, {"ranks_per_node", mpi.local_size()},
                     {"gpus", gpus},          {"hosts", hosts},      {"devices", out}};
  e.environment = base_environment(hosts, models, mpi.library_version(), backend);
  e.environment["binding"] = binding;
  for (const auto& [k, v] : gpu_versions.items()) e.environment[k] = v;
  return e;
}

RunEnvironment capture_local_environment(int ranks, const Topology& gpus, const std::string& backend) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::set<std::string> models;
  Json devices = Json::array();
  const int per_rank = ranks > 0 && !gpus.gpus.empty() ? std::max<int>(1, gpus.gpus.size() / ranks) : 1;
  for (std::size_t i = 0; i < gpus.gpus.size(); ++i) {
    const GpuInfo& g = gpus.gpus[i];
    const int rank = std::min<int>(static_cast<int>(i) / per_rank, std::max(ranks - 1, 0));
    devices.push_back(Json{{"rank", rank},
                           {"host", host},
                           {"local_rank", rank},
                           {"gpu", g.name},
                           {"uuid", g.uuid},
                           {"pci_bus_id", g.pci_bus_id}});
    models.insert(g.name);
  }
  RunEnvironment e;
  const std::vector<std::string> hosts{host};
  e.placement = Json{{"nodes", 1},     {"ranks", ranks},    {"ranks_per_node", ranks}, {"gpus", gpus.gpus.size()},
                     {"hosts", hosts}, {"devices", devices}};
  e.environment = base_environment(hosts, models, "", backend);
  // The program's ranks are its own to bind: what this process (their parent) was bound to.
  Json bound = cpu_binding_read_back();
  bound["rank"] = 0;
  bound["host"] = host;
  e.environment["binding"] = Json::array({bound});
  if (!gpus.gpus.empty()) e.environment["topology"] = to_json(gpus);
  return e;
}

Topology placement_topology(const Json& placement) {
  std::vector<std::string> ids;
  for (const auto& d : placement.value("devices", Json::array()))
    if (d.contains("pci_bus_id") && d.value("host", "") == placement["hosts"][0])
      ids.push_back(d["pci_bus_id"].get<std::string>());
  return discover_devices(ids);
}

}  // namespace scalebench
