#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

// The networks the train workload runs, as data: a list of layers in forward (topological) order,
// each naming the layers it reads. Shapes, parameter counts, FLOPs and the all-reduce buckets all
// follow from the list. Pure: no CUDA.
namespace scalebench::train {

// kBatchNorm carries the residual add and the ReLU that follow it in a ResNet block
// (y = relu(bn(x) + residual)), the form cuDNN fuses; kRelu is a ReLU on its own (VGG). kAvgPool
// is a windowed average (Inception's 3x3 branch pool), kGlobalAvgPool the one before the
// classifier; kConcat joins its inputs' channels (Inception's branches). kAdd sums two layers'
// outputs (NASNet's cells add pairs of branches, some with no batch norm before the add);
// kSubsample takes every stride-th row and column from an offset, zeros past the edge (the
// shifted path of NASNet's factorized reduction: pad right and bottom by one, drop the first row
// and column, 1x1 average pool of stride 2).
enum class Op {
  kInput,
  kConv,
  kBatchNorm,
  kRelu,
  kMaxPool,
  kAvgPool,
  kGlobalAvgPool,
  kConcat,
  kFc,
  kSoftmaxLoss,
  kAdd,
  kSubsample
};
const char* name(Op op);

// Channels, height, width of one image's activation (stored NHWC: channels fastest).
struct Dims {
  int c = 0, h = 0, w = 0;
  long long elements() const { return static_cast<long long>(c) * h * w; }
  bool operator==(const Dims&) const = default;
};

struct Layer {
  Op op = Op::kInput;
  std::string name;
  int input = -1;           // the layer whose output this one reads (-1 for kConcat and kAdd)
  std::vector<int> inputs;  // kConcat: the layers whose channels it joins, in order; kAdd: the two it sums
  int residual = -1;        // kBatchNorm: the layer whose output is added before the ReLU, or -1
  bool relu = false;        // kBatchNorm: ReLU after the (add and) normalisation
  bool bias = false;        // kConv, kFc: a bias per output channel
  int channels = 0;         // kConv, kFc: output channels (features)
  // kConv (1x7 and 7x1 in Inception), kMaxPool and kAvgPool (square: kernel_h == kernel_w).
  int kernel_h = 1, kernel_w = 1, stride = 1, pad_h = 0, pad_w = 0;
  int groups = 1;                   // kConv: channel groups (depthwise: as many as input channels)
  int offset = 0;                   // kSubsample: the first row and column taken (stride: the step)
  bool count_pad = true;            // kAvgPool: padding counts in the divisor (PyTorch's count_include_pad)
  double eps = 1e-5;                // kBatchNorm
  float loss_weight = 1;            // kSoftmaxLoss: its share of the loss trained on
  bool aux = false;                 // an auxiliary head's layer: trained, left out of inference
  Dims out;                         // this layer's output per image
  long long param_offset = 0;       // first element in the flat parameter buffer
  long long params = 0;             // weights then bias (kBatchNorm: scale then shift)
  long long weight_params() const;  // params without the bias (kBatchNorm: the scale)
  std::vector<int> reads() const;   // every layer whose output this one reads
};

// Layers in topological order: each reads only earlier ones. A layer read by several (a block's
// input, read by each of its branches) gets the sum of their gradients.
struct Model {
  std::string name;
  int classes = 0;
  std::vector<Layer> layers;  // layers[0] is the input, the last the (main) loss
  long long param_count = 0;  // parameters, as the reference definitions count them
  long long param_slots = 0;  // elements of the flat parameter buffers: the parameters and the gaps
                              // that start each layer's at a multiple of kParamAlign
};

// Each layer's parameters start at a multiple of this many elements in the flat buffers (256 bytes
// in 16-bit types, as cuBLASLt's fastest kernels want their operands). Packed, odd channel counts
// (NASNet's 11, 22, 44) left weights 2-byte aligned, which only cuDNN's slowest kernels take.
inline constexpr long long kParamAlign = 128;
inline long long align_params(long long n) { return (n + kParamAlign - 1) / kParamAlign * kParamAlign; }

// resnet50, resnet101, resnet152 (torchvision's v1.5: the stride in the bottleneck's 3x3 conv),
// vgg16 (torchvision's, without dropout), inception3 (torchvision's inception_v3 with its
// auxiliary head, without dropout), inception4 (Szegedy et al. 2016 as timm and Cadene's
// pretrainedmodels define it), nasnet (NASNet-A Mobile as tf_cnn_benchmarks' nasnet and Keras'
// NASNetMobile define it, no auxiliary head), tiny (a few layers of every op on 16x16 images, 10
// classes: for gradient checks), tiny-inception (the same for Inception's ops: branches,
// concatenation, asymmetric kernels, windowed average pooling, an auxiliary loss), tiny-nasnet
// (the same for NASNet's: a reduction and a normal cell), fmnist-resnet (a small
// residual net for 28x28 grey images, 10 classes, input padded to kFmnistChannels channels).
// `image` is the input's height and width; 0: the model's own (native_image). The tiny models and
// fmnist-resnet ignore it. Throws Error for an unknown name, naming the choices.
Model build_model(std::string_view name, int image = 0);
int native_image(std::string_view name);  // 299 for the Inceptions, 224 for the others
inline constexpr int kFmnistChannels = 8;
const std::vector<std::string>& model_names();

// Multiply-adds x 2 of one image's forward pass through the convolutions and fully connected
// layers (what papers quote as a model's FLOPs); a training step is about 3x that. `aux`: with
// the auxiliary head's layers (training runs them, inference does not).
double forward_flops(const Model& m, bool aux = true);

// A range of the flat gradient buffer all-reduced as one: the parameters of layers `first_layer`
// ..`last_layer` (whole layers, contiguous since parameters are laid out in layer order). Buckets
// are formed from the last layer backwards, each closed once it holds at least the target bytes,
// so the first bucket is ready earliest in the backward pass: after layer `first_layer`'s
// gradients, the last of the bucket's to be computed.
struct Bucket {
  long long begin = 0, end = 0;  // elements [begin, end)
  int first_layer = 0, last_layer = 0;
};
// How a bucket's target shrinks along the backward pass. kSize: DDP's, the same target for every
// bucket, so the last bucket holds whatever is left (in ResNet-50 in 16 bits, 23 of 51 MB, waiting
// for the stem's gradients). kTaper: the target scaled by the share of the forward FLOPs in the
// layers still to be back-propagated (at least kMinTaperedBytes), so the buckets left for the end
// of the pass, where no compute remains to hide them, are small.
enum class BucketPolicy { kSize, kTaper };
const char* name(BucketPolicy p);  // "size", "taper": the bucket_policy parameter's values
inline constexpr double kMinTaperedBytes = 1024.0 * 1024.0;
std::vector<Bucket> make_buckets(const Model& m, double target_bytes, int bytes_per_element,
                                 BucketPolicy policy = BucketPolicy::kSize);

// When a bucket's all-reduce is launched in the backward pass. kReady: as soon as its gradients are
// done (DDP's). kAfterFusedBn: if the next batch norm the pass reaches is one that needs every SM
// at once (cuDNN's persistent fused kernel), after that batch norm instead: launched just before
// it, the all-reduce holds SMs that kernel waits for, and the whole compute stream waits with it.
enum class LaunchPolicy { kReady, kAfterFusedBn };
const char* name(LaunchPolicy p);  // "ready", "after_fused_bn": the bucket_launch parameter's values
// Per bucket, the layer after whose backward its all-reduce is launched (non-increasing along the
// buckets). `needs_every_sm(layer)` tells which batch norms run as one persistent kernel.
std::vector<int> launch_layers(const Model& m, const std::vector<Bucket>& buckets, LaunchPolicy policy,
                               const std::function<bool(int layer)>& needs_every_sm);
// The persistent batch norms that back-propagate next after each launch layer, up to `count` per
// launch (ascending layers, each once): they would start while that all-reduce still holds SMs,
// and wait for it; in kernels that share SMs they need not.
std::vector<int> batch_norms_beside(const Model& m, const std::vector<int>& launch_at, int count,
                                    const std::function<bool(int layer)>& needs_every_sm);

}  // namespace scalebench::train
