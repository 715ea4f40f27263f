#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "analysis/variant_ratio.hpp"
#include "common/json.hpp"

namespace scalebench {

// Writes result records the way `scalebench results --format` asks: a table people read (one
// row per measured point, one column per metric), CSV for spreadsheets, or JSON lines.
void write_table(std::ostream& out, const Json& records);
void write_csv(std::ostream& out, const Json& records);
void write_json_lines(std::ostream& out, const Json& records);

// Variant ratios (scalebench ratio): one row per point, with the interval and how it was paired.
void write_ratios(std::ostream& out, const std::vector<VariantRatio>& ratios, const std::string& numerator,
                  const std::string& denominator, const std::string& format);

// Records whose reference check failed, as lines "experiment run metric: value vs bounds".
std::vector<std::string> reference_failures(const Json& records);

}  // namespace scalebench
