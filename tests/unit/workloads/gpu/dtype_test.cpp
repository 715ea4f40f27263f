#include "workloads/gpu/dtype.hpp"

#include <gtest/gtest.h>

#include <string>

#ifdef SCALEBENCH_HAVE_CUDA
#include "workloads/gpu/dtype_cuda.hpp"
#endif

namespace scalebench::gpu {
namespace {

constexpr DType kAll[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBf16, DType::kI32,
                          DType::kI64, DType::kI8,  DType::kU8,  DType::kE4M3, DType::kE5M2};

TEST(DType, EveryNameParsesBackToItsType) {
  for (DType t : kAll) {
    ASSERT_TRUE(parse_dtype(dtype_name(t)).has_value()) << dtype_name(t);
    EXPECT_EQ(*parse_dtype(dtype_name(t)), t) << dtype_name(t);
  }
  EXPECT_FALSE(parse_dtype("float8").has_value());
  EXPECT_FALSE(parse_dtype("").has_value());
}

TEST(DType, SizesAndCudaNamesAreTheLibrariesOnes) {
  EXPECT_EQ(dtype_bytes(DType::kF64), 8);
  EXPECT_EQ(dtype_bytes(DType::kI64), 8);
  EXPECT_EQ(dtype_bytes(DType::kF32), 4);
  EXPECT_EQ(dtype_bytes(DType::kBf16), 2);
  EXPECT_EQ(dtype_bytes(DType::kE5M2), 1);
  EXPECT_EQ(std::string(cuda_type_name(DType::kBf16)), "CUDA_R_16BF");
  EXPECT_EQ(std::string(cuda_type_name(DType::kE4M3)), "CUDA_R_8F_E4M3");
  EXPECT_EQ(DType{}, DType::kF32);  // what a zeroed config holds
}

#ifdef SCALEBENCH_HAVE_CUDA
TEST(DType, CudaAndCudnnEnumsComeFromTheSameRow) {
  EXPECT_EQ(cuda_type(DType::kF16), CUDA_R_16F);
  EXPECT_EQ(cuda_type(DType::kI8), CUDA_R_8I);
  EXPECT_EQ(cudnn_type(DType::kBf16), CUDNN_DATA_BFLOAT16);
  EXPECT_EQ(cudnn_type(DType::kF32), CUDNN_DATA_FLOAT);
}
#endif

}  // namespace
}  // namespace scalebench::gpu
