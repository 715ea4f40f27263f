// How tuning tells a cuDNN plan that answers otherwise from one that rounds otherwise: samples
// equal or a rounding step apart agree in every output type, while the same values for other
// samples (what two fused fp16 engines wrote on an H200) or a NaN where the reference has none do
// not. Host code: runs without a GPU.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cmath>
#include <limits>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpu/plan_agreement.hpp"

namespace scalebench::gpu {
namespace {

std::vector<double> ramp(int n, double step) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = (i % 17 - 8) * step;
  return v;
}

TEST(PlanAgreement, RoundingInAnotherOrderAgrees) {
  const std::vector<double> ref = ramp(64, 1.0);
  EXPECT_EQ(disagreement(ref, ref, CUDNN_DATA_INT8), 0.0);
  std::vector<double> one_step = ref;
  for (std::size_t i = 0; i < one_step.size(); i += 3) one_step[i] += 1;  // int8: sums rounded the other way
  EXPECT_LE(disagreement(one_step, ref, CUDNN_DATA_INT8), 1.0);
  std::vector<double> half = ref;
  for (double& v : half) v *= 1.001;  // fp16: a few units in the last place of 8
  EXPECT_LE(disagreement(half, ref, CUDNN_DATA_HALF), 1.0);
  EXPECT_LE(disagreement(half, ref, CUDNN_DATA_BFLOAT16), 1.0);
  std::vector<double> e4m3 = ref;
  e4m3[5] += 1.0;  // one E4M3 step at the largest (8): 1
  EXPECT_LE(disagreement(e4m3, ref, CUDNN_DATA_FP8_E4M3), 1.0);
}

TEST(PlanAgreement, AnswersForOtherSamplesDisagree) {
  const std::vector<double> ref = ramp(64, 0.25);
  std::vector<double> shifted(ref.begin() + 8, ref.end());  // the same values, another sample's
  shifted.insert(shifted.end(), ref.begin(), ref.begin() + 8);
  for (cudnnDataType_t t : {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_DATA_FP8_E4M3})
    EXPECT_GT(disagreement(shifted, ref, t), 1.0) << static_cast<int>(t);
  const std::vector<double> q = ramp(64, 3.0);
  std::vector<double> q_shifted(q.begin() + 8, q.end());
  q_shifted.insert(q_shifted.end(), q.begin(), q.begin() + 8);
  EXPECT_GT(disagreement(q_shifted, q, CUDNN_DATA_INT8), 1.0);
  EXPECT_GT(disagreement(std::vector<double>(64, 0.0), ref, CUDNN_DATA_HALF), 1.0) << "zeros are not an answer";
}

TEST(PlanAgreement, NaNAgreesOnlyWithNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> ref = ramp(16, 1.0), got = ref;
  ref[3] = got[3] = nan;  // an E4M3 NaN input: every plan's sum is NaN there
  EXPECT_LE(disagreement(got, ref, CUDNN_DATA_FP8_E4M3), 1.0);
  got[4] = nan;
  EXPECT_EQ(disagreement(got, ref, CUDNN_DATA_FP8_E4M3), std::numeric_limits<double>::infinity());
  EXPECT_THROW(disagreement(ramp(8, 1.0), ref, CUDNN_DATA_HALF), Error);
}

}  // namespace
}  // namespace scalebench::gpu
#endif
