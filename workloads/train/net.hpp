#pragma once
#include <cublasLt.h>
#include <cudnn.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "workloads/compute/precision.hpp"
#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_handles.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/train_kernels.cuh"

// A model of model.hpp on the current GPU: NHWC activations in the compute precision, convolutions
// through cuDNN with the fastest algorithm measured once per shape, batch norm through cuDNN
// (fused with the residual add and ReLU where the precision has it), the fully connected layers
// through cuBLASLt, concatenation as a copy of each input into its channels, depthwise
// convolutions in our kernels (or, as other grouped ones, through cuDNN's group count on the legacy
// API), and the SGD step as one kernel over a flat parameter buffer. Every call enqueues on the
// net's stream (graph-capturable after the first, uncaptured, pass). Built only with
// SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

// The GPU ran out of memory building the net: the batch does not fit.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

// The batch makes a tensor larger than cuDNN takes.
class TooLarge : public Error {
 public:
  using Error::Error;
};

class Net;

struct NetConfig {
  compute::Precision precision = compute::Precision::kFp32;  // fp32, tf32, fp16 or bf16
  int batch = 32;
  bool training = true;  // gradients, optimizer state and the buffers of the backward pass
  bool search = true;    // time every cuDNN algorithm per shape (Find); false: its heuristic's pick
  bool fuse = true;      // cuDNN's fused BN + add + ReLU where it runs in this precision
  // Convolution algorithms from "legacy" (cudnnFind*), "graph" (the graph API's plans) or "best"
  // (in fp32 with search: both, the faster per convolution and direction; otherwise legacy).
  std::string conv_api = "best";
  // Depthwise convolutions (groups = input = output channels, k x k with k 3, 5 or 7) in "ours"
  // (depthwise_kernels.cu, no algorithm search) or "cudnn" (its grouped convolution, searched as
  // the others): cuDNN's took 655 ms of NASNet-A Mobile's 816 ms fp16 step at batch 512.
  std::string depthwise = "ours";
  // 1x1 convolutions of stride 1 (NASNet's pointwise ones) as cuBLASLt matmuls ("gemm"), in
  // cuDNN ("cudnn"), or "auto": matmuls where 16-bit channels are not a multiple of 8, which
  // cuDNN's Tensor Core kernels refuse (NASNet's 11, 22 and 44: its fp16 step 1.8% shorter).
  std::string pointwise = "auto";
  float lr = 0.1f, momentum = 0.9f, weight_decay = 1e-4f;
  int loss_scale_interval = 2000;  // fp16: double the loss scale after this many good steps
  std::uint64_t seed = 1;          // weights: the same on every rank
  std::uint64_t data_seed = 2;     // images and labels: one per rank
  // The flat gradient buffer (param_slots elements of the compute type) if the caller provides it,
  // e.g. NCCL memory registered for symmetric collectives; null: the net allocates its own.
  void* grad_buffer = nullptr;
  // The time-to-accuracy recipe: the learning rate read from this device float at every step (a
  // schedule a captured step follows; null: `lr`), Nesterov momentum, label smoothing.
  const float* lr_device = nullptr;
  bool nesterov = false;
  float label_smoothing = 0;
  // Inference only: the layers' outputs in this net's of the same model and at least this batch,
  // not in memory of their own. For nets that never run at once (an engine's nets of one stream,
  // one per batch size): their outputs are most of their memory.
  const Net* outputs_of = nullptr;
};

enum class Pass { kTrain, kCalibrate, kInfer };

// The type activations, weights and gradients are kept in at a precision (fp32 and tf32: float).
DType compute_dtype(compute::Precision p);

class Net {
 public:
  Net(const Model& m, const NetConfig& cfg, cudaStream_t stream);
  ~Net();
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  // kTrain: batch statistics, loss and its gradient; kCalibrate: batch statistics become the
  // running ones (what inference normalises with); kInfer: running statistics, logits only.
  void forward(Pass pass);
  // The backward pass; `grads_done(layer)` is called as soon as the last kernel writing that
  // layer's parameter gradients has been enqueued (where an all-reduce of them may start).
  void backward(const std::function<void(int layer)>& grads_done);
  // Skips the step on inf/nan gradients; `divisor` divides the summed gradients (the rank count).
  void optimizer_step(float divisor);

