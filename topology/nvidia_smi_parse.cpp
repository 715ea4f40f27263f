#include "topology/nvidia_smi_parse.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "common/error.hpp"

namespace scalebench {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> tokens(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string t;
  while (in >> t) out.push_back(t);
  return out;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "GPU12" -> 12; -1 for anything else (NIC0, mlx5_0, CPU, ...).
int gpu_label(const std::string& token) {
  if (token.size() < 4 || token.compare(0, 3, "GPU") != 0 || !all_digits(token.substr(3))) return -1;
  return std::stoi(token.substr(3));
}

std::string topo_error(std::size_t line, const std::string& what) {
  return "nvidia-smi topo -m: line " + std::to_string(line + 1) + ": " + what;
}

// One matrix cell between two different GPUs.
Link parse_cell(const std::string& cell, std::size_t line, int row, int column) {
  auto where = [&] { return "GPU" + std::to_string(row) + " to GPU" + std::to_string(column) + ": "; };
  Link l;
  if (cell.size() > 2 && cell.compare(0, 2, "NV") == 0 && all_digits(cell.substr(2))) {
    l.kind = "NVLINK";
    l.nvlinks = std::stoi(cell.substr(2));
    if (l.nvlinks <= 0) throw Error(topo_error(line, where() + "'" + cell + "' names no NVLink"));
    return l;
  }
  if (cell == "PIX" || cell == "PXB" || cell == "PHB" || cell == "NODE" || cell == "SYS") {
    l.kind = cell;
    return l;
  }
  if (cell == "SOC") {  // drivers before 384 called SYS "SOC"
    l.kind = "SYS";
    return l;
  }
  if (cell == "X") throw Error(topo_error(line, where() + "'X' (self) off the diagonal"));
  throw Error(
      topo_error(line, where() + "unknown connection '" + cell + "' (expected NV#, PIX, PXB, PHB, NODE or SYS)"));
}

// The column names after the matrix ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID"): known
// phrases are one name each; any other word is a name of its own.
std::vector<std::string> trailing_names(const std::vector<std::string>& words) {
  static const std::vector<std::vector<std::string>> known = {
      {"CPU", "Affinity"}, {"NUMA", "Affinity"}, {"GPU", "NUMA", "ID"}};
  std::vector<std::string> names;
  std::size_t i = 0;
  while (i < words.size()) {
    bool matched = false;
    for (const auto& phrase : known) {
      if (i + phrase.size() <= words.size() && std::equal(phrase.begin(), phrase.end(), words.begin() + i)) {
        std::string name;
        for (const auto& w : phrase) name += (name.empty() ? "" : " ") + w;
        names.push_back(name);
        i += phrase.size();
        matched = true;
        break;
      }
    }
    if (!matched) names.push_back(words[i++]);
  }
  return names;
}

bool is_not_available(const std::string& v) {
  return v.empty() || v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "Not Supported" ||
         v == "[Unknown Error]";
}

int csv_number(const std::string& value, std::size_t line, const char* field) {
  if (is_not_available(value)) return 0;
  if (!all_digits(value) || value.size() > 6)
    throw Error("nvidia-smi --query-gpu: line " + std::to_string(line + 1) + ": " + field +
                ": expected a number or [N/A], got '" + value + "'");
  return std::stoi(value);
}

}  // namespace

TopoMatrix parse_topo_matrix(const std::string& text) {
  const std::vector<std::string> lines = split_lines(text);
  std::size_t header = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto t = tokens(lines[i]);
    if (t.empty() || t[0] != "GPU0") continue;
    if (t.size() > 1 && t[1] == "X")
      throw Error(topo_error(i, "a GPU0 row comes before any header line (expected '\tGPU0\tGPU1 ... CPU Affinity')"));
    header = i;
    break;
  }
  if (header == lines.size())
    throw Error("nvidia-smi topo -m: no header line (one that starts with GPU0) in the output" +
                std::string(text.empty() ? " (it is empty)" : ""));

  // Header: matrix columns up to the first of CPU/NUMA/GPU (the affinity columns), then those.
  const auto head = tokens(lines[header]);
  std::size_t m = 0;
  while (m < head.size() && head[m] != "CPU" && head[m] != "NUMA" && head[m] != "GPU") ++m;
  const std::vector<std::string> columns(head.begin(), head.begin() + static_cast<long>(m));
  const std::vector<std::string> trailing = trailing_names({head.begin() + static_cast<long>(m), head.end()});
  std::vector<std::size_t> gpu_columns;  // position of GPUk among the matrix columns
  for (std::size_t c = 0; c < columns.size(); ++c) {
    int k = gpu_label(columns[c]);
    if (k < 0) continue;  // NIC0, mlx5_0, ...
    if (k != static_cast<int>(gpu_columns.size()))
      throw Error(topo_error(header, "header column '" + columns[c] + "' where GPU" +
                                         std::to_string(gpu_columns.size()) + " was expected"));
    gpu_columns.push_back(c);
  }
  const auto numa_column = std::find(trailing.begin(), trailing.end(), "NUMA Affinity");

