#pragma once
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "workloads/train/model.hpp"

// How model.cpp, inception.cpp and nasnet.cpp write a network down: layer by layer, each output's shape and
// parameter range inferred as it is added. Pure: no CUDA.
namespace scalebench::train {

// Appends layers, inferring each output's shape and parameter range as it goes.
class Builder {
 public:
  Builder(std::string name, int classes, Dims input) {
    m_.name = std::move(name);
    m_.classes = classes;
    Layer in;
    in.op = Op::kInput;
    in.name = "input";
    in.out = input;
    m_.layers.push_back(in);
  }
  int last() const { return static_cast<int>(m_.layers.size()) - 1; }
  const Dims& dims(int layer) const { return m_.layers[static_cast<std::size_t>(layer)].out; }
  const std::string& name(int layer) const { return m_.layers[static_cast<std::size_t>(layer)].name; }

  int conv(const std::string& n, int in, int channels, int kernel, int stride, int pad, bool bias = false) {
    return conv(n, in, channels, kernel, kernel, stride, pad, pad, bias);
  }
  // A kernel_h x kernel_w kernel (Inception's 1x7 and 7x1), padded by pad_h rows and pad_w columns.
  // `groups`: the input and output channels split in that many groups, each convolved on its own.
  int conv(const std::string& n, int in, int channels, int kernel_h, int kernel_w, int stride, int pad_h, int pad_w,
           bool bias = false, int groups = 1) {
    const Dims d = dims(in);
    if (groups < 1 || d.c % groups != 0 || channels % groups != 0)
      throw Error("model " + m_.name + ": " + n + " splits " + std::to_string(d.c) + " input and " +
                  std::to_string(channels) + " output channels in " + std::to_string(groups) + " groups");
    Layer l = make(Op::kConv, n, in);
    l.channels = channels, l.stride = stride, l.bias = bias, l.groups = groups;
    l.kernel_h = kernel_h, l.kernel_w = kernel_w, l.pad_h = pad_h, l.pad_w = pad_w;
    l.out = {channels, (d.h + 2 * pad_h - kernel_h) / stride + 1, (d.w + 2 * pad_w - kernel_w) / stride + 1};
    l.params = static_cast<long long>(channels) * (d.c / groups) * kernel_h * kernel_w + (bias ? channels : 0);
    return push(l);
  }
  // A depthwise k x k convolution (one filter per channel, no bias): a separable convolution's
  // first half, its pointwise 1x1 the second.
  int depthwise(const std::string& n, int in, int kernel, int stride, int pad) {
    const int c = dims(in).c;
    return conv(n, in, c, kernel, kernel, stride, pad, pad, false, c);
  }
  int bn(const std::string& n, int in, bool relu, int residual = -1, double eps = 1e-5) {
    Layer l = make(Op::kBatchNorm, n, in);
    l.relu = relu, l.residual = residual, l.eps = eps;
    l.out = dims(in);
    if (residual >= 0 && !(dims(residual) == l.out))
      throw Error("model " + m_.name + ": " + n + " adds a residual of another shape");
    l.params = 2LL * l.out.c;
    return push(l);
  }
  int relu(const std::string& n, int in) {
    Layer l = make(Op::kRelu, n, in);
    l.out = dims(in);
    return push(l);
  }
  int maxpool(const std::string& n, int in, int kernel, int stride, int pad) {
    return push(pool(Op::kMaxPool, n, in, kernel, stride, pad));
  }
  // `count_pad`: the padding's zeros count in every window's divisor (PyTorch's count_include_pad,
  // its default); false: only the positions inside the image.
  int avgpool(const std::string& n, int in, int kernel, int stride, int pad, bool count_pad) {
    Layer l = pool(Op::kAvgPool, n, in, kernel, stride, pad);
    l.count_pad = count_pad;
    return push(l);
  }
  // The inputs' channels side by side, in order (torch.cat along dim 1); same height and width.
  int concat(const std::string& n, const std::vector<int>& in) {
    Layer l = make(Op::kConcat, n, -1);
    l.inputs = in;
    l.out = {0, dims(in.at(0)).h, dims(in.at(0)).w};
    for (int i : in) {
      if (dims(i).h != l.out.h || dims(i).w != l.out.w)
        throw Error("model " + m_.name + ": " + n + " joins outputs of different heights or widths");
      l.out.c += dims(i).c;
    }
    return push(l);
  }
  // a + b, elementwise (same shape; a and b may be the same layer).
  int add(const std::string& n, int a, int b) {
    if (!(dims(a) == dims(b))) throw Error("model " + m_.name + ": " + n + " adds outputs of different shapes");
    Layer l = make(Op::kAdd, n, -1);
    l.inputs = {a, b};
    l.out = dims(a);
    return push(l);
  }
  // Rows and columns offset, offset + stride, ... of the input, zeros where that passes its edge:
  // (h - 1) / stride + 1 of them, as many as a 1x1 average pool of that stride gives.
  int subsample(const std::string& n, int in, int stride, int offset) {
    if (stride < 1 || offset < 0 || offset >= stride)
      throw Error("model " + m_.name + ": " + n + " takes an offset in [0, stride)");
    const Dims d = dims(in);
    Layer l = make(Op::kSubsample, n, in);
    l.stride = stride, l.offset = offset;
    l.out = {d.c, (d.h - 1) / stride + 1, (d.w - 1) / stride + 1};
    return push(l);
  }
  int global_avgpool(const std::string& n, int in) {
    Layer l = make(Op::kGlobalAvgPool, n, in);
    l.out = {dims(in).c, 1, 1};
    return push(l);
  }
  // Reads the input as one vector per image (NHWC order).
  int fc(const std::string& n, int in, int features, bool bias = true) {
    Layer l = make(Op::kFc, n, in);
    l.channels = features, l.bias = bias;
    l.out = {features, 1, 1};
    l.params = dims(in).elements() * features + (bias ? features : 0);
    return push(l);
  }
  // A softmax cross-entropy on `logits` whose weight times its loss adds to the total (an
  // auxiliary head's); the main loss is finish's, last.
  int loss(const std::string& n, int logits, float weight) {
    Layer l = make(Op::kSoftmaxLoss, n, logits);
    l.out = {1, 1, 1};
    l.loss_weight = weight;
    return push(l);
  }
  Model finish(int logits) {
    loss("loss", logits, 1.0f);
    return std::move(m_);
  }
  // Layers added while set belong to an auxiliary head: trained, left out of inference.
  void set_aux(bool on) { aux_ = on; }

