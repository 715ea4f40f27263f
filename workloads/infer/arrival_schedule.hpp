#pragma once
// When the Server scenario issues its queries: a Poisson process at the target rate, as LoadGen's
// (exponential gaps from a seeded generator), so that two runs of one seed issue alike and a run
// can be repeated exactly.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace scalebench::infer {

// Issue times in seconds from the start, ascending, the first after one gap; `qps` > 0.
std::vector<double> poisson_arrivals(double qps, std::size_t count, std::uint64_t seed);

}  // namespace scalebench::infer
