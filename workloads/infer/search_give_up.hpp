#pragma once
// A Server search trial's early stop, as both run loops (loadgen_loop.hpp, token_loop.hpp) apply
// it: the p-th percentile of the scheduled queries' latency is certain to pass its bound once more
// of them are late (done past it, or still waiting past it) than the percentile leaves, so the
// trial can stop there rather than drain a backlog the search has no use for.
#include <cstddef>
#include <cstdint>
#include <string>

namespace scalebench::infer {

// How many of `scheduled` queries may be late while the `percentile`-th can still be within the
// bound (nearest rank: floor((1 - percentile / 100) x scheduled)).
std::uint64_t late_queries_allowed(double percentile, std::size_t scheduled);

// Why a trial stopped: "stopped after 3.9 s: 52 of 5175 scheduled <what> are past 2000 ms, more
// than p99 allows".
std::string give_up_reason(double elapsed_s, std::uint64_t late, std::size_t scheduled, const std::string& what,
                           double bound_ms, double percentile);

}  // namespace scalebench::infer
