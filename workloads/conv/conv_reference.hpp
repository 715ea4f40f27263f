#pragma once
#include <array>
#include <vector>

#include "workloads/compute/precision.hpp"
#include "workloads/conv/conv.hpp"

// The conv workload's correctness check, on the host: where a logical element lies in memory,
// which output elements to sample, and their values recomputed in fp64 from grid_value. Pure.
namespace scalebench::conv {

// A 4-D tensor's logical extents: N, C, H, W (or K, C/groups, R, S for a filter).
using Dims = std::array<long long, 4>;
using Index = std::array<long long, 4>;

Dims input_dims(const ConvShape& s);   // x and dx
Dims filter_dims(const ConvShape& s);  // w and dw
Dims output_dims(const ConvShape& s);  // y and dy
// The tensor a pass writes: y (fwd), dx (bwd_data) or dw (bwd_filter).
Dims result_dims(const ConvShape& s, ConvPass pass);
long long element_count(const Dims& d);

// Offset of logical element `i` in memory: NCHW order, or NHWC (channels last; a filter's is KRSC).
long long storage_offset(const Dims& d, Layout layout, const Index& i);
// Logical (N,C,H,W-order) linear index of element `i`: grid_value's argument.
long long logical_index(const Dims& d, const Index& i);

// About `count` elements spread evenly over a tensor, first and last included, none twice.
std::vector<Index> sample_indices(const Dims& d, long long count);
// How many outputs to sample for a pass: fewer when each costs a long sum (backward-filter
// sums over N x P x Q), so the check stays well under a second.
long long sample_count(const ConvShape& s, ConvPass pass);

// Terms summed for one result element (interior, no padding): C/g x R x S for fwd, K/g x R x S
// / (stride_h x stride_w) for bwd_data, N x P x Q for bwd_filter.
double reduction_length(const ConvShape& s, ConvPass pass);
// The size a result's rounding error is measured against (the tolerance's floor). Direct
// algorithms (implicit GEMM and the like) round like a sum of random-signed terms: the typical
// result, sqrt(terms) x rms(input)^2. Transform algorithms (FFT, Winograd) compute in a transformed
// domain whose rounding does not cancel that way; they get the worst-case bound of a sum,
// terms x mean|input|^2.
double result_scale(const ConvShape& s, ConvPass pass, bool transform_algorithm = false);

// Element `i` of the pass's result, in fp64, from the grid values of x, w and dy.
double reference_element(const ConvShape& s, ConvPass pass, const Index& i);

}  // namespace scalebench::conv
