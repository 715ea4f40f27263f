#pragma once
#include <string>
#include <string_view>

#include "common/json.hpp"

// One GEMM problem. Shapes follow BLAS (column-major) as DeepBench does: C (m x n) = op(A) op(B),
// op(A) is m x k and op(B) k x n; A is stored k x m when transposed (trans_a), else m x k, and B
// n x k when transposed, else k x n. Pure: no CUDA.
namespace scalebench::gemm {

struct Shape {
  long long m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  std::string set;  // where it came from: "square", "deepbench-train", ..., "custom"
};

// "nn", "nt", "tn", "tt": the first letter is A's op, the second B's.
std::string op_name(bool trans_a, bool trans_b);
// Inverse of op_name; false when `text` is not one of the four.
bool parse_op(std::string_view text, bool* trans_a, bool* trans_b);

// "MxNxK" with positive integers, optionally followed by ":OP" (e.g. "35x8457x4096:tn") for its
// own transposes, else the given ones. Throws Error saying what is wrong.
Shape parse_shape(std::string_view text, bool trans_a, bool trans_b);

// 2 m n k: a multiply-add counts two operations (integer ones for int8).
double flops(const Shape& s);

// The shape in a record's point: m, n, k, op, set (the workload adds precision).
Json shape_json(const Shape& s);
Shape shape_from_json(const Json& point);

}  // namespace scalebench::gemm
