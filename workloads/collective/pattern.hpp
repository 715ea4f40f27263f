#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "workloads/collective/collective.hpp"
#include "workloads/collective/pattern_formula.hpp"

namespace scalebench::collective {

// Correctness data: each rank's input is a small integer pattern that every dtype holds exactly
// (also summed over all ranks), so the expected output is exact and any wrong element shows.
double input_value(DType t, RedOp r, int nranks, int rank, std::size_t i);

void encode(DType t, double v, std::byte* base, std::size_t i);
double decode(DType t, const std::byte* base, std::size_t i);

std::vector<std::byte> make_input(const Config& c, const Layout& l, int nranks, int rank);
// The value element j of `rank`'s output must hold; nullopt where the op leaves no output
// (non-root ranks of reduce).
std::optional<double> expected_output(const Config& c, const Layout& l, int nranks, int rank, std::size_t j);
// Elements of `out` (recv_count of them) that differ from the expectation.
std::size_t count_wrong(const Config& c, const Layout& l, int nranks, int rank, const std::vector<std::byte>& out);
// The run as the formulas (and the GPU check) see it.
formula::CheckShape check_shape(const Config& c, const Layout& l, int nranks, int rank);

}  // namespace scalebench::collective
