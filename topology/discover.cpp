#include "topology/discover.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/process.hpp"
#include "topology/nvidia_smi_parse.hpp"
#include "topology/nvml.hpp"

namespace scalebench {

namespace {

struct Captured {
  int exit_code = -1;  // 127: the program could not be run; -1: timed out or not started
  std::string output;  // stdout and stderr together
  std::string why;     // when exit_code != 0
};

// Runs a short command with a deadline and a size limit on what it prints.
Captured run_captured(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  Captured c;
  try {
    ChildProcess::Options o;
    o.capture_output = true;
    ChildProcess child = ChildProcess::spawn(argv, o);
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool eof = false;
    while (!eof && std::chrono::steady_clock::now() < deadline && c.output.size() < (4u << 20)) {
      pollfd p{child.output_fd(), POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        ssize_t n = read(child.output_fd(), buf, sizeof buf);
        if (n <= 0)
          eof = true;
        else
          c.output.append(buf, static_cast<std::size_t>(n));
      }
    }
    c.exit_code = child.terminate_group(std::chrono::milliseconds(500));
    if (!eof) {
      c.exit_code = -1;
      c.why = "no answer within " + std::to_string(timeout.count()) + " ms";
    } else if (c.exit_code != 0) {
      std::string first = c.output.substr(0, c.output.find('\n'));
      c.why = "exit code " + std::to_string(c.exit_code) + (first.empty() ? "" : ": " + first);
    }
  } catch (const std::exception& e) {
    c.exit_code = -1;
    c.why = e.what();
  }
  return c;
}

Topology all_sys(std::vector<GpuInfo> gpus) {
  Topology t;
  t.source = "nvidia-smi";
  t.gpus = std::move(gpus);
  for (std::size_t i = 0; i < t.gpus.size(); ++i) {
    t.links.emplace_back(t.gpus.size());
    t.links[i][i].kind = "SELF";
  }
  return t;
}

Topology read_with_nvidia_smi(const DiscoverOptions& o) {
  std::vector<std::string> argv = {o.nvidia_smi};
  argv.insert(argv.end(), kNvidiaSmiQueryGpuArgs.begin(), kNvidiaSmiQueryGpuArgs.end());
  Captured csv = run_captured(argv, o.nvidia_smi_timeout);
  if (csv.exit_code != 0) {
    // 127: not installed (a host-only node); 6: "No devices were found".
    if (csv.exit_code == 127 || csv.exit_code == 6)
      log::debug("GPU topology: " + o.nvidia_smi + " --query-gpu: " + csv.why);
    else
      log::warn("GPU topology: " + o.nvidia_smi + " --query-gpu failed: " + csv.why);
    return Topology{};
  }
  std::vector<GpuInfo> gpus = parse_query_gpu_csv(csv.output);
  if (gpus.empty()) return Topology{};
  Captured topo = run_captured({o.nvidia_smi, "topo", "-m"}, o.nvidia_smi_timeout);
  if (topo.exit_code != 0) {
    log::warn("GPU topology: " + o.nvidia_smi + " topo -m failed (" + topo.why +
              "); every GPU pair is taken as SYS (no NVLink known)");
    std::sort(gpus.begin(), gpus.end(), [](const GpuInfo& a, const GpuInfo& b) { return a.index < b.index; });
    return all_sys(std::move(gpus));
  }
  return parse_nvidia_smi(topo.output, csv.output);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

Topology discover_topology(const DiscoverOptions& options) {
  Topology t;
  bool read = false;
  try {
    NvmlLibrary nvml = NvmlLibrary::open(options.nvml_library);
    if (nvml.available()) {
      t = nvml.read_topology();
      read = true;
    } else {
      log::debug("GPU topology: NVML not available: " + nvml.unavailable_reason());
    }
  } catch (const std::exception& e) {
    log::warn(std::string("GPU topology: reading NVML failed: ") + e.what() + "; trying nvidia-smi");
  }
  if (!read) {
    try {
      t = read_with_nvidia_smi(options);
    } catch (const std::exception& e) {
      log::warn(std::string("GPU topology: ") + e.what());
      t = Topology{};
    }
  }
  if (t.gpus.empty()) return Topology{};
  for (GpuInfo& g : t.gpus)
    if (g.numa_node < 0) g.numa_node = read_pci_numa_node(g.pci_bus_id, options.sysfs_root);
  log::info("GPU topology: " + std::to_string(t.gpus.size()) + " GPUs, read through " + t.source);
  return t;
}

Topology discover_devices(const std::vector<std::string>& ids) {
  try {
    return restrict_to(discover_topology(), ids);
  } catch (const std::exception& e) {
    log::warn(std::string("GPU topology unknown: ") + e.what());
    return Topology{};
  }
}

Topology restrict_to(const Topology& topology, const std::vector<std::string>& ids) {
  Topology out;
  out.source = topology.source;
  std::vector<std::size_t> picked;
  for (const std::string& id : ids) {
    const std::string bus = canonical_pci_bus_id(id);
    std::size_t found = topology.gpus.size();
    for (std::size_t i = 0; i < topology.gpus.size(); ++i) {
      const GpuInfo& g = topology.gpus[i];
      if ((!bus.empty() && canonical_pci_bus_id(g.pci_bus_id) == bus) ||
          (!g.uuid.empty() && lower(g.uuid) == lower(id))) {
        found = i;
        break;
      }
    }
    if (found == topology.gpus.size()) {
      std::string known;
      for (const GpuInfo& g : topology.gpus) known += (known.empty() ? "" : ", ") + g.pci_bus_id;
      throw Error("restrict_to: no GPU has the PCI bus id or UUID '" + id +
                  "' (the topology has: " + (known.empty() ? std::string("no GPU") : known) + ")");
    }
    if (std::find(picked.begin(), picked.end(), found) != picked.end())
      throw Error("restrict_to: '" + id + "' names GPU " + topology.gpus[found].pci_bus_id + " a second time");
    picked.push_back(found);
  }
  for (std::size_t a : picked) {
    out.gpus.push_back(topology.gpus[a]);
    std::vector<Link> row;
    for (std::size_t b : picked) row.push_back(topology.links.at(a).at(b));
    out.links.push_back(std::move(row));
  }
  return out;
}

int read_pci_numa_node(const std::string& pci_bus_id, const std::string& sysfs_root) {
  const std::string bus = canonical_pci_bus_id(pci_bus_id);
  if (bus.empty()) return -1;
  std::ifstream in(sysfs_root + "/bus/pci/devices/" + bus + "/numa_node");
  int node = -1;
  if (!(in >> node) || node < 0) return -1;
  return node;
}

}  // namespace scalebench
