#include "common/call_failed.hpp"

#include <gtest/gtest.h>

#include "tests/unit/error_text.hpp"

namespace scalebench {
namespace {

using test_support::error_of;

// What every CHECK macro's thrower (CUDA, NCCL, cuDNN, cuBLAS, MPI) reports: where, which call,
// and the library's own words, as an Error that the programs print as is.
TEST(CallFailed, SaysFileLineCallAndTheLibrarysErrorString) {
  EXPECT_EQ(
      error_of([] { throw_call_failed("workloads/copy/copy_bench.cpp", 42, "cudaMalloc(&p, n)", "out of memory"); }),
      "workloads/copy/copy_bench.cpp:42: cudaMalloc(&p, n): out of memory");
}

}  // namespace
}  // namespace scalebench
