#include "agent/inventory.hpp"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

#include "common/log.hpp"
#include "common/process.hpp"
#include "topology/discover.hpp"

namespace scalebench {

namespace {
std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// Runs a short command and returns its output, or "" when it fails or takes over 10 s.
std::string capture(const std::vector<std::string>& argv) {
  try {
    ChildProcess::Options o;
    o.capture_output = true;
    ChildProcess child = ChildProcess::spawn(argv, o);
    std::string out;
    char buf[4096];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline && out.size() < (1u << 20)) {
      pollfd p{child.output_fd(), POLLIN, 0};
      if (poll(&p, 1, 200) > 0) {
        ssize_t n = read(child.output_fd(), buf, sizeof buf);
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
      }
    }
    int rc = child.terminate_group(std::chrono::milliseconds(500));
    return rc == 0 ? out : "";
  } catch (const std::exception&) {
    return "";
  }
}
// `v` when it is in lo..hi, else `unknown`.
int known_or(int v, int lo, int hi, int unknown) { return v >= lo && v <= hi ? v : unknown; }
}  // namespace

Json parse_gpu_csv(const std::string& csv) {
  Json gpus = Json::array();
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) f.push_back(trim(cell));
    if (f.size() < 6 || f[0].empty() || !std::isdigit(static_cast<unsigned char>(f[0][0]))) continue;
    Json g{{"index", std::stoi(f[0])}, {"name", f[1]}, {"uuid", f[2]}, {"pci_bus_id", f[3]}, {"driver", f[5]}};
    try {
      g["memory_mib"] = std::stoll(f[4]);
    } catch (const std::exception&) {
      g["memory_mib"] = nullptr;
    }
    gpus.push_back(std::move(g));
  }
  return gpus;
}

Json gpu_inventory(const Topology& topology, const Json& smi_gpus) {
  Json gpus = Json::array();
  for (const GpuInfo& g : topology.gpus) {
    Json memory = nullptr;
    std::string driver;
    for (const Json& s : smi_gpus)
      if (!g.uuid.empty() && s.value("uuid", std::string()) == g.uuid) {
        memory = s.value("memory_mib", Json());
        driver = s.value("driver", std::string());
        break;
      }
    // A value no hardware has (a driver's error code read as a number) is sent as unknown: the
    // coordinator refuses a registration with one (request_checks.cpp).
    if (!memory.is_number_integer() || memory.get<long long>() < 0 || memory.get<long long>() > kMaxGpuMemoryMib)
      memory = nullptr;
    gpus.push_back(Json{{"index", g.index},
                        {"name", g.name},
                        {"uuid", g.uuid},
                        {"pci_bus_id", g.pci_bus_id},
                        {"memory_mib", memory},
                        {"driver", driver},
                        {"pcie_gen", known_or(g.pcie_gen, 0, kMaxPcieGen, 0)},
                        {"pcie_gen_max", known_or(g.pcie_gen_max, 0, kMaxPcieGen, 0)},
                        {"pcie_width", known_or(g.pcie_width, 0, kMaxPcieWidth, 0)},
                        {"pcie_width_max", known_or(g.pcie_width_max, 0, kMaxPcieWidth, 0)},
                        {"numa_node", known_or(g.numa_node, -1, kMaxNumaNode, -1)}});
  }
  return gpus;
}

namespace {
// The position in `gpus` that one CUDA_VISIBLE_DEVICES entry names, or -1.
int visible_entry(const Json& gpus, const std::string& entry) {
  if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string::npos)
    return entry.size() < 6 && std::stoi(entry) < static_cast<int>(gpus.size()) ? std::stoi(entry) : -1;
  if (entry.rfind("GPU-", 0) != 0) return -1;  // MIG instances and anything else: CUDA stops there too
  int found = -1;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    if (gpus[i].value("uuid", std::string()).rfind(entry, 0) == 0) {
      if (found >= 0) return -1;  // a prefix of two GPUs' UUIDs names neither
      found = static_cast<int>(i);
    }
  return found;
}
}  // namespace

Json visible_gpus(const Json& gpus, const char* cuda_visible_devices, std::string* ignored) {
  if (!cuda_visible_devices) return gpus;
  std::vector<std::string> entries;
  std::stringstream list(cuda_visible_devices);
  for (std::string entry; std::getline(list, entry, ',');) entries.push_back(trim(entry));
  Json out = Json::array();
  std::vector<bool> taken(gpus.size(), false);
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const int i = visible_entry(gpus, entries[k]);
    if (i < 0 || taken[static_cast<std::size_t>(i)]) {
      if (ignored)
        for (std::size_t rest = k; rest < entries.size(); ++rest) *ignored += (rest > k ? "," : "") + entries[rest];
      break;
    }
    taken[static_cast<std::size_t>(i)] = true;
    out.push_back(gpus[static_cast<std::size_t>(i)]);
  }
  return out;
}

Json read_node_gpus() {
  Topology topology = discover_topology();
  // Memory size and driver version are not part of the topology: nvidia-smi adds them when it is
  // there (the GPU list itself comes from the topology).
  Json smi = Json::array();
  if (!topology.gpus.empty())
    smi = parse_gpu_csv(capture({"nvidia-smi", "--query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version",
                                 "--format=csv,noheader,nounits"}));
  return Json{{"gpus", gpu_inventory(topology, smi)}, {"topology", to_json(topology)}};
}

Json read_gpu_inventory() { return read_node_gpus()["gpus"]; }

Json read_capabilities(const std::string& run_program) {
  std::string out = capture({run_program, "--capabilities"});
  try {
    return Json::parse(out);
  } catch (const std::exception&) {
    log::warn("cannot read capabilities of " + run_program + "; assuming the MPI backend only");
    return Json{{"workloads", Json::array()}, {"backends", {"mpi"}}};
  }
}

}  // namespace scalebench