  TopoMatrix out;
  for (std::size_t i = header + 1; i < lines.size(); ++i) {
    auto t = tokens(lines[i]);
    if (t.empty() || t[0].rfind("Legend", 0) == 0) break;
    const int row = gpu_label(t[0]);
    if (row < 0) continue;  // a NIC row
    if (row != static_cast<int>(out.links.size()))
      throw Error(topo_error(i, "row '" + t[0] + "' where GPU" + std::to_string(out.links.size()) + " was expected"));
    if (row >= static_cast<int>(gpu_columns.size()))
      throw Error(topo_error(
          i, "row " + t[0] + " but the header has only " + std::to_string(gpu_columns.size()) + " GPU columns"));
    if (t.size() < 1 + columns.size())
      throw Error(topo_error(i, t[0] + " has " + std::to_string(t.size() - 1) + " cells where the header has " +
                                    std::to_string(columns.size()) + " matrix columns"));
    std::vector<Link> links;
    for (std::size_t k = 0; k < gpu_columns.size(); ++k) {
      const std::string& cell = t[1 + gpu_columns[k]];
      if (static_cast<int>(k) == row) {
        if (cell != "X") throw Error(topo_error(i, t[0] + " to itself is '" + cell + "' where X was expected"));
        Link self;
        self.kind = "SELF";
        links.push_back(self);
      } else {
        links.push_back(parse_cell(cell, i, row, static_cast<int>(k)));
      }
    }
    // The values after the matrix, right-aligned on the header's names: an empty CPU Affinity
    // (seen in VMs) leaves fewer values than names.
    const std::vector<std::string> values(t.begin() + 1 + static_cast<long>(columns.size()), t.end());
    if (values.size() > trailing.size())
      throw Error(topo_error(i, t[0] + " has " + std::to_string(values.size()) +
                                    " values after the matrix where the header names " +
                                    std::to_string(trailing.size()) + " columns"));
    int numa = -1;
    if (numa_column != trailing.end()) {
      const std::size_t name_pos = static_cast<std::size_t>(numa_column - trailing.begin());
      const std::size_t shift = trailing.size() - values.size();
      if (name_pos >= shift && all_digits(values[name_pos - shift]) && values[name_pos - shift].size() < 6)
        numa = std::stoi(values[name_pos - shift]);
    }
    out.links.push_back(std::move(links));
    out.numa_nodes.push_back(numa);
  }
  if (out.links.size() != gpu_columns.size())
    throw Error("nvidia-smi topo -m: the header names " + std::to_string(gpu_columns.size()) + " GPUs but " +
                std::to_string(out.links.size()) + " GPU rows follow");
  return out;
}

std::vector<GpuInfo> parse_query_gpu_csv(const std::string& csv) {
  std::vector<GpuInfo> gpus;
  const std::vector<std::string> lines = split_lines(csv);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    std::vector<std::string> f;
    std::stringstream ls(lines[i]);
    std::string cell;
    while (std::getline(ls, cell, ',')) f.push_back(trim(cell));
    if (!lines[i].empty() && lines[i].back() == ',') f.push_back("");
    if (f.size() != 8)
      throw Error("nvidia-smi --query-gpu: line " + std::to_string(i + 1) + ": expected 8 comma-separated fields " +
                  "(index, name, uuid, pci.bus_id, pcie.link.gen.current, pcie.link.gen.max, " +
                  "pcie.link.width.current, pcie.link.width.max), got " + std::to_string(f.size()) + ": '" +
                  trim(lines[i]) + "'");
    if (!all_digits(f[0]) || f[0].size() > 6)
      throw Error("nvidia-smi --query-gpu: line " + std::to_string(i + 1) + ": index: expected a number, got '" + f[0] +
                  "'");
    GpuInfo g;
    g.index = std::stoi(f[0]);
    g.name = f[1];
    g.uuid = f[2];
    g.pci_bus_id = f[3];
    g.pcie_gen = csv_number(f[4], i, "pcie.link.gen.current");
    g.pcie_gen_max = csv_number(f[5], i, "pcie.link.gen.max");
    g.pcie_width = csv_number(f[6], i, "pcie.link.width.current");
    g.pcie_width_max = csv_number(f[7], i, "pcie.link.width.max");
    gpus.push_back(std::move(g));
  }
  return gpus;
}

Topology parse_nvidia_smi(const std::string& topo_m, const std::string& query_gpu_csv) {
  Topology t;
  t.gpus = parse_query_gpu_csv(query_gpu_csv);
  if (t.gpus.empty()) return t;  // source "none": no GPU
  t.source = "nvidia-smi";
  std::sort(t.gpus.begin(), t.gpus.end(), [](const GpuInfo& a, const GpuInfo& b) { return a.index < b.index; });
  for (std::size_t i = 0; i < t.gpus.size(); ++i)
    if (t.gpus[i].index != static_cast<int>(i))
      throw Error("nvidia-smi --query-gpu: GPU indices are not 0.." + std::to_string(t.gpus.size() - 1) +
                  " (found index " + std::to_string(t.gpus[i].index) + " at position " + std::to_string(i) + ")");
  TopoMatrix m = parse_topo_matrix(topo_m);
  if (m.links.size() != t.gpus.size())
    throw Error("nvidia-smi: topo -m shows " + std::to_string(m.links.size()) + " GPUs but --query-gpu lists " +
                std::to_string(t.gpus.size()));
  for (std::size_t i = 0; i < t.gpus.size(); ++i) {
    t.gpus[i].numa_node = m.numa_nodes[i];
    for (std::size_t k = 0; k < t.gpus.size(); ++k) {
      Link& l = m.links[i][k];
      if (l.kind != "NVLINK") continue;
      const int vi = nvlink_version_for_model(t.gpus[i].name), vk = nvlink_version_for_model(t.gpus[k].name);
      l.nvlink_version = vi > 0 && vk > 0 ? std::min(vi, vk) : 0;
      l.nvlink_GBps_per_link = nvlink_GBps_per_link(l.nvlink_version);
    }
  }
  t.links = std::move(m.links);
  return t;
}

}  // namespace scalebench
