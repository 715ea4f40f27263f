#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/collective_model.hpp"
#include "common/json.hpp"

namespace scalebench {

// Predictions of collective busbw at a node count not measured yet, and their scores once it is
// (docs/predictions.md): `scalebench predict` makes them from records, the coordinator keeps them
// and scores each against the runs that land later at its node count, the report shows both.

// The goal a prediction is held to: within 10% of what is measured, from 1 MiB up (below, the
// latency term rules, and a few microseconds of jitter are tens of percent).
inline constexpr double kPredictionGoalPct = 10;
inline constexpr double kPredictionScoredFromBytes = 1 << 20;

// What a run must share with a prediction's source records to score it: workload, variant, the
// parameters that say what is measured (round and every workload's measurement parameters left
// out: time caps, size bounds, warm-up) and the collective ranks per node (GPUs per node on GPUs,
// processes per node on host memory). Object keys sorted, so that it compares as text.
// Null for a record that is no collective point (no known `op` in its params).
Json record_series(const Json& record);
// The same for a stored run spec (Store::Run::spec).
Json run_series(const Json& run_spec);
// The same for a prediction (its workload, variant, params and ranks_per_node).
Json prediction_series(const Json& prediction);
// "all_reduce, variant default, 1 rank per node": how messages and tables name a series.
std::string describe_series(const Json& series);

// The predictions of `records` at `nodes`: one per series whose ok time records span 2 node
// counts or more, each as POST /api/v1/predictions takes it: {experiments, workload, variant, op,
// params, ranks_per_node, nodes, fit_nodes, record_ids, model, predicted: [{size, busbw}]}.
// `experiment_ids` are the records' experiments (records carry only names). A series left out
// gets a line in `skipped` saying why.
struct Predictions {
  std::vector<Json> made;
  std::vector<std::string> skipped;
};
Predictions make_predictions(const Json& records, const std::vector<long long>& experiment_ids, int nodes);

// A prediction's `model`: {formula, step_latency_us, bus_bandwidth_by_size: [{size, gbps}, ...]
// (one a size fitted, by size; gbps null where B(S) is infinite, the latency alone), points,
// rank_counts, max_fit_error_pct}.
Json to_json(const CollectiveModel& model);
inline constexpr std::size_t kMaxModelSizes = 1000;  // as many as a prediction's `predicted` may hold
// The model of a prediction's `model` object, for its op; nullopt when a field is missing or wrong,
// and for the single-bandwidth form below.
std::optional<CollectiveModel> collective_model_from_json(const std::string& op, const Json& model);
// Whether `model` is of the form predictions had before one bus bandwidth per size: one
// `bus_bandwidth_gbps` for every size. Stored ones still load and show (nothing reads their model
// but its max_fit_error_pct); a new one is refused.
bool is_single_bandwidth_model(const Json& model);

// A prediction against what was measured at its node count. Per predicted size that has values:
// the median of the measured busbw values and the relative error (predicted - measured) /
// measured; the largest |error| from kPredictionScoredFromBytes up (none without such a size).
struct SizeScore {
  double size = 0, predicted = 0, measured = 0, error_pct = 0;
  std::vector<double> values;  // the busbw records' values behind `measured`
};
struct PredictionScore {
  std::vector<SizeScore> sizes;
  std::optional<double> max_abs_error_pct;
  bool met() const { return max_abs_error_pct && *max_abs_error_pct <= kPredictionGoalPct; }
};
using BusbwBySize = std::map<double, std::vector<double>>;
// `predicted`: a prediction's "predicted" array.
PredictionScore score_prediction(const Json& predicted, const BusbwBySize& measured);
// {goal_pct, scored_from_bytes, max_abs_error_pct (null when none), met, sizes: [{size, predicted,
// measured, error_pct, values}]}
Json to_json(const PredictionScore& score);

// The ok busbw values of `records` by size (records of one run, or several).
BusbwBySize busbw_by_size(const Json& records);
// The values a stored score was made from (its sizes' `values`), to add a later run's to.
BusbwBySize score_values(const Json& score);

}  // namespace scalebench
