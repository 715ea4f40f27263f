#pragma once
#include <string>
#include <string_view>
#include <vector>

// CSV as RFC 4180 writes it, for every table the CLI and the report print as CSV.
namespace scalebench {

// One field: as is, or in double quotes (inner quotes doubled) when it holds a comma, a quote,
// a line feed or a carriage return.
std::string csv_field(std::string_view text);

// One record: the fields quoted as needed, comma-separated, ended by "\n".
std::string csv_row(const std::vector<std::string>& fields);

}  // namespace scalebench
