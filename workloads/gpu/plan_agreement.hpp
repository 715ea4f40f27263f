#pragma once
// Whether two of cuDNN's plans for one graph answer alike: a sample of the output tensor each
// wrote, and how far apart the samples lie against what rounding in another order allows. Tuning
// keeps only plans that agree with the heuristic's first: on an H200 (cuDNN 9.19) two engines of
// ResNet-50's fused fp16 graphs answered for other samples of the batch.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <vector>

namespace scalebench::gpu {

// Elements of a device tensor of `elements` values of type t (INT8, FP8_E4M3, HALF, BFLOAT16 or
// FLOAT), 16-byte pieces at even steps over the whole of it (all of it when small), as numbers.
// Enqueued on `stream`, which it synchronises.
std::vector<double> sample_output(const void* y, std::int64_t elements, cudnnDataType_t t, cudaStream_t stream);

// The samples' largest difference over what two correct plans may differ by (the sums rounded in
// another order: an output step in 8 bits, 2% of the largest magnitude in 16 bits and fp32, one
// E4M3 step at the largest): at most 1 when they agree. NaN where both are NaN agrees; where one
// is, the result is infinite.
double disagreement(const std::vector<double>& got, const std::vector<double>& reference, cudnnDataType_t t);

}  // namespace scalebench::gpu
