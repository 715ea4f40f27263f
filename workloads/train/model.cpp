#include "workloads/train/model.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "workloads/train/inception.hpp"
#include "workloads/train/model_builder.hpp"
#include "workloads/train/nasnet.hpp"

namespace scalebench::train {

const char* name(Op op) {
  switch (op) {
    case Op::kInput:
      return "input";
    case Op::kConv:
      return "conv";
    case Op::kBatchNorm:
      return "batchnorm";
    case Op::kRelu:
      return "relu";
    case Op::kMaxPool:
      return "maxpool";
    case Op::kAvgPool:
      return "avgpool_window";
    case Op::kGlobalAvgPool:
      return "avgpool";
    case Op::kConcat:
      return "concat";
    case Op::kFc:
      return "fc";
    case Op::kSoftmaxLoss:
      return "softmax_cross_entropy";
    case Op::kAdd:
      return "add";
    case Op::kSubsample:
      return "subsample";
  }
  return "?";
}

long long Layer::weight_params() const {
  if (op == Op::kBatchNorm) return params / 2;
  return params - (bias ? channels : 0);
}

std::vector<int> Layer::reads() const {
  std::vector<int> out = inputs;
  if (input >= 0) out.push_back(input);
  if (residual >= 0) out.push_back(residual);
  return out;
}

namespace {
// torchvision's Bottleneck: 1x1 (width), 3x3 (width, stride here: v1.5), 1x1 (4 x width), with a
// 1x1 strided projection on the shortcut where the shape changes.
int bottleneck(Builder& b, const std::string& n, int in, int width, int stride) {
  const int out_c = width * 4;
  int x = b.conv(n + ".conv1", in, width, 1, 1, 0);
  x = b.bn(n + ".bn1", x, true);
  x = b.conv(n + ".conv2", x, width, 3, stride, 1);
  x = b.bn(n + ".bn2", x, true);
  x = b.conv(n + ".conv3", x, out_c, 1, 1, 0);
  int shortcut = in;
  if (stride != 1 || b.dims(in).c != out_c) {
    const int d = b.conv(n + ".downsample.0", in, out_c, 1, stride, 0);
    shortcut = b.bn(n + ".downsample.1", d, false);
  }
  // The bn3 goes after the shortcut's layers, so that everything it adds is computed before it.
  return b.bn(n + ".bn3", x, true, shortcut);
}

Model resnet(const std::string& n, const int (&blocks)[4], int image) {
  Builder b(n, 1000, {3, image, image});
  int x = b.conv("conv1", 0, 64, 7, 2, 3);
  x = b.bn("bn1", x, true);
  x = b.maxpool("maxpool", x, 3, 2, 1);
  for (int stage = 0; stage < 4; ++stage)
    for (int i = 0; i < blocks[stage]; ++i)
      x = bottleneck(b, "layer" + std::to_string(stage + 1) + "." + std::to_string(i), x, 64 << stage,
                     i == 0 && stage > 0 ? 2 : 1);
  x = b.global_avgpool("avgpool", x);
  return b.finish(b.fc("fc", x, 1000));
}

Model vgg16(int image) {
  Builder b("vgg16", 1000, {3, image, image});
  int x = 0, i = 0;
  for (int c : {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}) {
    const std::string n = "features." + std::to_string(i);
    if (c == 0) {
      x = b.maxpool(n, x, 2, 2, 0);
      ++i;
    } else {
      x = b.relu("features." + std::to_string(i + 1), b.conv(n, x, c, 3, 1, 1, true));
      i += 2;
    }
  }
  // torchvision's adaptive average pool to 7x7 is the identity on 224x224 inputs; the classifier's
  // dropout layers are left out (they add no parameters and no multiply-adds).
  if (b.dims(x).h != 7 || b.dims(x).w != 7) throw Error("vgg16 needs 224x224 images (7x7 before the classifier)");
  x = b.relu("classifier.1", b.fc("classifier.0", x, 4096));
  x = b.relu("classifier.4", b.fc("classifier.3", x, 4096));
  return b.finish(b.fc("classifier.6", x, 1000));
}

// Every op the big models use, with a strided bottleneck and its projection, small enough for
// finite differences on every parameter.
Model tiny() {
  Builder b("tiny", 10, {3, 16, 16});
  int x = b.relu("relu0", b.conv("conv0", 0, 8, 3, 1, 1, true));
  x = b.bn("bn1", b.conv("conv1", x, 8, 3, 1, 1), true);
  x = b.maxpool("maxpool", x, 3, 2, 1);
  x = bottleneck(b, "block", x, 4, 2);
  x = b.global_avgpool("avgpool", x);
  return b.finish(b.fc("fc", x, 10));
}

// A residual net for 28x28 grey images (Fashion-MNIST), made for time to accuracy: a few wide 3x3
// convolutions, two residual blocks, two 2x2 max pools (28, 14, 7), global average pooling, fc.
// The input has kFmnistChannels channels: the image in channel 0, zeros in the rest, so that
// cuDNN's Tensor Core kernels take the first convolution (16-bit NHWC wants channels in 8s).
int residual_block(Builder& b, const std::string& n, int in) {
  const int c = b.dims(in).c;
  int x = b.bn(n + ".bn1", b.conv(n + ".conv1", in, c, 3, 1, 1), true);
  return b.bn(n + ".bn2", b.conv(n + ".conv2", x, c, 3, 1, 1), true, in);
}

Model fmnist_resnet() {
  Builder b("fmnist-resnet", 10, {kFmnistChannels, 28, 28});
  int x = b.bn("prep.bn", b.conv("prep.conv", 0, 32, 3, 1, 1), true);
  x = b.bn("layer1.bn", b.conv("layer1.conv", x, 64, 3, 1, 1), true);
  x = residual_block(b, "layer1.res", b.maxpool("layer1.pool", x, 2, 2, 0));
  x = b.bn("layer2.bn", b.conv("layer2.conv", x, 128, 3, 1, 1), true);
  x = residual_block(b, "layer2.res", b.maxpool("layer2.pool", x, 2, 2, 0));
  return b.finish(b.fc("fc", b.global_avgpool("avgpool", x), 10));
}
}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"resnet50",       "resnet101",   "resnet152",    "vgg16",
                                                 "inception3",     "inception4",  "nasnet",       "tiny",
                                                 "tiny-inception", "tiny-nasnet", "fmnist-resnet"};
  return names;
}

