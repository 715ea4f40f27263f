#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// Baseline against candidate (`scalebench compare`, docs/compare.md): every ok point record of
// the two record sets is matched by what was measured, never by experiment name, so two
// experiments (or a stored baseline file) compare point by point.

// Parameters left out of the match by default: how a point was sampled, not what was measured
// (every workload's measurement parameters, as the registry declares them). The sweep bounds are
// among them because the point's own size is in the key.
const std::vector<std::string>& default_ignored_params();

// The key two records of the same measurement share: workload, variant, metric, unit, params
// (without round, default_ignored_params() and `ignore`, keys sorted), placement nodes, ranks
// and gpus, and the point without what the sampler chose (iters, blocked). No experiment, run,
// round or host.
Json point_key(const Json& record, const std::vector<std::string>& ignore = {});

struct CompareOptions {
  double tolerance_pct = 5;                // used where no reference of the point gives one
  std::vector<std::string> ignore_params;  // beyond default_ignored_params()
  std::string metric;                      // only this metric when not empty
};

enum class Verdict { kRegression, kMissing, kUnchanged, kImprovement, kNew };
std::string to_string(Verdict v);

struct CompareRow {
  Json key;  // workload, variant, metric, unit, params (ignored ones removed), nodes, ranks, gpus, point
  std::string workload, variant, metric, unit, better;
  Json params, point;  // of the first matching record, for display
  int nodes = 0, ranks = 0, gpus = 0;
  // Each side's median over its matching records' values (every round and run of the point).
  std::optional<double> baseline, candidate;
  int baseline_records = 0, candidate_records = 0;
  // (candidate - baseline) / |baseline| x 100, signed as measured: a regression is negative for
  // better=higher (less bandwidth) and positive for better=lower (more time). NaN when absent.
  double change_pct = 0;
  // 95% noise band of the change: the distribution-free interval of candidate/baseline over both
  // sides' pooled samples (ratio_interval), in %. NaN when there are too few samples for it.
  double band_low_pct = 0, band_high_pct = 0;
  std::size_t baseline_samples = 0, candidate_samples = 0;  // pooled stats.samples behind the band
  double tolerance_pct = 0;
  std::string tolerance_from;  // "reference" (the records' references) or "option"
  Verdict verdict = Verdict::kUnchanged;
  std::string note;  // e.g. why a point is missing (the candidate's record failed)
};

// Rows worst first: regressions (largest first), missing, unchanged, improvements, new.
std::vector<CompareRow> compare_records(const Json& baseline, const Json& candidate, const CompareOptions& options);

// The Hodges-Lehmann interval of a shift, as the Mann-Whitney U test gives it: with the n x m
// pairwise differences sorted, [d(k), d(nm+1-k)] covers the shift with at least 95%. Returns k
// (1-based), exact from U's distribution for n x m <= 2500, else from its normal approximation;
// 0 when even [min, max] falls short of 95% (3 and 3 values, or 2 and up to 7).
std::size_t mann_whitney_k(std::size_t n, std::size_t m);

// 95% interval of the ratio candidate/baseline: the Hodges-Lehmann interval of the shift between
// the logs of the two sets of values (so every pairwise ratio c/b counts; robust to outliers, no
// assumption of normality). None when a value is not positive or there are too few values.
// Sets over 1000 values are thinned to 1000 evenly spaced order statistics first.
struct RatioInterval {
  double low = 0, high = 0;
};
std::optional<RatioInterval> ratio_interval(std::vector<double> baseline, std::vector<double> candidate);

// How many rows have each verdict (every verdict present, zero or not).
std::map<Verdict, int> count_verdicts(const std::vector<CompareRow>& rows);

// One row as JSON (NaN fields as null), for --format json and other tools.
Json to_json(const CompareRow& row);

// The tolerance (%) that a record's references allow on its worse side: (target - lower_bound)
// / |target| for better=higher, (upper_bound - target) / |target| for better=lower; the
// smallest when several apply. None when no reference bounds that side.
std::optional<double> reference_tolerance_pct(const Json& record);

// Records from a file as `scalebench results --format json` writes it (one JSON object a line) or
// a JSON array of them. Throws Error naming the file, line and field of the first bad record.
Json parse_records_text(const std::string& text, const std::string& file);

}  // namespace scalebench