  const Model& model() const { return model_; }
  // For quantizing a trained net (quant_net.hpp), after the stream's work: a layer's output (NHWC,
  // compute type), its parameters on the host in fp32 (weights then bias; a batch norm's scale then
  // shift) and a batch norm's running mean then variance.
  const void* output(int layer) const { return act(layer); }
  std::vector<float> host_params(int layer) const;
  std::vector<float> running_stats(int layer) const;
  const NetConfig& config() const { return cfg_; }
  DType compute_type() const { return ct_; }
  void* grads() const { return grads_; }  // flat, compute type, param_slots elements
  float* master() const { return reinterpret_cast<float*>(master_.get()); }
  void* logits() const;
  // The batch the next pass reads: images (NHWC, compute type) and labels; real data writes them.
  void* images() const { return act(0); }
  int* labels() const { return reinterpret_cast<int*>(labels_.get()); }
  double* loss_device() const { return reinterpret_cast<double*>(loss_.get()); }
  float* loss_scale_device() const { return reinterpret_cast<float*>(scale_.get()); }
  cudaStream_t stream() const { return stream_; }
  // The last forward's mean loss (waits for the stream).
  double read_loss() const;
  // Rewrites the compute copy of the weights from the master (after editing the master).
  void sync_weights();
  // The weights and batch norm running statistics of `from`, a net of the same model and precision
  // (at any batch), enqueued on this net's stream after `from`'s stream is synchronised: nets of
  // several batch sizes then answer alike for the same image.
  void copy_parameters_from(const Net& from);
  // Whether the layer's backward runs as cuDNN's persistent fused batch norm, a kernel that needs
  // every SM at once (and so waits for any an all-reduce holds).
  bool needs_every_sm(int layer) const;
  // Runs that batch norm in our kernels, which share SMs with an all-reduce, from the next pass on;
  // `why` is recorded with the net's fusion counts.
  void unfuse(int layer, const std::string& why);
  // The chosen algorithms, fusion, workspace, memory: recorded in a point's details.
  // 1x1 convolutions run as cuBLASLt matmuls (NetConfig::pointwise).
  int pointwise_matmuls() const { return pointwise_matmuls_; }
  Json describe() const;
  std::size_t bytes_allocated() const { return allocated_; }
  // One eager forward and backward pass with an event after every layer: GPU milliseconds summed
  // by op and pass ("conv fwd", "batchnorm bwd", ...), and the five slowest layers.
  Json time_by_op();

  // Events the passes record while set: fwd[0] before the first layer and fwd[k] after layer k;
  // bwd[n] (n layers) before the backward pass and bwd[k] after layer k's backward. `external`:
  // recorded as event nodes of a graph being captured, so that each replay records them.
  struct LayerMarks {
    explicit LayerMarks(std::size_t layers);
    std::vector<gpu::Event> fwd, bwd;
    bool external = false;
  };
  void mark_layers(LayerMarks* m) { marks_ = m; }
  // Each layer's forward and backward GPU milliseconds from marks the passes recorded (index:
  // layer; 0 for the input).
  static std::vector<double> forward_ms(const LayerMarks& m);
  static std::vector<double> backward_ms(const LayerMarks& m);

 private:
  struct LayerState;
  struct AlgoSearch;
  std::byte* alloc(gpu::DeviceBuffer& b, std::size_t bytes);
  // The constructor's steps, in order.
  void alloc_parameters();
  void alloc_activations();
  void init_weights();
  void init_data();
  void find_first_writers();
  void fuse_bias_relu();
  void choose_algorithms();
  std::size_t choose_conv(int layer, AlgoSearch& search);
  void find_legacy_algos(int layer, const std::string& key, AlgoSearch& search);
  void find_graph_plans(int layer, AlgoSearch& search);
  std::size_t conv_alignment(int layer) const;
  void record_algos(int layer, const std::string& key);
  std::size_t choose_bn_fusion(int layer);
  // Whether a net of model m at this batch and type may keep its outputs in this one's.
  bool can_lend_outputs_to(const Model& m, int batch, DType t) const;
  void* act(int layer) const;
  void* dact(int layer) const;
  void* weight(int layer) const;  // compute type
  void* grad(int layer) const;    // compute type, in the flat buffer
  void* bias(int layer) const;    // compute type, after the layer's weights
  void setup_conv(int i);
  void setup_fc(int i);
  void setup_matmuls(int i, long long in, long long rows);
  bool pointwise_as_matmul(int layer) const;
  void conv_forward(int i);
  void conv_backward(int i, const std::function<void(int)>& done);
  void fc_forward(int i);
  void fc_backward(int i, const std::function<void(int)>& done);
  void concat_forward(int i);
  void concat_backward(int i);
  void add_forward_layer(int i);
  void add_backward_layer(int i);
  void bn_forward(int i, Pass pass);
  void bn_backward(int i, const std::function<void(int)>& done);
  void alloc_relu_mask(int layer);
  void bias_forward(int i);
  void bias_backward(int i);
  void mark(const gpu::Event& e) const;
  LayerMarks* marks_ = nullptr;

  Model model_;
  NetConfig cfg_;
  DType ct_;
  cudaStream_t stream_;
  gpu::CudnnHandle cudnn_;
  gemm::LtHandle lt_;
  std::vector<std::unique_ptr<LayerState>> layers_;
  std::vector<bool> bias_in_relu_;  // by layer: its bias is added by the ReLU that follows it
  gpu::DeviceBuffer master_, compute_copy_, velocity_, grad_, bn_grad32_;
  std::byte* grads_ = nullptr;  // grad_ or the config's grad_buffer
  gpu::DeviceBuffer labels_, loss_, scale_, good_steps_, overflow_, workspace_, lt_workspace_, scratch_, bias32_,
      bn_work_;
  std::size_t allocated_ = 0;
  gpu::ActivationDescriptor relu_;
  Json algos_ = Json::object();
  double search_seconds_ = 0;
  int graph_plans_tried_ = 0;
  int legacy_only_ = 0;  // convolutions the graph API's shape cannot describe (padded 1xn, nx1; grouped), or unaligned
  int depthwise_kernels_ = 0;    // convolutions in our depthwise kernels
  int pointwise_matmuls_ = 0;    // 1x1 convolutions run as cuBLASLt matmuls
  std::string graph_api_error_;  // why "best" fell back to the legacy API, if it did
};

}  // namespace scalebench::train
