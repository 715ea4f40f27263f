#pragma once
#include <optional>
#include <string>
#include <vector>

#include "accept/rules.hpp"
#include "common/json.hpp"

namespace scalebench::accept {

// The values a record is expected to lie within; either bound may be open. Neither bound: no
// band is known, and `basis` says why.
struct Band {
  std::optional<double> lo, hi;
  std::string basis;  // how it was found: "0.70 x peak 989.4 TFLOP/s at 1980 MHz", "fleet median ..."
  bool known() const { return lo.has_value() || hi.has_value(); }
};

// Median and median absolute deviation (MAD, unscaled) of `values`; 0 for none.
double median_of(std::vector<double> values);
double mad_of(const std::vector<double>& values);

// The efficiency a `from: peak` band takes for `model`: the entry whose key is the longest part
// of the model's name ("H100" in "NVIDIA H100 80GB HBM3"), else `default`; empty when neither.
std::optional<double> efficiency_for(const BandSpec& spec, const std::string& model);

// The peak a record states, corrected to the SM clock it observed: `peak.value` (compute and HBM
// records) or `link.peak_GBps` (collectives and copies). When the record gives the clock its
// peak assumes (peak.clock_mhz, or "NNNN MHz" in peak.basis) and the clock it ran at
// (details.sm_clock_mhz, or the median of details.series[].sm_clock_mhz), a lower observed clock
// scales the peak down. Empty when the record states no peak.
std::optional<double> corrected_peak(const Json& record, std::string* basis);

// The band of `record` under `spec`. `peers`: the values of the same point from the records of
// the same group (fleet); `baseline`: that point's value in the baseline run, if any.
Band band_for(const BandSpec& spec, const Json& record, const std::vector<double>& peers,
              const std::optional<double>& baseline);

}  // namespace scalebench::accept