 private:
  Layer make(Op op, const std::string& n, int in) const {
    Layer l;
    l.op = op, l.name = n, l.input = in, l.aux = aux_;
    return l;
  }
  Layer pool(Op op, const std::string& n, int in, int kernel, int stride, int pad) const {
    const Dims d = dims(in);
    Layer l = make(op, n, in);
    l.kernel_h = l.kernel_w = kernel, l.stride = stride, l.pad_h = l.pad_w = pad;
    l.out = {d.c, (d.h + 2 * pad - kernel) / stride + 1, (d.w + 2 * pad - kernel) / stride + 1};
    return l;
  }
  int push(Layer l) {
    if (l.out.h < 1 || l.out.w < 1) throw Error("model " + m_.name + ": " + l.name + " has an empty output");
    // Inference leaves the auxiliary head out: nothing else may read it.
    for (int r : l.reads())
      if (m_.layers[static_cast<std::size_t>(r)].aux && !l.aux)
        throw Error("model " + m_.name + ": " + l.name + " reads the auxiliary head's " +
                    m_.layers[static_cast<std::size_t>(r)].name);
    l.param_offset = l.params > 0 ? align_params(m_.param_slots) : m_.param_slots;
    m_.param_slots = l.param_offset + l.params;
    m_.param_count += l.params;
    m_.layers.push_back(std::move(l));
    return last();
  }
  Model m_;
  bool aux_ = false;
};

}  // namespace scalebench::train
