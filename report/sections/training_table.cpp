#include "report/sections/sections.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analysis/variant_ratio.hpp"
#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

namespace {

// A row of the table: one network at one precision and per-GPU batch.
using RowKey = std::tuple<std::string, std::string, std::string>;

std::string param_text(const Json& params, const char* key) {
  return params.contains(key) ? text_of(params[key]) : std::string();
}

RowKey row_key(const Json& params) {
  return {param_text(params, "model"), param_text(params, "precision"), param_text(params, "batch")};
}

// A run's training images/s over all its GPUs (not inference, not time to accuracy): train
// records each GPU's `throughput` and, on several, the run's `throughput_total`.
bool is_run_total(const RecordView& r, int gpus) {
  if (r.workload != "train" || !r.value || r.params().value("mode", std::string("train")) != "train") return false;
  return gpus > 1 ? r.metric == "throughput_total" : r.metric == "throughput";
}

// nvlink / pcie per row and GPU count, of the runs' images/s over all their GPUs.
std::map<std::pair<RowKey, int>, VariantRatio> transport_ratios(const Json& exp_records) {
  std::map<std::pair<RowKey, int>, VariantRatio> out;
  for (const auto& [nv, pc] : nvlink_pcie_variants(exp_records))
    for (auto& v : variant_ratios(exp_records, nv, pc, "throughput_total")) {
      const int gpus = v.key.value("gpus", 0);
      if (gpus < 2 || v.workload != "train") continue;
      out.emplace(std::make_pair(row_key(v.key["params"]), gpus), std::move(v));
    }
  return out;
}

}  // namespace

// tf_cnn_benchmarks' table: a row per network, precision and per-GPU batch; per GPU count the
// images/s, the scaling factor against one GPU and the nvlink/pcie ratio. The images/s of a
// count above one are the nvlink variant's when there is one (what the document's tables show).
void add_training_table(Section& sec, const std::vector<const Json*>& recs, const Json& exp_records) {
  // row -> GPUs -> transport -> records
  std::map<RowKey, std::map<int, std::map<std::string, std::vector<const Json*>>>> cells;
  std::set<int> counts;
  for (const Json* json : recs) {
    const RecordView r(*json);
    const int gpus = workers_of(*json);
    if (!is_run_total(r, gpus)) continue;
    cells[row_key(r.params())][gpus][r.transport].push_back(json);
    counts.insert(gpus);
  }
  // A table is worth it only when the networks scale: some row at one GPU and at more.
  if (!counts.count(1) || counts.size() < 2) return;
  const auto ratios = transport_ratios(exp_records);

  std::vector<std::pair<std::string, bool>> columns = {{"network", false}, {"precision", false}, {"batch/GPU", true}};
  for (int n : counts) {
    const std::string g = std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
    columns.push_back({g + " img/s", true});
    if (n == 1) continue;
    columns.push_back({g + " scaling", true});
    columns.push_back({g + " nvlink/pcie (95% CI)", true});
  }
  Table t = make_table(sec.id + "-training-table", "Training table",
                       "tf_cnn_benchmarks' shape: images/s over all GPUs (median of the samples; above one GPU the "
                       "nvlink variant's), scaling factor = images/s over one GPU's, and the nvlink/pcie ratio of "
                       "images/s (geometric mean of the pairs, 95% interval from Student's t); '-' where not run",
                       columns);
  for (const auto& [key, by_gpus] : cells) {
    const auto& [model, precision, batch] = key;
    std::vector<std::string> row = {model, precision, batch};
    double one = 0;
    if (auto it = by_gpus.find(1); it != by_gpus.end()) {
      std::vector<const Json*> all;
      for (const auto& [transport, rs] : it->second) all.insert(all.end(), rs.begin(), rs.end());
      one = pool(all).median;
    }
    for (int n : counts) {
      const auto it = by_gpus.find(n);
      double figure = 0;
      if (it != by_gpus.end()) {
        const auto nv = it->second.find("nvlink");
        figure = pool(nv != it->second.end() ? nv->second : it->second.begin()->second).median;
      }
      row.push_back(figure > 0 ? format_number(figure) : "-");
      if (n == 1) continue;
      row.push_back(figure > 0 && one > 0 ? format_number(figure / one) : "-");
      const auto r = ratios.find({key, n});
      row.push_back(r == ratios.end() ? "-"
                                      : format_number(r->second.ratio) + " (" + format_number(r->second.ci_low) +
                                            " – " + format_number(r->second.ci_high) + ")");
    }
    t.rows.push_back(std::move(row));
  }
  sec.tables.push_back(std::move(t));
}

}  // namespace scalebench::sections
