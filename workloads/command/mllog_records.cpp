#include "workloads/command/mllog_records.hpp"

#include <optional>

#include "common/error.hpp"
#include "record/point_record.hpp"
#include "record/record.hpp"
#include "workloads/mllog/time_to_train.hpp"

namespace scalebench {

namespace {
Json record(const Json& context, const Json& point, const std::string& metric, const std::string& unit,
            const std::string& better, std::vector<double> samples, const std::string& status = "ok",
            const std::string& reason = "") {
  Json run = context;
  run["schema_version"] = kRecordSchemaVersion;
  return PointRecord{point,  metric, unit, better, std::move(samples), "output", Correctness::unchecked(),
                     status, reason}
      .to_json(run);
}
}  // namespace

std::vector<Json> mllog_records(const Json& context, const std::vector<mllog::Run>& runs) {
  if (runs.empty()) throw Error("no :::MLLOG run_start in the output (parser mllog)");
  std::vector<std::optional<double>> per_seed;
  std::vector<double> accuracy, epochs;
  std::string statuses;
  for (const auto& r : runs) {
    per_seed.push_back(r.reached() ? std::optional<double>(r.seconds()) : std::nullopt);
    if (r.final_accuracy()) accuracy.push_back(*r.final_accuracy());
    if (r.reached()) epochs.push_back(r.epochs);
    statuses += (statuses.empty() ? "" : ", ") + r.status;
  }
  const mllog::TimeToTrain t = mllog::time_to_train(per_seed);
  const Json point{{"seeds", t.seeds}, {"reached", t.reached}, {"counts", t.counts}};
  std::vector<Json> out;
  const std::string why = t.counts
                              ? ""
                              : std::to_string(t.reached) + " of " + std::to_string(t.seeds) +
                                    " runs reached the target (run_stop status: " + statuses + "); " + mllog::kSeedRule;
  out.push_back(record(context, point, "time_to_train", "s", "lower", t.seconds, t.counts ? "ok" : "failed", why));
  if (!accuracy.empty()) out.push_back(record(context, point, "eval_accuracy", "fraction", "higher", accuracy));
  if (!epochs.empty()) out.push_back(record(context, point, "epochs", "epochs", "lower", epochs));
  return out;
}

}  // namespace scalebench
