#include "workloads/nodecheck/node_checks.hpp"

#include <optional>

#include "record/record.hpp"
#include "workloads/nodecheck/library_versions.hpp"

namespace scalebench::nodecheck {

namespace {

// Builds the records of one node; each check is one call.
class Checks {
 public:
  Checks(const Json& context, const std::string& host) : context_(context), host_(host) {}

  void reading(const NvmlGpuHealth* gpu, const std::string& check, double value, const std::string& unit,
               const std::string& better, Json details = Json::object()) {
    Json r = base(gpu, check);
    r["unit"] = unit;
    r["better"] = better;
    r["value"] = value;
    r["stats"] = Json{{"n", 1},       {"median", value}, {"mean", value},      {"stddev", 0.0},    {"cv", 0.0},
                      {"min", value}, {"max", value},    {"samples", {value}}, {"stop", "reading"}};
    r["details"] = std::move(details);
    r["status"] = "ok";
    r["reason"] = "";
    out_.push_back(std::move(r));
  }

  void skipped(const NvmlGpuHealth* gpu, const std::string& check, const std::string& why) {
    Json r = base(gpu, check);
    r["unit"] = "";
    r["better"] = "";
    r["value"] = nullptr;
    r["status"] = "skipped";
    r["reason"] = why;
    out_.push_back(std::move(r));
  }

  template <class T>
  void optional_reading(const NvmlGpuHealth& gpu, const std::string& check, const std::optional<T>& v,
                        const std::string& unit, const std::string& better, Json details = Json::object()) {
    if (v)
      reading(&gpu, check, static_cast<double>(*v), unit, better, std::move(details));
    else
      skipped(&gpu, check, "not offered by this GPU or driver");
  }

  std::vector<Json> take() { return std::move(out_); }

 private:
  Json base(const NvmlGpuHealth* gpu, const std::string& check) const {
    Json r = context_;
    r["metric"] = check;
    r["point"] = Json{{"check", check}, {"gpu", gpu ? gpu->index : -1}, {"host", host_}};
    if (gpu) r["point"]["model"] = gpu->name;
    if (gpu) r["point"]["uuid"] = gpu->uuid;
    r["time"] = utc_timestamp();
    return r;
  }

