#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

// STREAM-style kernels over fp32 arrays in device memory, shared by the hbm and burn workloads.
// Inputs hold small integers (b[i] = i mod 1024, c[i] = (i / 1024) mod 1024), so every result is
// exact in fp32 and a check can count wrong elements without a tolerance.
namespace scalebench::gpu {

enum class StreamOp { kRead, kWrite, kCopy, kTriad };

StreamOp parse_stream_op(const std::string& name);  // read, write, copy, triad; throws otherwise
const char* stream_op_name(StreamOp op);
// Arrays one operation streams through (read or written once each): 1, 1, 2, 3.
int stream_arrays(StreamOp op);

inline constexpr float kStreamScalar = 3.0f;

// b and c as above (c may be null).
void fill_stream_inputs(float* b, float* c, std::size_t n, cudaStream_t stream);

// One operation over n elements (n a multiple of 4): read: *sum += the sum of b; write: a = 3;
// copy: a = b; triad: a = b + 3c. `blocks`: the grid (a few per SM saturates memory).
void launch_stream_op(StreamOp op, float* a, const float* b, const float* c, std::size_t n, unsigned long long* sum,
                      int blocks, cudaStream_t stream);

// After one operation: elements of a that differ from what it must hold (write, copy, triad), or,
// for read, 0 or 1 as *sum equals the sum of b or not. Synchronises the stream.
unsigned long long count_stream_wrong(StreamOp op, const float* a, std::size_t n, const unsigned long long* sum,
                                      cudaStream_t stream);

}  // namespace scalebench::gpu
