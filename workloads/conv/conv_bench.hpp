#pragma once
#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/compute_records.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/conv/conv.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_handles.hpp"

// Measures one conv point on the current GPU through cuDNN's convolution API
// (cudnnConvolutionForward / BackwardData / BackwardFilter); int8 and fp8e4m3 points through the
// quantized graph (conv_quant_bench.hpp). Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::conv {

class ConvBench {
 public:
  ConvBench();  // a cuDNN handle and a stream on the current GPU

  // Chooses the algorithm (cuDNN's heuristic, or timing every one when cfg.search), times it,
  // checks sampled outputs against the fp64 reference when cfg.check. The outcome's details:
  // algo, math_type, workspace_bytes, selection, rejected algorithms and why, peak_tflops.
  compute::RankOutcome measure(const ConvPoint& point, const Config& cfg, const compute::TimingConfig& timing,
                               const compute::DeviceInfo& gpu);

 private:
  gpu::CudnnHandle handle_;
  gpu::Stream stream_;
};

}  // namespace scalebench::conv
