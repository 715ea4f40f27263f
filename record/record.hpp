#pragma once
#include <string>

#include "common/json.hpp"
#include "experiment/spec.hpp"

namespace scalebench {

// Result records: one metric of one measured point, as JSON (docs/records.md lists every field).
inline constexpr int kRecordSchemaVersion = 1;

// What starts each record line a workload prints for the agent to read (scalebench-run's
// `--emit records`, a command workload's program): the rest of the line is the record's JSON.
inline constexpr char kRecordLinePrefix[] = "@@SCALEBENCH_RECORD ";

// Now, as records write it: "2026-11-21T12:00:00Z".
std::string utc_timestamp();

// The fields every record of a run shares: run id, experiment, params, variant, placement.
Json record_context(long long run_id, const Json& run_spec, const Json& placement);

// A record that carries no measurement, only an outcome: failed, timeout or skipped, with why.
Json status_record(const Json& context, const std::string& status, const std::string& reason);

// Empty when the record has every required field with the right type, else what is wrong.
std::string validate_record(const Json& record);

// How a record fares against a reference: null when the reference does not apply to it, else
// {target, lower_bound, upper_bound, unit, outcome: pass|fail}.
Json evaluate_reference(const Reference& ref, const Json& record);

}  // namespace scalebench
