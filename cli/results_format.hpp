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

// A table people read: each column as wide as its widest cell (header included), two spaces
// apart, `numeric` columns right-aligned; the last column unpadded.
void write_aligned(std::ostream& out, const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& numeric);

// Variant ratios (scalebench ratio): one row per point, with the interval and how it was paired.
void write_ratios(std::ostream& out, const std::vector<VariantRatio>& ratios, const std::string& numerator,
                  const std::string& denominator, const std::string& format);

// Records whose reference check failed, as lines "experiment run metric: value vs bounds".
std::vector<std::string> reference_failures(const Json& records);

}  // namespace scalebench
