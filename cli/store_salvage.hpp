#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// What `scalebench results --db` reads from a store file that SQLite reports as damaged
// ("database disk image is malformed"): every record it can still read, row by row, each with
// its record_id, and the ranges of record ids it could not.
struct Salvage {
  Json records = Json::array();
  std::vector<std::string> problems;  // one line each: a range of ids, or a table, not read, and why
};

// Reads the records of `path` (opened read-only, never written) in record_id order, stepping
// over what cannot be read: when a read fails, it looks for the next record id it can reach
// (doubling the step, then narrowing it down) and goes on from there. `experiment` (a name, or
// an id when the experiments table can still be read; "" for all) keeps the records that name it.
Salvage salvage_records(const std::string& path, const std::string& experiment);

}  // namespace scalebench
