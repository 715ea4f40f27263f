#pragma once
// What the net's source files share and its users do not see: each layer's state (descriptors,
// buffers, chosen algorithms) and the algorithm search's. Built only with SCALEBENCH_HAVE_CUDA.
#include <cudnn.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/gpu/cudnn_conv_graph.hpp"
#include "workloads/gpu/dtype_cuda.hpp"
#include "workloads/train/fc_matmul.hpp"
#include "workloads/train/net.hpp"

namespace scalebench::train {

constexpr double kBnMomentum = 0.1;  // running = 0.9 running + 0.1 batch (PyTorch's default)

using gpu::cudnn_type;

// fp32: no TF32 anywhere (FMA math); tf32: TF32 Tensor Cores allowed for fp32 data; fp16/bf16:
// Tensor Cores with fp32 sums.
inline cudnnMathType_t conv_math(compute::Precision p) {
  return p == compute::Precision::kFp32   ? CUDNN_FMA_MATH
         : p == compute::Precision::kTf32 ? CUDNN_DEFAULT_MATH
                                          : CUDNN_TENSOR_OP_MATH;
}

// A convolution's chosen algorithm: a legacy cudnnConvolution* algorithm, or (plan set) an
// execution plan of cuDNN's graph API.
struct ConvAlgo {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  std::shared_ptr<gpu::ConvPlan> plan;
  std::size_t workspace = 0;
  float ms = -1;
  Json search;  // with `algo: search`: what Find reported and what was timed again
  std::string name() const { return plan ? plan->name() : "legacy algo " + std::to_string(algo); }
};

struct Net::LayerState {
  std::byte* y = nullptr;  // the output: in y_memory, or in a larger net's (NetConfig::outputs_of)
  gpu::DeviceBuffer y_memory, dy;
  gpu::TensorDescriptor y_desc;
  bool acc_input = false, acc_residual = false;  // backward adds into the gradient (another wrote it first)
  std::vector<bool> acc_inputs;                  // concat: the same, per input
  // conv
  gpu::FilterDescriptor w_desc;
  gpu::ConvolutionDescriptor fwd_desc, bwd_data_desc, bwd_filter_desc;
  gpu::TensorDescriptor bias_desc;
  ConvAlgo fwd, bwd_data, bwd_filter;
  bool depthwise = false;  // in our depthwise kernels (shape in `pool`), not cuDNN's
  bool matmul = false;     // a 1x1 convolution in the fc's matmuls, over batch x h x w rows
  // batch norm
  gpu::TensorDescriptor bn_desc;
  gpu::DeviceBuffer saved_mean, saved_inv_var, running_mean, running_var, reserve;
  gpu::DeviceBuffer relu_mask;  // our kernels, training, with ReLU: which outputs are > 0
  bool fused = false;
  std::string unfused_reason;
  float* bn_grad32 = nullptr;  // fp32 gradients of scale and shift (the flat buffer itself in fp32)
  // maxpool, windowed avgpool, our depthwise convolution
  PoolShape pool;
  gpu::DeviceBuffer argmax;  // training: each output's maximum in its window
  // fc, and 1x1 convolutions run as matmuls
  FcMatmul fc_fwd, fc_bwd_data, fc_bwd_weight;
};

// What the algorithm search of the constructor shares between layers: the workspace cuDNN's
// searches may use, the free memory before it, and the algorithms chosen per convolution shape.
struct Net::AlgoSearch {
  std::size_t free_b = 0;
  gpu::DeviceBuffer ws;
  std::size_t bytes = 0;
  std::map<std::string, std::tuple<ConvAlgo, ConvAlgo, ConvAlgo>> cache;
};

}  // namespace scalebench::train
