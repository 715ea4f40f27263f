#include "workloads/train/tta_records.hpp"

#include <optional>

#include "record/point_record.hpp"
#include "record/record.hpp"
#include "record/table_printer.hpp"
#include "workloads/mllog/time_to_train.hpp"

namespace scalebench::train {

namespace {
Json point_of(const TtaShape& shape, const TtaConfig& cfg, Json seed) {
  return Json{{"model", shape.model},
              {"data", shape.data},
              {"precision", shape.precision},
              {"gpus", shape.gpus},
              {"global_batch", shape.global_batch},
              {"target_accuracy", cfg.target_accuracy},
              {"seed", std::move(seed)}};
}

double lost_points(const SeedResult& r, const QuantizedAccuracy& q) { return 100 * (r.final_accuracy - q.accuracy); }

mllog::TimeToTrain summarize_seeds(const std::vector<SeedResult>& seeds, bool with_eval) {
  std::vector<std::optional<double>> per_seed;
  for (const auto& s : seeds)
    per_seed.push_back(s.reached ? std::optional<double>(with_eval ? s.total_s : s.train_s) : std::nullopt);
  return mllog::time_to_train(per_seed);
}
}  // namespace

std::vector<Json> tta_records(const Json& context, const TtaConfig& cfg, const TtaShape& shape,
                              const std::vector<SeedResult>& seeds) {
  Json run = context;
  run["schema_version"] = kRecordSchemaVersion;
  std::vector<Json> out;
  for (const SeedResult& s : seeds) {
    const std::string why = s.reached ? ""
                                      : "aborted: test accuracy " + fixed_number(s.final_accuracy, 4) + " after " +
                                            std::to_string(s.epochs) + " epochs (max_epochs) is below the target " +
                                            fixed_number(cfg.target_accuracy, 4);
    Json r = PointRecord{point_of(shape, cfg, s.seed),
                         "time_to_target",
                         "s",
                         "lower",
                         s.reached ? std::vector<double>{s.total_s} : std::vector<double>{},
                         "target",
                         Correctness::unchecked(),
                         s.reached ? "ok" : "failed",
                         why}
                 .to_json(run);
    r["details"] = Json{{"reached", s.reached},
                        {"epochs", s.epochs},
                        {"time_without_eval_s", s.train_s},
                        {"time_with_eval_s", s.total_s},
                        {"final_accuracy", s.final_accuracy},
                        {"eval_epochs", s.eval_epochs},
                        {"accuracies", s.accuracies},
                        {"images_per_s", s.images_per_s},
                        {"peak_lr", shape.peak_lr},
                        {"mllog", s.mllog}};
    out.push_back(std::move(r));
    for (const QuantizedAccuracy& q : s.quantized) {
      const double lost = lost_points(s, q);
      const bool within = q.problem.empty() && lost <= cfg.quantize_tolerance_points;
      Json point = point_of(shape, cfg, s.seed);
      point["precision"] = q.format;
      Json qr = PointRecord{std::move(point),
                            "quantized_accuracy",
                            "fraction",
                            "higher",
                            q.problem.empty() ? std::vector<double>{q.accuracy} : std::vector<double>{},
                            "evaluation",
                            Correctness::unchecked(),
                            within ? "ok" : "failed",
                            within ? ""
                            : !q.problem.empty()
                                ? q.format + ": " + q.problem
                                : q.format + " lost " + fixed_number(lost, 2) + " points of test accuracy against " +
                                      shape.precision + "'s " + fixed_number(s.final_accuracy, 4) + " (at most " +
                                      fixed_number(cfg.quantize_tolerance_points, 2) + ")"}
                    .to_json(run);
      qr["details"] = Json{{"trained_precision", shape.precision},
                           {"trained_accuracy", s.final_accuracy},
                           {"lost_points", lost},
                           {"tolerance_points", cfg.quantize_tolerance_points},
                           {"reached", s.reached},
                           {"quantization", q.quantization}};
      out.push_back(std::move(qr));
    }
  }
  const mllog::TimeToTrain with = summarize_seeds(seeds, true), without = summarize_seeds(seeds, false);
  const std::string why = with.counts ? ""
                                      : std::to_string(with.reached) + " of " + std::to_string(with.seeds) +
                                            " seeds reached the target; " + mllog::kSeedRule;
  Json summary = PointRecord{point_of(shape, cfg, "all"),
                             "time_to_target",
                             "s",
                             "lower",
                             with.seconds,
                             "target",
                             Correctness::unchecked(),
                             with.counts ? "ok" : "failed",
                             why}
                     .to_json(run);
  Json details = with.to_json();
  if (without.stats.n > 0) details["median_without_eval_s"] = without.stats.median;
  summary["details"] = details;
  out.push_back(std::move(summary));
  if (cfg.cost_per_gpu_hour > 0 && with.stats.n > 0) {
    std::vector<double> costs;
    for (double t : with.seconds) costs.push_back(cost_to_target(t, shape.gpus, cfg.cost_per_gpu_hour));
    Json c = PointRecord{point_of(shape, cfg, "all"),
                         "cost_to_target",
                         "cost",
                         "lower",
                         costs,
                         "target",
                         Correctness::unchecked(),
                         with.counts ? "ok" : "failed",
                         why}
                 .to_json(run);
    c["details"] = Json{{"cost_per_gpu_hour", cfg.cost_per_gpu_hour},
                        {"formula", "time_to_target_s x gpus x cost_per_gpu_hour / 3600"}};
    out.push_back(std::move(c));
  }
  return out;
}

std::string tta_seed_line(const SeedResult& r) {
  return "tta seed=" + std::to_string(r.seed) + " reached=" + (r.reached ? "yes" : "no") +
         " epochs=" + std::to_string(r.epochs) + " accuracy=" + fixed_number(r.final_accuracy, 4) +
         " time_s=" + fixed_number(r.total_s, 3) + " time_without_eval_s=" + fixed_number(r.train_s, 3);
}

std::string tta_quantized_line(const SeedResult& r, const QuantizedAccuracy& q, const TtaConfig& cfg) {
  if (!q.problem.empty())
    return "tta seed=" + std::to_string(r.seed) + " quantized=" + q.format + " failed: " + q.problem;
  const double lost = lost_points(r, q);
  return "tta seed=" + std::to_string(r.seed) + " quantized=" + q.format + " accuracy=" + fixed_number(q.accuracy, 4) +
         " trained=" + fixed_number(r.final_accuracy, 4) + " lost_points=" + fixed_number(lost, 2) +
         " within=" + (lost <= cfg.quantize_tolerance_points ? "yes" : "no");
}

std::string tta_summary_line(const std::vector<SeedResult>& seeds, const TtaConfig& cfg, int gpus) {
  const mllog::TimeToTrain t = summarize_seeds(seeds, true);
  std::string line = "tta summary seeds=" + std::to_string(t.seeds) + " reached=" + std::to_string(t.reached) +
                     " counts=" + (t.counts ? "yes" : "no");
  if (t.stats.n > 0) {
    line += " median_s=" + fixed_number(t.stats.median, 3) + " min_s=" + fixed_number(t.stats.min, 3) +
            " max_s=" + fixed_number(t.stats.max, 3);
    if (cfg.cost_per_gpu_hour > 0)
      line += " cost_to_target=" + fixed_number(cost_to_target(t.stats.median, gpus, cfg.cost_per_gpu_hour), 5);
  }
  return line;
}

}  // namespace scalebench::train
