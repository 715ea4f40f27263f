#include "workloads/compute/peak.hpp"

namespace scalebench::compute {

namespace {
// Dense operations per SM per clock, from the A100 and H100 architecture white papers.
double per_sm_per_clock(Precision p, int cc) {
  if (cc == 80) {  // A100: 4 third-generation Tensor Cores per SM, 64 FP32 lanes
    switch (p) {
      case Precision::kFp64:
      case Precision::kFp32:
        return 128;
      case Precision::kTf32:
        return 1024;
      case Precision::kFp16:
      case Precision::kBf16:
        return 2048;
      case Precision::kInt8:
        return 4096;
      case Precision::kFp8E4M3:
      case Precision::kFp8E5M2:
        return 0;
    }
  }
  if (cc == 90) {  // H100/H200: 4 fourth-generation Tensor Cores per SM, 128 FP32 lanes
    switch (p) {
      case Precision::kFp64:
      case Precision::kFp32:
        return 256;
      case Precision::kTf32:
        return 2048;
      case Precision::kFp16:
      case Precision::kBf16:
        return 4096;
      case Precision::kFp8E4M3:
      case Precision::kFp8E5M2:
      case Precision::kInt8:
        return 8192;
    }
  }
  return 0;
}
}  // namespace

double peak_ops_per_second(Precision p, int cc_major, int cc_minor, int sm_count, int max_clock_mhz) {
  return per_sm_per_clock(p, cc_major * 10 + cc_minor) * sm_count * max_clock_mhz * 1e6;
}

}  // namespace scalebench::compute
