#include "agent/active_runs.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "common/error.hpp"
#include "common/log.hpp"

namespace scalebench {

namespace fs = std::filesystem;

ActiveRuns::ActiveRuns(std::string hostname, std::string job_mapping_dir)
    : hostname_(std::move(hostname)), job_mapping_dir_(std::move(job_mapping_dir)) {
  if (job_mapping_dir_.empty()) return;
  std::error_code ec;
  fs::create_directories(job_mapping_dir_, ec);
  if (ec || !fs::is_directory(job_mapping_dir_))
    throw Error("--job-mapping-dir " + job_mapping_dir_ + ": cannot create the folder" +
                (ec ? ": " + ec.message() : std::string()));
}

void ActiveRuns::write_mapping(int gpu, long long run_id) const {
  // Written beside and renamed over, so that dcgm-exporter never reads half a file; the
  // temporary name is not a number, which dcgm-exporter skips.
  const fs::path file = fs::path(job_mapping_dir_) / std::to_string(gpu);
  const fs::path tmp = fs::path(job_mapping_dir_) / ("." + std::to_string(gpu) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << run_id << "\n";
    if (!out.flush()) {
      log::warn("job mapping: cannot write " + tmp.string());
      return;
    }
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) log::warn("job mapping: cannot rename " + tmp.string());
}

void ActiveRuns::remove_mapping(int gpu, long long run_id) const {
  const fs::path file = fs::path(job_mapping_dir_) / std::to_string(gpu);
  std::ifstream in(file);
  long long written = 0;
  // Only our own file: a site's prolog may have written the GPU's file since.
  if (!(in >> written) || written != run_id) return;
  in.close();
  std::error_code ec;
  fs::remove(file, ec);
  if (ec) log::warn("job mapping: cannot remove " + file.string() + ": " + ec.message());
}

void ActiveRuns::start(const Run& run) {
  std::lock_guard lock(mutex_);
  runs_[run.run_id] = run;
  if (!job_mapping_dir_.empty())
    for (int gpu : run.gpus) write_mapping(gpu, run.run_id);
}

void ActiveRuns::end(long long run_id) {
  std::lock_guard lock(mutex_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  if (!job_mapping_dir_.empty())
    for (int gpu : it->second.gpus) remove_mapping(gpu, run_id);
  runs_.erase(it);
}

std::string ActiveRuns::metrics_text() const {
  using prometheus::ClientMetric;
  prometheus::MetricFamily info{"scalebench_run_info",
                                "1 for each GPU of a run this agent is running now (one series with device=\"host\" "
                                "for a host-memory run); join GPU series on (Hostname, gpu) to label them with the "
                                "run",
                                prometheus::MetricType::Gauge,
                                {}};
  std::lock_guard lock(mutex_);
  for (const auto& [id, run] : runs_) {
    const std::vector<ClientMetric::Label> common{{"run_id", std::to_string(id)},
                                                  {"experiment", run.experiment},
                                                  {"workload", run.workload},
                                                  {"Hostname", hostname_}};
    auto add = [&](std::vector<ClientMetric::Label> labels) {
      ClientMetric m;
      m.label = std::move(labels);
      m.gauge.value = 1;
      info.metric.push_back(std::move(m));
    };
    if (run.gpus.empty()) {
      auto l = common;
      l.push_back({"device", "host"});
      add(std::move(l));
    }
    for (std::size_t i = 0; i < run.gpus.size(); ++i) {
      auto l = common;
      l.push_back({"gpu", std::to_string(run.gpus[i])});
      l.push_back({"UUID", i < run.uuids.size() ? run.uuids[i] : ""});
      l.push_back({"device", "gpu"});
      add(std::move(l));
    }
  }
  if (info.metric.empty()) return "";
  return prometheus::TextSerializer().Serialize({info});
}

}  // namespace scalebench
