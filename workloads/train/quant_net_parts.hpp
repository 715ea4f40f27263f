#pragma once
// What the quantized net's source files share and its users do not see: a tensor and its forms,
// a step and what it runs (quant_net.cpp: planning, calibration and the forward pass;
// quant_net_precision.cpp: which layers run in which precision; quant_net_build.cpp: their
// weights and graphs). Built only with SCALEBENCH_HAVE_CUDA.
#include <cudnn.h>

#include <cstdint>
#include <memory>

#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_handles.hpp"
#include "workloads/gpu/cudnn_quant_conv_graph.hpp"
#include "workloads/train/quant_net.hpp"
#include "workloads/train/train_kernels.cuh"

namespace scalebench::train {

// A layer's output: in 8 bits (q x scale) where an 8-bit layer reads it, unquantized in the
// trained type (`wide`) where a 16-bit layer reads it, and as fp16 (`half`) where an E4M3 layer
// takes it as a residual (cuDNN's graph takes int8 or fp16 residuals, not E4M3).
struct QuantNet::Tensor {
  int layer = 0;
  Dims dims;                // per image, channels as the model has them
  int stored_c = 0;         // channels of q in memory (the input's padded to cuDNN's multiple)
  bool calibrated = false;  // its own scale from calibration (else its input's: max pooling)
  bool non_negative = false;
  bool quantized = false, wide = false, half_copy = false;  // which forms its readers take
  double amax = 0, scale = 1;
  gpu::DeviceBuffer q, half, wide_buffer;
  void* wide_data = nullptr;  // wide_buffer, or the net's images for the input
  std::uint8_t* bytes() const { return reinterpret_cast<std::uint8_t*>(q.get()); }
};

struct QuantNet::Step {
  // kTrainedConv: the image's convolution through cuDNN's legacy API in the trained net's type,
  // then bias and ReLU (unquantized) or bias, ReLU and quantization in one kernel.
  enum class Kind { kQuantizeInput, kConv, kTrainedConv, kMaxPool, kGlobalAvgPool, kFc } kind = Kind::kConv;
  int layer = 0;     // the model's layer (a convolution's, for the two convolution kinds)
  int bn_layer = 0;  // the convolutions' batch norm, folded in
  Tensor* in = nullptr;
  Tensor* out = nullptr;
  Tensor* residual = nullptr;
  bool relu = false;
  bool unquantized = false;  // runs in the trained type
  PoolShape pool;
  std::unique_ptr<gpu::QuantConvGraph> graph;
  gpu::DeviceBuffer weights;
  double weight_scale_min = 0, weight_scale_max = 0;
  // kTrainedConv
  gpu::TensorDescriptor x_desc, y_desc;
  gpu::FilterDescriptor w_desc;
  gpu::ConvolutionDescriptor conv_desc;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  gpu::DeviceBuffer workspace, y, bias;
  bool is_conv() const { return kind == Kind::kConv || kind == Kind::kTrainedConv; }
  // Its output unquantized where a 16-bit layer reads it (else in 8 bits), then quantized too where
  // an 8-bit one does.
  bool writes_wide() const { return unquantized && out && out->wide; }
  bool quantize_out() const { return writes_wide() && out->quantized; }
};

}  // namespace scalebench::train