int native_image(std::string_view name) { return name == "inception3" || name == "inception4" ? 299 : 224; }

Model build_model(std::string_view name, int image) {
  if (name == "fmnist-resnet") return fmnist_resnet();
  if (image == 0) image = native_image(name);
  if (image < 32) throw Error("image size " + std::to_string(image) + " is too small (32 or more)");
  if (name == "resnet50") return resnet("resnet50", {3, 4, 6, 3}, image);
  if (name == "resnet101") return resnet("resnet101", {3, 4, 23, 3}, image);
  if (name == "resnet152") return resnet("resnet152", {3, 8, 36, 3}, image);
  if (name == "vgg16") return vgg16(image);
  if (name == "inception3") return inception3(image);
  if (name == "inception4") return inception4(image);
  if (name == "nasnet") return nasnet_mobile(image);
  if (name == "tiny") return tiny();
  if (name == "tiny-inception") return tiny_inception();
  if (name == "tiny-nasnet") return tiny_nasnet();
  std::string all;
  for (const auto& n : model_names()) all += (all.empty() ? "" : ", ") + n;
  throw Error("unknown model '" + std::string(name) + "'; expected one of: " + all);
}

namespace {
// One image's multiply-adds in a convolution or fully connected layer (0 elsewhere).
double macs(const Layer& l) {
  if (l.op != Op::kConv && l.op != Op::kFc) return 0;
  return static_cast<double>(l.weight_params()) * l.out.h * l.out.w;  // per output position
}
}  // namespace

double forward_flops(const Model& m, bool aux) {
  double total = 0;
  for (const Layer& l : m.layers)
    if (aux || !l.aux) total += macs(l);
  return 2 * total;
}

const char* name(BucketPolicy p) { return p == BucketPolicy::kTaper ? "taper" : "size"; }

std::vector<Bucket> make_buckets(const Model& m, double target_bytes, int bytes_per_element, BucketPolicy policy) {
  // flops_before[i]: the forward FLOPs of layers 0..i-1, what is left of the backward pass once
  // layer i's gradients are done (FLOPs stand in for time: cheap to know, and they shrink to 0).
  std::vector<double> flops_before(m.layers.size() + 1, 0.0);
  for (std::size_t i = 0; i < m.layers.size(); ++i) flops_before[i + 1] = flops_before[i] + macs(m.layers[i]);
  const double total = flops_before[m.layers.size()];
  std::vector<Bucket> out;
  Bucket cur;
  bool open = false;
  // A bucket ends where the one after it begins, gaps between layers included: together they
  // cover the whole flat buffer.
  long long end = m.param_slots;
  for (int i = static_cast<int>(m.layers.size()) - 1; i >= 0; --i) {
    const Layer& l = m.layers[static_cast<std::size_t>(i)];
    if (l.params == 0) continue;
    double target = target_bytes;
    if (policy == BucketPolicy::kTaper && total > 0)
      target = std::max(std::min(target_bytes, kMinTaperedBytes),
                        target_bytes * flops_before[static_cast<std::size_t>(i)] / total);
    if (!open) {
      cur = Bucket{l.param_offset, end, i, i};
      open = true;
    } else {
      cur.begin = l.param_offset;
      cur.first_layer = i;
    }
    if (static_cast<double>(cur.end - cur.begin) * bytes_per_element >= target) {
      out.push_back(cur);
      end = cur.begin;
      open = false;
    }
  }
  if (open) out.push_back(cur);
  return out;
}

const char* name(LaunchPolicy p) { return p == LaunchPolicy::kAfterFusedBn ? "after_fused_bn" : "ready"; }

std::vector<int> launch_layers(const Model& m, const std::vector<Bucket>& buckets, LaunchPolicy policy,
                               const std::function<bool(int)>& needs_every_sm) {
  std::vector<int> out;
  for (const Bucket& b : buckets) {
    int at = b.first_layer;
    if (policy == LaunchPolicy::kAfterFusedBn)
      for (int i = b.first_layer - 1; i > 0; --i)
        if (m.layers[static_cast<std::size_t>(i)].op == Op::kBatchNorm) {
          if (needs_every_sm(i)) at = i;
          break;
        }
    // A later bucket never launches before an earlier one: NCCL needs the same order on every rank.
    if (!out.empty()) at = std::min(at, out.back());
    out.push_back(at);
  }
  return out;
}

std::vector<int> batch_norms_beside(const Model& m, const std::vector<int>& launch_at, int count,
                                    const std::function<bool(int)>& needs_every_sm) {
  std::vector<int> out;
  for (int at : launch_at) {
    int found = 0;
    for (int i = at - 1; i > 0 && found < count; --i)
      if (m.layers[static_cast<std::size_t>(i)].op == Op::kBatchNorm && needs_every_sm(i)) {
        out.push_back(i);
        ++found;
      }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace scalebench::train
