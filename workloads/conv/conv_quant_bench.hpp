#pragma once
#include <cuda_runtime.h>
#include <cudnn.h>

#include "workloads/compute/compute_records.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/conv/conv.hpp"

// Measures one int8 or fp8e4m3 point: the forward convolution with its epilogue fused, through
// cuDNN's graph API (workloads/gpu/cudnn_quant_conv_graph.hpp), on random 8-bit inputs. Built only
// with SCALEBENCH_HAVE_CUDA.
namespace scalebench::conv {

// Builds the graph, times each of its first cfg.plans plans and keeps the fastest, times that one (CUDA graphs of
// 20 back-to-back convolutions when cfg.graph), and compares sampled outputs with the host's double
// reference when cfg.check. A shape cuDNN cannot take (channels not in its vectors, no engine) is
// skipped with cuDNN's reason. Details: algo (the plan), plans (each plan's time), epilogue,
// workspace_bytes, peak_tflops (`peak_ops` x 1e-12).
compute::RankOutcome measure_quantized(cudnnHandle_t handle, cudaStream_t stream, const ConvPoint& point,
                                       const Config& cfg, const compute::TimingConfig& timing, double peak_ops);

}  // namespace scalebench::conv
