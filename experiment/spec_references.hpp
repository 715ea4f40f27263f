#pragma once
#include <yaml-cpp/yaml.h>

#include "catalog/registry.hpp"
#include "experiment/spec.hpp"
#include "experiment/spec_parser.hpp"

namespace scalebench {

// The `references:` block: per metric a target, its band (lower, upper), unit, direction and the
// points it applies to (`where`). `wl` is null when the workload is unknown (its own issue).
void parse_references(SpecParser& p, const WorkloadDef* wl, const YAML::Node& refs, Experiment& ex);

}  // namespace scalebench
