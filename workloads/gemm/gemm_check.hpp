#pragma once
#include <utility>
#include <vector>

#include "workloads/compute/precision.hpp"
#include "workloads/gemm/shape.hpp"

// The correctness check of a GEMM: sampled output elements against an fp64 reference computed on
// the host from the same input pattern the GPU was filled with (gemm_pattern.hpp). Pure: no CUDA.
namespace scalebench::gemm {

// Element (row, col) of op(A) (which = 0) or op(B) (which = 1) as the GPU holds it.
double input_value(compute::Precision p, unsigned which, long long row, long long col);

// Output element (i, j) in fp64: the sum over l of a(i, l) b(l, j). Exact: the inputs are
// multiples of 1/8 (or integers) and the sums stay far below 2^53.
double reference(compute::Precision p, const Shape& s, long long i, long long j);

// The typical magnitude of an output element, for compute::within_tolerance: sqrt(k) x rms(a) x
// rms(b), where an input's rms is sqrt(24) (times 1/8 for float precisions).
double output_scale(compute::Precision p, const Shape& s);

// The output elements checked: C's four corners, then a deterministic scatter over C; at most
// `count` (fewer when C is smaller), without repeats.
std::vector<std::pair<long long, long long>> sample_indices(const Shape& s, int count);

// How many of `got` (in sample_indices order) are off the reference.
long long count_wrong(compute::Precision p, const Shape& s, const std::vector<std::pair<long long, long long>>& at,
                      const std::vector<double>& got);

}  // namespace scalebench::gemm
