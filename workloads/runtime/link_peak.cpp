#include "workloads/runtime/link_peak.hpp"

#include <algorithm>
#include <limits>

namespace scalebench {

namespace {
std::string gpu_name(const Topology& t, std::size_t i) { return "GPU" + std::to_string(t.gpus[i].index); }
}  // namespace

Json path_peak(const Topology& t, const std::map<std::string, int>& transports) {
  const std::size_t n = t.gpus.size();
  if (n < 2 || transports.empty()) return nullptr;
  std::vector<int> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<int>(i);
  const bool nvlink = transports.count("P2P") && nvlink_joined(t, all);
  double peak = std::numeric_limits<double>::max();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      peak = std::min(peak, nvlink ? link_peak_GBps(t, static_cast<int>(i), static_cast<int>(j))
                                   : std::min(host_link_peak_GBps(t.gpus[i]), host_link_peak_GBps(t.gpus[j])));
  if (!(peak > 0) || peak == std::numeric_limits<double>::max()) return nullptr;
  return Json{{"path", nvlink ? "NVLINK" : "PCIe"}, {"peak_GBps", peak}};
}

Json copy_path_peak(const Topology& t, int src, int dst, bool peer_access, int directions) {
  const int n = static_cast<int>(t.gpus.size());
  auto in_range = [&](int i) { return i >= -1 && i < n; };
  if (!in_range(src) || !in_range(dst) || (src < 0 && dst < 0) || src == dst) return nullptr;
  double peak = 0;
  std::string path = "PCIe";
  if (src >= 0 && dst >= 0 && peer_access) {
    peak = link_peak_GBps(t, src, dst);
    if (t.links[static_cast<std::size_t>(src)][static_cast<std::size_t>(dst)].kind == "NVLINK") path = "NVLINK";
  } else if (src >= 0 && dst >= 0) {
    peak = std::min(host_link_peak_GBps(t.gpus[static_cast<std::size_t>(src)]),
                    host_link_peak_GBps(t.gpus[static_cast<std::size_t>(dst)]));
  } else {
    peak = host_link_peak_GBps(t.gpus[static_cast<std::size_t>(src >= 0 ? src : dst)]);
  }
  if (!(peak > 0)) return nullptr;
  return Json{{"path", path}, {"peak_GBps", peak * directions}};
}

std::string transport_unavailable(const Topology& t, const std::string& transport) {
  const std::size_t n = t.gpus.size();
  if (n < 2 || t.links.size() != n) return "";
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const Link& l = t.links[i][j];
      const bool nv = l.kind == "NVLINK";
      if (transport == "nvlink" && !nv)
        return "transport nvlink needs NVLink-joined GPUs, but " + gpu_name(t, i) + " and " + gpu_name(t, j) +
               " are joined by " + l.kind;
      if (transport == "p2p-pcie" && nv)
        return "transport p2p-pcie needs GPUs joined by PCIe only, but " + gpu_name(t, i) + " and " + gpu_name(t, j) +
               " are joined by NV" + std::to_string(l.nvlinks) +
               ": P2P between them rides NVLink, so a PCIe P2P figure cannot be measured here";
    }
  return "";
}

void add_link_peak(Json& record, const Json& link, const std::string& percent_of) {
  if (link.is_null()) return;
  record["link"] = link;
  if (record.value("metric", "") == percent_of && record.contains("value") && record["value"].is_number())
    record["pct_of_peak"] = 100.0 * record["value"].get<double>() / link["peak_GBps"].get<double>();
}

}  // namespace scalebench
