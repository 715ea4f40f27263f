#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// The ratio of one variant's figure to another's (nvlink / pcie, say) for each point they share:
// same experiment, parameters (round aside), GPU count, message size and metric (the workload may
// differ: a variant can run another program on the same points).
// Pairs come from interleaved rounds (A1 B1 A2 B2 ...: machine drift cancels within a pair);
// with a single round, from the two runs' samples taken in order. The ratio is the geometric
// mean of the pairs' ratios, with a 95% confidence interval from Student's t on their logs.
struct VariantRatio {
  Json key;  // experiment, params (without round), gpus, ranks, point size, metric
  std::string metric, unit;
  std::string workload;                   // the numerator's records' workload: what names the point
  double numerator = 0, denominator = 0;  // medians of each side over its pairs
  double ratio = 0, ci_low = 0, ci_high = 0;
  int pairs = 0;
  std::string paired_by;  // "rounds" | "samples"
};

// Two-sided 95% Student's t quantile for `dof` degrees of freedom (dof >= 1), from Boost.Math.
double t_quantile_975(int dof);

// Geometric-mean ratio and its 95% CI over paired values (a[i] / b[i]); needs equal sizes >= 1,
// all values positive. With one pair the interval is that single ratio.
struct RatioCi {
  double ratio = 0, low = 0, high = 0;
};
RatioCi paired_ratio(const std::vector<double>& a, const std::vector<double>& b);

// Every ok record of `records` (a JSON array) with variant `numerator` matched with the
// `denominator` records of the same point. `metric` empty: every metric. `ignore_params` are
// left out of the matching (parameters a variant itself sets).
std::vector<VariantRatio> variant_ratios(const Json& records, const std::string& numerator,
                                         const std::string& denominator, const std::string& metric,
                                         const std::vector<std::string>& ignore_params = {});

}  // namespace scalebench
