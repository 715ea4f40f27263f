#include "common/cpu_binding.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/error.hpp"
#include "common/launcher_ranks.hpp"
#include "common/log.hpp"
#include "common/split.hpp"

namespace scalebench {

namespace {
int number(std::string_view s, std::string_view whole) {
  int v = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0 || v >= CPU_SETSIZE)
    throw Error("CPU list '" + std::string(whole) + "': '" + std::string(s) + "' is not a CPU number");
  return v;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
  std::set<int> cpus;
  std::string_view rest = text;
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.remove_suffix(1);
  if (rest.empty()) return {};
  for (const std::string& field : split(rest, ',')) {
    const std::string_view item = field;
    const auto dash = item.find('-');
    const int lo = number(item.substr(0, dash), text);
    const int hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1), text);
    if (hi < lo) throw Error("CPU list '" + std::string(text) + "': range " + std::string(item) + " runs backwards");
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return {cpus.begin(), cpus.end()};
}

std::string cpu_list_text(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> numa_node_cpus(int node, const std::string& sysfs_root) {
  if (node < 0) return {};
  const std::string line = read_line(sysfs_root + "/devices/system/node/node" + std::to_string(node) + "/cpulist");
  try {
    return parse_cpu_list(line);
  } catch (const Error&) {
    return {};
  }
}

std::vector<int> numa_nodes_of(const std::vector<int>& cpus, const std::string& sysfs_root) {
  std::vector<int> nodes;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(sysfs_root + "/devices/system/node", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("node", 0) != 0 || name.size() == 4 ||
        !std::all_of(name.begin() + 4, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    const int node = std::stoi(name.substr(4));
    const std::vector<int> mine = numa_node_cpus(node, sysfs_root);
    if (std::any_of(cpus.begin(), cpus.end(), [&](int c) { return std::binary_search(mine.begin(), mine.end(), c); }))
      nodes.push_back(node);
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

void apply_cpu_binding(const std::string& spec, int local_rank) {
  const std::vector<std::string> entries = split(spec, ';');
  if (local_rank < 0 || local_rank >= static_cast<int>(entries.size()))
    throw Error(std::string(kCpuBindingVariable) + "='" + spec + "' has no entry for local rank " +
                std::to_string(local_rank));
  const std::string& entry = entries[static_cast<std::size_t>(local_rank)];
  if (entry.empty()) return;
  std::vector<int> cpus;
  try {
    cpus = parse_cpu_list(entry);
  } catch (const Error& e) {
    throw Error(std::string(kCpuBindingVariable) + ": " + e.what());
  }
  // Only CPUs this process may use (a job's cpuset may hold part of the NUMA node): the
  // binding narrows what the launcher gave, never widens it.
  cpu_set_t allowed, set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int count = 0;
  for (int c : cpus)
    if (CPU_ISSET(c, &allowed)) {
      CPU_SET(c, &set);
      ++count;
    }
  if (count == 0) {
    log::warn(std::string(kCpuBindingVariable) + ": none of CPUs " + entry + " of local rank " +
              std::to_string(local_rank) + " is in this process's cpuset; left unbound");
    return;
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    throw Error(std::string(kCpuBindingVariable) + ": the kernel refused CPUs " + entry + " for local rank " +
                std::to_string(local_rank));
}

void apply_cpu_binding_from_environment() {
  const char* spec = std::getenv(kCpuBindingVariable);
  if (!spec || !*spec) return;
  apply_cpu_binding(spec, std::max(launcher_local_rank(), 0));
}

Json cpu_binding_read_back(const std::string& sysfs_root) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return Json{{"cpus", cpu_list_text(cpus)}, {"numa_nodes", numa_nodes_of(cpus, sysfs_root)}};
}

}  // namespace scalebench
