// libFuzzer target: an experiment file (YAML) through the parser and validator the CLI and the
// coordinator use, then expanded into runs as a submit does. Bad input must end in a SpecError
// naming what is wrong; any other exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.hpp"
#include "experiment/spec.hpp"
#include "experiment/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalebench;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Experiment ex;
  try {
    ex = parse_experiment(text, "fuzz.yaml");
  } catch (const SpecError&) {
    return 0;  // what submit answers 400 with
  }
  // A cluster of 2-GPU nodes, and one of host-memory nodes: both expansions the coordinator makes.
  for (const ClusterShape& shape : {ClusterShape{true, 2, 2, 2}, ClusterShape{false, 0, 0, 2}})
    for (const RunSpec& run : expand(ex, shape)) (void)to_json(run).dump();
  return 0;
}
