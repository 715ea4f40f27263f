#include "report/sections/sections.hpp"

#include <algorithm>
#include <set>

#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

// The header: where and with what the records were measured.
void add_header(Report& rep, const Json& records) {
  std::set<std::string> experiments, hosts, models, scalebench, drivers, cuda, nccl, cudnn, mpi, peers;
  std::string first, last;
  int most_gpus = 0;
  for (const auto& r : records) {
    experiments.insert(r.value("experiment", ""));
    const Json pl = r.value("placement", Json::object());
    for (const auto& h : pl.value("hosts", Json::array())) hosts.insert(h.get<std::string>());
    most_gpus = std::max(most_gpus, pl.value("gpus", 0));
    const std::string time = r.value("time", "");
    if (!time.empty() && (first.empty() || time < first)) first = time;
    if (time > last) last = time;
    if (!r.contains("environment")) continue;
    const Json& e = r["environment"];
    for (const auto& m : e.value("gpu_models", Json::array())) models.insert(m.get<std::string>());
    auto add = [&](std::set<std::string>& s, const char* key) {
      if (e.contains(key) && e[key].is_string() && !e[key].get<std::string>().empty()) s.insert(e[key]);
    };
    if (e.contains("scalebench_version"))
      scalebench.insert(e.value("scalebench_version", "") + " (" + e.value("git_revision", "") + ")");
    add(drivers, "nvidia_driver"), add(cuda, "cuda_runtime"), add(nccl, "nccl"), add(cudnn, "cudnn"), add(mpi, "mpi");
    add(peers, "nccl_tests_version");
  }
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& v : s) out += (out.empty() ? "" : ", ") + v;
    return out.empty() ? std::string("-") : out;
  };
  rep.header.push_back({"experiments", join(experiments)});
  rep.header.push_back({"records", std::to_string(records.size())});
  rep.header.push_back({"measured", first.empty() ? "-" : first + " to " + last});
  rep.header.push_back({"hosts", join(hosts)});
  rep.header.push_back({"GPUs", models.empty() ? "none (host-memory MPI workloads)"
                                               : join(models) + ", up to " + std::to_string(most_gpus) + " per run"});
  rep.header.push_back({"scalebench", join(scalebench)});
  rep.header.push_back({"NVIDIA driver", join(drivers)});
  rep.header.push_back({"CUDA runtime", join(cuda)});
  rep.header.push_back({"NCCL", join(nccl)});
  rep.header.push_back({"cuDNN", join(cudnn)});
  rep.header.push_back({"MPI", join(mpi)});
  if (!peers.empty()) rep.header.push_back({"nccl-tests", join(peers)});

  // The widest topology any record carries: nvidia-smi topo -m's matrix with PCIe links.
  const Json* topo = nullptr;
  for (const auto& r : records) {
    if (!r.contains("environment") || !r["environment"].contains("topology")) continue;
    const Json& t = r["environment"]["topology"];
    if (t.value("gpus", Json::array()).size() > (topo ? (*topo)["gpus"].size() : 0)) topo = &t;
  }
  if (!topo) return;
  const Json& g = (*topo)["gpus"];
  rep.topology = make_table("topology", "GPU topology (" + topo->value("source", "") + ")",
                            "NV<n>: n NVLinks between the pair; PIX, PXB, PHB, NODE, SYS: the PCIe path class", {});
  rep.topology.columns = {"GPU", "model", "PCI bus", "PCIe", "NUMA"};
  rep.topology.numeric = {false, false, false, false, true};
  for (std::size_t j = 0; j < g.size(); ++j) {
    rep.topology.columns.push_back("GPU" + std::to_string(j));
    rep.topology.numeric.push_back(false);
  }
  for (std::size_t i = 0; i < g.size(); ++i) {
    std::vector<std::string> row = {
        "GPU" + std::to_string(i), g[i].value("name", ""), g[i].value("pci_bus_id", ""),
        "Gen" + std::to_string(g[i].value("pcie_gen", 0)) + " x" + std::to_string(g[i].value("pcie_width", 0)),
        std::to_string(g[i].value("numa_node", -1))};
    for (std::size_t j = 0; j < g.size(); ++j) {
      const Json l = (*topo)["links"][i][j];
      const std::string kind = l.value("kind", "");
      row.push_back(kind == "SELF" ? "X" : kind == "NVLINK" ? "NV" + std::to_string(l.value("nvlinks", 0)) : kind);
    }
    rep.topology.rows.push_back(row);
  }
}

}  // namespace scalebench::sections
