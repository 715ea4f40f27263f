#pragma once
// Device buffers of host values for the train workload's GPU tests: a host vector uploaded in
// any of train's number formats, and read back as floats.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/half_bits.hpp"
#include "workloads/train/train_kernels.cuh"

namespace scalebench::test_support {

// A device copy of host floats in type t.
inline gpu::DeviceBuffer upload_as(const std::vector<float>& v, train::DType t, cudaStream_t s) {
  gpu::DeviceBuffer f(v.size() * 4), out(v.size() * static_cast<std::size_t>(gpu::dtype_bytes(t)));
  // On s: a cudaMemcpy from pageable memory may return before its DMA lands, and s (non-blocking)
  // would not wait for it: the conversion read a partly copied buffer.
  CUDA_CHECK(cudaMemcpyAsync(f.get(), v.data(), v.size() * 4, cudaMemcpyHostToDevice, s));
  train::convert_from_float(reinterpret_cast<const float*>(f.get()), out.get(), t, static_cast<long long>(v.size()), s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

// The first n values of a device buffer of type t, as floats (every fp16 and bf16 value is exact in fp32).
inline std::vector<float> download_as(const gpu::DeviceBuffer& b, train::DType t, std::size_t n, cudaStream_t s) {
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> out(n);
  if (t == train::DType::kF32) {
    CUDA_CHECK(cudaMemcpy(out.data(), b.get(), n * 4, cudaMemcpyDeviceToHost));
    return out;
  }
  std::vector<std::uint16_t> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), b.get(), n * 2, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i)
    out[i] = t == train::DType::kF16 ? gpu::half_to_float(h[i]) : gpu::bf16_to_float(h[i]);
  return out;
}

}  // namespace scalebench::test_support
