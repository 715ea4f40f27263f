#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scalebench {

// Bounds on an experiment file, checked before its tree is built or walked.
struct YamlLimits {
  std::size_t max_bytes = 1u << 20;           // the largest example is under 4 KiB
  std::size_t max_nodes = 100000;             // scalars and collections as written
  std::uint64_t max_expanded_nodes = 200000;  // the same with every alias expanded
  int max_depth = 32;
};
// Throws SpecError (file:line:column) for a text over the limits, a malformed one, an empty one
// or one of more than one YAML document. Linear in the text's size, whatever its aliases.
void check_yaml_bounds(std::string_view yaml_text, std::string_view source_name, const YamlLimits& limits = {});

}  // namespace scalebench
