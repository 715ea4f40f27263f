#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "workloads/collective/pattern_formula.hpp"

// The correctness check on the GPU: inputs written and outputs compared where they live, so that
// checking a 1 GiB collective costs milliseconds rather than seconds of host work.
namespace scalebench::collective {

// Writes the rank's input pattern (count elements of shape.dtype) into `buf`.
void fill_input_on_gpu(const formula::CheckShape& shape, void* buf, std::size_t count, cudaStream_t stream);

// Adds to *counter (device memory) the output elements of `out` (count of them) that differ from
// the expectation.
void count_wrong_on_gpu(const formula::CheckShape& shape, const void* out, std::size_t count,
                        unsigned long long* counter, cudaStream_t stream);

}  // namespace scalebench::collective
