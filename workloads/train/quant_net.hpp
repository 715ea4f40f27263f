#pragma once
// A trained net's forward pass in 8 bits, int8 or E4M3, for inference: each convolution and the
// batch norm after it folded into one cuDNN graph (gpu::QuantConvGraph: per-channel weight scales;
// the epilogue's scale, bias, residual and ReLU; the output requantized to the next tensor's
// scale), max pooling on the 8-bit values, and the classifier in fp32 after a dequantizing global
// average pool. Activation scales come from calibration: each tensor's largest magnitude over
// batches the trained net runs (max calibration). The first convolutions may stay in the trained
// precision (QuantOptions::trained_convolutions), or all of them, so that no layer is in 8 bits. The ops of
// fmnist-resnet and the ResNets; a net with others is refused by the layer's name. Built only with
// SCALEBENCH_HAVE_CUDA.
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_handles.hpp"
#include "workloads/gpu/cudnn_quant_conv_graph.hpp"
#include "workloads/train/fc_matmul.hpp"
#include "workloads/train/net.hpp"

namespace scalebench::train {

struct QuantOptions {
  gpu::QuantFormat format = gpu::QuantFormat::kInt8;
  int calibration_batches = 4;
  // The first this many convolutions (in the net's order, the image's first) run unquantized in
  // the trained net's type, through cuDNN with the same fused epilogue, and their outputs are
  // quantized where an 8-bit layer reads them: a mixed net, as TensorRT's builder keeps a layer in
  // fp16 where its 8-bit kernel is slower. The image's alone (1): E4M3's 3 mantissa bits keep a
  // normalised 8-bit image in about 30 levels near its brightest, and cuDNN has one int8 engine
  // for its 4 padded channels. kByTiming: every convolution after the image's timed in both
  // precisions (the plans the net then runs), and the count whose sum is least, at least 1.
  static constexpr int kByTiming = -1;
  // Every convolution unquantized: no 8-bit layer and nothing calibrated, each convolution with its
  // folded batch norm, residual and ReLU one cuDNN graph in the trained type (an fp16 engine).
  static constexpr int kEvery = -2;
  int trained_convolutions = 0;
  // Its scales and its split taken from this net of the same model rather than calibrated and
  // timed (an engine's nets of every batch size answer alike); then `load` is not called.
  const class QuantNet* scales_from = nullptr;
  // cuDNN's plans finalised per 8-bit convolution and timed (the fastest of those answering as the
  // heuristic's first does kept: gpu::QuantConvGraph::tune); 1: its heuristic's first. Unquantized
  // convolutions take the heuristic's first (QuantNet::max_plans says why); the image's legacy
  // convolution, with more than 1, cuDNN's Find (QuantNet::image_conv_algo).
  int max_plans = 8;
  // Where graphs of one shape and epilogue share their plans: an engine's nets pass one; null: the
  // net keeps its own (its repeated blocks still share).
  std::shared_ptr<gpu::QuantPlanCache> plans;
  static int trained_convolutions_by_default(gpu::QuantFormat f) { return f == gpu::QuantFormat::kE4M3 ? 1 : 0; }
};

class QuantNet {
 public:
  // Quantizes `trained` (any precision, its batch size): `load(k)` writes calibration batch k of
  // o.calibration_batches into trained.images(), on trained's stream, and the trained net runs it.
  QuantNet(Net& trained, const QuantOptions& o, const std::function<void(int)>& load);
  ~QuantNet();
  QuantNet(const QuantNet&) = delete;
  QuantNet& operator=(const QuantNet&) = delete;

  // The input batch, as Net::images(): NHWC in the trained net's compute type.
  void* images() const { return images_.get(); }
  // Enqueues the 8-bit forward pass on the trained net's stream; logits() then holds fp32 logits.
  void forward();
  const float* logits() const { return reinterpret_cast<const float*>(logits_.get()); }
  int batch() const { return batch_; }
  const QuantOptions& options() const { return options_; }
  // How many of the first convolutions run unquantized (QuantOptions::trained_convolutions, chosen).
  int trained_convolutions() const { return trained_convs_; }
  // Device memory it holds: tensors, weights, workspaces.
  std::size_t device_bytes() const;

  // The format, calibration, the build's seconds and each layer's graph, scales and plan, for the
  // records.
  Json describe() const;
  // Where a batch's time goes: each step enqueued alone between CUDA events (launch gaps count, as
  // no CUDA graph hides them), the median of `passes` after one more, summed by what the steps do.
  // Runs on the net's stream and synchronises it; the net's outputs are then those of its images.
  Json profile(int passes);

 private:
  struct Tensor;
  struct Step;
  void plan(const Model& m);
  void calibrate(Net& trained, const std::function<void(int)>& load);
  int convolutions() const;
  int max_plans(bool unquantized) const;
  int choose_split(const Net& trained);
  void assign_precisions(int trained_convs);
  void build(const Net& trained);
  gpu::QuantConvSpec conv_spec(const Net& trained, const Step& step, bool unquantized, bool wide_output) const;
  void build_conv(const Net& trained, Step& step);
  void use_wide_output(Step& step);
  cudnnConvolutionFwdAlgo_t image_conv_algo(const Step& step) const;
  void build_trained_conv(const Net& trained, Step& step);
  void build_fc(const Net& trained, const Step& step);
  gpu::QuantConvTensors conv_tensors(const Step& step) const;
  void convert_output(const Step& step);
  void run_step(const Step& step);  // without convert_output
  std::string step_kind(const Step& step) const;

  QuantOptions options_;
  gpu::QuantFormat format_;
  cudaStream_t stream_;
  int batch_;
  DType input_type_;
  gpu::CudnnHandle cudnn_;
  gpu::LtHandle lt_;
  FcMatmul fc_;
  std::vector<std::unique_ptr<Tensor>> tensors_;  // per layer of the model (null: none kept)
  std::vector<std::unique_ptr<Step>> steps_;
  gpu::DeviceBuffer images_, amax_, features_, fc_weight_, fc_bias_, logits_, fc_workspace_;
  int classes_ = 0, features_width_ = 0, trained_convs_ = 0;
  std::string split_by_;          // "option", "timing" or "the net whose scales it took"
  std::vector<Json> conv_times_;  // per convolution, with timing: each precision's plan time
  double calibrate_s_ = 0, build_s_ = 0;
};

}  // namespace scalebench::train
