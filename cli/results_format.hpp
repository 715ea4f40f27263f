#pragma once
#include <ostream>
#include <string>

#include "common/json.hpp"

namespace scalebench {

// Writes result records the way `scalebench results --format` asks: a table people read (one
// row per measured point, one column per metric), CSV for spreadsheets, or JSON lines.
void write_table(std::ostream& out, const Json& records);
void write_csv(std::ostream& out, const Json& records);
void write_json_lines(std::ostream& out, const Json& records);

// Records whose reference check failed, as lines "experiment run metric: value vs bounds".
std::vector<std::string> reference_failures(const Json& records);

}  // namespace scalebench
