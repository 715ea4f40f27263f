#pragma once
#include <string>

#include "accept/rules.hpp"
#include "common/json.hpp"

namespace scalebench::accept {

// What a verdict needs to know of a record, whichever workload wrote it.
// The node: point.host, else the one host of a single-node run, else "" (a run over several nodes).
std::string host_of(const Json& record);
// The GPU index: point.gpu, else -1 (the node, or the run, as a whole).
int gpu_of(const Json& record);
// The GPU model: point.model, else the run's only entry of environment.gpu_models, else "".
std::string model_of(const Json& record);
// A field by its dotted path ("details.checksum", "point.size", "link.peak_GBps"); null when absent.
Json field_at(const Json& record, const std::string& path);
// Whether `rule` selects `record`: workload, metric and every point field equal.
bool selects(const Rule& rule, const Json& record);
// The record's group under rule.group_by ("H100|4096" ...).
std::string group_key(const Rule& rule, const Json& record);

}  // namespace scalebench::accept
