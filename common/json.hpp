#pragma once
// nlohmann/json (Debian's nlohmann-json3-dev): header-only, exact round-trips of numbers, and
// ordered objects so that records read in the order they were written. docs/design.md says why.
#include <nlohmann/json.hpp>

namespace scalebench {
using Json = nlohmann::ordered_json;
}