  const Json& context_;
  std::string host_;
  std::vector<Json> out_;
};

const NvmlGpuHealth* same_gpu(const std::vector<NvmlGpuHealth>& after, const std::string& uuid) {
  for (const auto& g : after)
    if (g.uuid == uuid) return &g;
  return nullptr;
}

// The rise of each NVLink error counter over the watch window, judged as DCGM's health watch
// judges it: replay and recovery counts (link faults), and CRC errors per second (they matter only
// at high rates).
void nvlink_error_checks(Checks& c, const NvmlGpuHealth& g, const NvmlGpuHealth* later, double window_s) {
  if (!g.nvlink_errors || !later || !later->nvlink_errors) {
    for (const char* check : {"nvlink_replay_errors", "nvlink_recovery_errors", "nvlink_crc_errors"})
      c.skipped(&g, check, "NVLink error counters are not offered by this GPU or driver");
    return;
  }
  const NvLinkErrorCounts &a = *g.nvlink_errors, &b = *later->nvlink_errors;
  auto rise = [](unsigned long long before, unsigned long long after) {
    return static_cast<double>(after - std::min(after, before));
  };
  auto counts = [&](unsigned long long before, unsigned long long after) {
    return Json{{"before", before}, {"after", after}, {"window_s", window_s}};
  };
  c.reading(&g, "nvlink_replay_errors", rise(a.replay, b.replay), "count", "lower", counts(a.replay, b.replay));
  c.reading(&g, "nvlink_recovery_errors", rise(a.recovery, b.recovery), "count", "lower",
            counts(a.recovery, b.recovery));
  Json crc = counts(a.crc, b.crc);
  crc["count"] = rise(a.crc, b.crc);
  c.reading(&g, "nvlink_crc_errors", window_s > 0 ? rise(a.crc, b.crc) / window_s : rise(a.crc, b.crc), "errors/s",
            "lower", std::move(crc));
}

void gpu_checks(Checks& c, const NodeFacts& f, std::size_t i) {
  const NvmlGpuHealth& g = f.before[i];
  if (f.xids.known)
    c.reading(&g, "xid_events", xids_of(f.xids, g.pci_bus_id), "count", "lower",
              Json{{"source", "kernel log"}, {"recent", f.xids.lines}});
  else
    c.skipped(&g, "xid_events", "unknown: " + f.xids.why_unknown);
  c.optional_reading(g, "persistence_mode", g.persistence_mode, "bool", "higher");
  c.optional_reading(g, "ecc_mode", g.ecc_enabled, "bool", "higher",
                     Json{{"pending", g.ecc_enabled_pending ? Json(*g.ecc_enabled_pending) : Json()}});
  if (g.retired_pages_pending) c.reading(&g, "retired_pages_pending", *g.retired_pages_pending, "bool", "lower");
  if (g.remap_pending)
    c.reading(&g, "row_remap_pending", (*g.remap_pending || g.remap_failure.value_or(false)) ? 1 : 0, "bool", "lower",
              Json{{"correctable_rows", g.remapped_rows_correctable.value_or(0)},
                   {"uncorrectable_rows", g.remapped_rows_uncorrectable.value_or(0)},
                   {"pending", *g.remap_pending},
                   {"failure", g.remap_failure.value_or(false)}});
  if (!g.retired_pages_pending && !g.remap_pending)
    c.skipped(&g, "row_remap_pending", "neither row remapping nor page retirement is offered by this GPU or driver");
  std::optional<double> limit_w, default_w;
  if (g.power_limit_mw) limit_w = *g.power_limit_mw / 1000.0;
  if (g.default_power_limit_mw) default_w = *g.default_power_limit_mw / 1000.0;
  c.optional_reading(g, "power_limit", limit_w, "W", "higher",
                     Json{{"default", default_w ? Json(*default_w) : Json()}});
  c.optional_reading(g, "applications_clock", g.applications_sm_clock_mhz, "MHz", "higher",
                     Json{{"max", g.max_sm_clock_mhz ? Json(*g.max_sm_clock_mhz) : Json()}});
  if (g.pcie_gen > 0)
    c.reading(&g, "pcie_gen", g.pcie_gen, "gen", "higher", Json{{"max", g.pcie_gen_max}});
  else
    c.skipped(&g, "pcie_gen", "not offered by this GPU or driver");
  if (g.pcie_width > 0)
    c.reading(&g, "pcie_width", g.pcie_width, "lanes", "higher", Json{{"max", g.pcie_width_max}});
  else
    c.skipped(&g, "pcie_width", "not offered by this GPU or driver");
  if (g.nvlinks > 0) {
    c.reading(&g, "nvlink_up", g.nvlinks_up, "links", "higher", Json{{"present", g.nvlinks}});
    c.optional_reading(g, "nvlink_speed", g.nvlink_speed_mbps, "MB/s", "higher");
    nvlink_error_checks(c, g, same_gpu(f.after, g.uuid), f.watch_s);
  }
  const int numa = i < f.numa_nodes.size() ? f.numa_nodes[i] : -1;
  c.reading(&g, "numa_affinity", numa, "node", "", Json{{"pci_bus_id", g.pci_bus_id}});
}

}  // namespace

std::vector<Json> check_records(const Json& context, const NodeFacts& f) {
  Checks c(context, f.host);
  c.reading(nullptr, "versions", f.system.cuda_driver_version, "version", "",
            Json{{"driver", f.system.driver_version},
                 {"cuda", cuda_version_text(f.system.cuda_driver_version)},
                 {"nccl", f.nccl},
                 {"cudnn", f.cudnn}});
  for (std::size_t i = 0; i < f.before.size(); ++i) gpu_checks(c, f, i);
  return c.take();
}

Json no_nvml_record(const Json& context, const std::string& host, const std::string& why) {
  Json r = status_record(context, "skipped", "no NVML on " + host + ": " + why);
  r["point"] = Json{{"check", "nvml"}, {"gpu", -1}, {"host", host}};
  return r;
}

}  // namespace scalebench::nodecheck
