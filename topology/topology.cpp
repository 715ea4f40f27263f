#include "topology/topology.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "common/error.hpp"
#include "common/split.hpp"

namespace scalebench {

namespace {

const Json& field(const Json& object, const char* key, const std::string& path) {
  if (!object.is_object()) throw Error(path + ": expected an object");
  auto it = object.find(key);
  if (it == object.end()) throw Error(path + "." + key + ": missing");
  return *it;
}

int int_field(const Json& object, const char* key, const std::string& path) {
  const Json& v = field(object, key, path);
  if (!v.is_number_integer()) throw Error(path + "." + key + ": expected an integer, got " + v.dump());
  return v.get<int>();
}

std::string string_field(const Json& object, const char* key, const std::string& path) {
  const Json& v = field(object, key, path);
  if (!v.is_string()) throw Error(path + "." + key + ": expected a string, got " + v.dump());
  return v.get<std::string>();
}

void check_position(const Topology& t, int i, const char* what) {
  if (i < 0 || i >= static_cast<int>(t.gpus.size()))
    throw Error(std::string(what) + ": GPU position " + std::to_string(i) + " is out of range (the topology has " +
                std::to_string(t.gpus.size()) + " GPUs)");
}

const Link& link_at(const Topology& t, int i, int j) {
  if (t.links.size() != t.gpus.size() || t.links[static_cast<std::size_t>(i)].size() != t.gpus.size())
    throw Error("topology: the link matrix is not " + std::to_string(t.gpus.size()) + " x " +
                std::to_string(t.gpus.size()));
  return t.links[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
}

bool parse_hex(std::string_view s, unsigned long max, unsigned long& out) {
  if (s.empty() || s.size() > 8) return false;
  out = 0;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    out = out * 16 + static_cast<unsigned long>(std::isdigit(static_cast<unsigned char>(c))
                                                    ? c - '0'
                                                    : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
  }
  return out <= max;
}

std::string format_GBps(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

const std::vector<std::string>& link_kinds() {
  static const std::vector<std::string> kinds = {"SELF", "NVLINK", "PIX", "PXB", "PHB", "NODE", "SYS"};
  return kinds;
}

Json to_json(const Topology& t) {
  Json gpus = Json::array();
  for (const GpuInfo& g : t.gpus)
    gpus.push_back(Json{{"index", g.index},
                        {"name", g.name},
                        {"uuid", g.uuid},
                        {"pci_bus_id", g.pci_bus_id},
                        {"pcie_gen", g.pcie_gen},
                        {"pcie_gen_max", g.pcie_gen_max},
                        {"pcie_width", g.pcie_width},
                        {"pcie_width_max", g.pcie_width_max},
                        {"numa_node", g.numa_node}});
  Json links = Json::array();
  for (const auto& row : t.links) {
    Json r = Json::array();
    for (const Link& l : row) {
      Json cell{{"kind", l.kind}};
      if (l.kind == "NVLINK") {
        cell["nvlinks"] = l.nvlinks;
        cell["nvlink_version"] = l.nvlink_version;
        cell["nvlink_GBps_per_link"] = l.nvlink_GBps_per_link;
      }
      r.push_back(std::move(cell));
    }
    links.push_back(std::move(r));
  }
  return Json{{"source", t.source}, {"gpus", std::move(gpus)}, {"links", std::move(links)}};
}

Topology topology_from_json(const Json& j) {
  Topology t;
  t.source = string_field(j, "source", "topology");
  if (t.source != "nvml" && t.source != "nvidia-smi" && t.source != "none")
    throw Error("topology.source: expected nvml, nvidia-smi or none, got '" + t.source + "'");
  const Json& gpus = field(j, "gpus", "topology");
  if (!gpus.is_array()) throw Error("topology.gpus: expected an array");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string path = "topology.gpus[" + std::to_string(i) + "]";
    const Json& g = gpus[i];
    GpuInfo info;
    info.index = int_field(g, "index", path);
    info.name = string_field(g, "name", path);
    info.uuid = string_field(g, "uuid", path);
    info.pci_bus_id = string_field(g, "pci_bus_id", path);
    info.pcie_gen = int_field(g, "pcie_gen", path);
    info.pcie_gen_max = int_field(g, "pcie_gen_max", path);
    info.pcie_width = int_field(g, "pcie_width", path);
    info.pcie_width_max = int_field(g, "pcie_width_max", path);
    info.numa_node = int_field(g, "numa_node", path);
    t.gpus.push_back(std::move(info));
  }
  const Json& links = field(j, "links", "topology");
  const std::size_t n = t.gpus.size();
  auto bad_shape = [&] {
    return Error("topology.links: expected " + std::to_string(n) + " x " + std::to_string(n) +
                 " (a row and a column per GPU)");
  };
  if (!links.is_array() || links.size() != n) throw bad_shape();
  for (std::size_t i = 0; i < n; ++i) {
    if (!links[i].is_array() || links[i].size() != n) throw bad_shape();
    std::vector<Link> row;
    for (std::size_t k = 0; k < n; ++k) {
      const std::string path = "topology.links[" + std::to_string(i) + "][" + std::to_string(k) + "]";
      const Json& cell = links[i][k];
      Link l;
      l.kind = string_field(cell, "kind", path);
      const auto& kinds = link_kinds();
      if (std::find(kinds.begin(), kinds.end(), l.kind) == kinds.end())
        throw Error(path + ".kind: unknown kind '" + l.kind + "'");
      if ((i == k) != (l.kind == "SELF"))
        throw Error(path + ".kind: SELF belongs on the diagonal and only there, got '" + l.kind + "'");
      if (l.kind == "NVLINK") {
        l.nvlinks = int_field(cell, "nvlinks", path);
        l.nvlink_version = int_field(cell, "nvlink_version", path);
        const Json& speed = field(cell, "nvlink_GBps_per_link", path);
        if (!speed.is_number()) throw Error(path + ".nvlink_GBps_per_link: expected a number, got " + speed.dump());
        l.nvlink_GBps_per_link = speed.get<double>();
      }
      row.push_back(std::move(l));
    }
    t.links.push_back(std::move(row));
  }
  return t;
}

std::string canonical_pci_bus_id(std::string_view id) {
  while (!id.empty() && std::isspace(static_cast<unsigned char>(id.front()))) id.remove_prefix(1);
  while (!id.empty() && std::isspace(static_cast<unsigned char>(id.back()))) id.remove_suffix(1);
  const std::vector<std::string> parts = split(id, ':');
  if (parts.size() != 2 && parts.size() != 3) return "";
  std::string_view dev_fn = parts.back();
  auto dot = dev_fn.find('.');
  if (dot == std::string_view::npos) return "";
  unsigned long domain = 0, bus = 0, device = 0, function = 0;
  if (parts.size() == 3 && !parse_hex(parts[0], 0xffffffffUL, domain)) return "";
  if (!parse_hex(parts[parts.size() - 2], 0xff, bus) || !parse_hex(dev_fn.substr(0, dot), 0x1f, device) ||
      !parse_hex(dev_fn.substr(dot + 1), 0x7, function))
    return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lx:%02lx:%02lx.%lx", domain, bus, device, function);
  return buf;
}

int nvlink_version_for_model(std::string_view gpu_name) {
  std::string name(gpu_name);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("b100") || has("b200") || has("b300")) return 5;                // also GB200, GB300
  if (has("h100") || has("h200") || has("h800") || has("h20")) return 4;  // also GH200
  if (has("a100") || has("a800")) return 3;
  return 0;
}

double nvlink_GBps_per_link(int nvlink_version) {
  switch (nvlink_version) {
    case 1:
      return 20.0;
    case 2:
    case 3:
      return 25.0;
    case 4:
      return 26.5625;
    case 5:
      return 50.0;
    default:
      return 0.0;
  }
}

double pcie_lane_GBps(int pcie_gen) {
  switch (pcie_gen) {
    case 1:
      return 0.25;
    case 2:
      return 0.5;
    case 3:
      return 0.985;
    case 4:
      return 1.969;
    case 5:
      return 3.938;
    case 6:
      return 7.877;
    default:
      return 0.0;
  }
}

double host_link_peak_GBps(const GpuInfo& gpu) {
  const int gen = gpu.pcie_gen_max > 0 ? gpu.pcie_gen_max : gpu.pcie_gen;
  const int width = gpu.pcie_width > 0 ? gpu.pcie_width : gpu.pcie_width_max;
  return width * pcie_lane_GBps(gen);
}

double link_peak_GBps(const Topology& t, int i, int j) {
  check_position(t, i, "link_peak_GBps");
  check_position(t, j, "link_peak_GBps");
  const Link& l = link_at(t, i, j);
  if (l.kind == "SELF") return 0.0;
  if (l.kind == "NVLINK") return l.nvlinks * l.nvlink_GBps_per_link;
  return std::min(host_link_peak_GBps(t.gpus[static_cast<std::size_t>(i)]),
                  host_link_peak_GBps(t.gpus[static_cast<std::size_t>(j)]));
}

bool nvlink_joined(const Topology& t, const std::vector<int>& gpus) {
  for (int i : gpus) check_position(t, i, "nvlink_joined");
  for (std::size_t a = 0; a < gpus.size(); ++a)
    for (std::size_t b = a + 1; b < gpus.size(); ++b) {
      if (gpus[a] == gpus[b]) continue;
      if (link_at(t, gpus[a], gpus[b]).kind != "NVLINK") return false;
    }
  return true;
}

std::string render_matrix(const Topology& t) {
  std::ostringstream out;
  if (t.gpus.empty()) {
    out << "no GPUs (source: " << t.source << ")\n";
    return out.str();
  }
  auto pad = [](std::string s, std::size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
  };
  out << pad("", 8);
  for (std::size_t i = 0; i < t.gpus.size(); ++i) out << pad("GPU" + std::to_string(i), 8);
  out << pad("NUMA", 6) << pad("PCIe", 10) << "Name\n";
  std::vector<std::string> nvlink_notes;
  for (std::size_t i = 0; i < t.gpus.size(); ++i) {
    const GpuInfo& g = t.gpus[i];
    out << pad("GPU" + std::to_string(i), 8);
    for (std::size_t k = 0; k < t.gpus.size(); ++k) {
      const Link& l = link_at(t, static_cast<int>(i), static_cast<int>(k));
      std::string cell = l.kind == "SELF" ? " X" : l.kind == "NVLINK" ? "NV" + std::to_string(l.nvlinks) : l.kind;
      out << pad(cell, 8);
      if (l.kind == "NVLINK") {
        std::string note = "v" + (l.nvlink_version > 0 ? std::to_string(l.nvlink_version) : std::string("?")) + ", " +
                           format_GBps(l.nvlink_GBps_per_link) + " GB/s";
        if (std::find(nvlink_notes.begin(), nvlink_notes.end(), note) == nvlink_notes.end())
          nvlink_notes.push_back(note);
      }
    }
    std::string pcie = "Gen" + (g.pcie_gen_max > 0 ? std::to_string(g.pcie_gen_max) : std::string("?")) + " x" +
                       (g.pcie_width > 0 ? std::to_string(g.pcie_width) : std::string("?"));
    out << pad(g.numa_node >= 0 ? std::to_string(g.numa_node) : "-", 6) << pad(pcie, 10) << g.name << "\n";
  }
  out << "source: " << t.source;
  if (!nvlink_notes.empty()) {
    out << "; NV# = # NVLinks (";
    for (std::size_t i = 0; i < nvlink_notes.size(); ++i) out << (i ? "; " : "") << nvlink_notes[i];
    out << " per link and direction)";
  }
  out << "\n";
  return out.str();
}

}  // namespace scalebench
