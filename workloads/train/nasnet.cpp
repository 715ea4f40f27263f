#include "workloads/train/nasnet.hpp"

#include <map>
#include <string>

#include "workloads/train/model_builder.hpp"

namespace scalebench::train {

namespace {
constexpr double kNasnetBnEps = 0.001;

// NASNet-A's cells on a Builder, named as the PyTorch peer's modules are (so that weights map
// by name). The ReLU of a layer is made once, whoever reads it: Keras and slim apply it again in
// every branch (and a cell's `p` was its predecessor's input, rectified there already), the
// same values each time.
class Cells {
 public:
  explicit Cells(Builder& b) : b_(b) {}

  int relu(int x) {
    if (auto it = relus_.find(x); it != relus_.end()) return it->second;
    return relus_[x] = b_.relu(b_.name(x) + ".relu", x);
  }

  int bn(const std::string& n, int x, bool relu_after = false, int residual = -1) {
    return b_.bn(n, x, relu_after, residual, kNasnetBnEps);
  }

  // ReLU, 1x1 convolution, batch norm: a cell's input to its filters.
  int conv1x1(const std::string& n, int in, int filters) {
    return bn(n + ".bn", b_.conv(n + ".conv", relu(in), filters, 1, 1, 0));
  }

  // slim's stacked separable convolution (Keras' _separable_conv_block): ReLU, depthwise k x k
  // (the stride here), pointwise, batch norm, ReLU, depthwise k x k, pointwise, batch norm. The
  // last batch norm adds `residual` (the other branch of the cell's pair), if any.
  int sep(const std::string& n, int in, int filters, int k, int stride, int residual = -1) {
    int x = b_.depthwise(n + ".dw1", relu(in), k, stride, k / 2);
    x = bn(n + ".bn1", b_.conv(n + ".pw1", x, filters, 1, 1, 0), true);
    x = b_.depthwise(n + ".dw2", x, k, 1, k / 2);
    return bn(n + ".bn2", b_.conv(n + ".pw2", x, filters, 1, 1, 0), false, residual);
  }

  // The previous cell's output made to match this cell's input (Keras' _adjust_block, slim's
  // _reduce_prev_layer): none before the first cell; a factorized reduction where the previous
  // is twice the size (ReLU, then two 1x1 convolutions of half the filters each, one on every
  // other pixel from (0, 0), one from (1, 1), joined, batch norm); a 1x1 projection where only
  // the channels differ.
  int adjust(const std::string& n, int p, int ip, int filters) {
    if (p < 0) return ip;
    const Dims pd = b_.dims(p), id = b_.dims(ip);
    if (pd.w != id.w) {
      const int r = relu(p);
      // A 1x1 average pool of stride 2, then a 1x1 convolution: the convolution with stride 2.
      const int p1 = b_.conv(n + ".path1", r, filters / 2, 1, 1, 2, 0, 0);
      const int shifted = b_.subsample(n + ".shift", r, 2, 1);
      const int p2 = b_.conv(n + ".path2", shifted, filters - filters / 2, 1, 1, 0);
      return bn(n + ".bn", b_.concat(n + ".paths", {p1, p2}));
    }
    if (pd.c != filters) return conv1x1(n, p, filters);
    return p;
  }

  // Normal cell: h = 1x1 of the input, p = the adjusted previous; the concatenation of p and
  // sep5(h) + sep3(p), sep5(p) + sep3(p), avg3(h) + p, avg3(p) + avg3(p), sep3(h) + h.
  int normal(const std::string& n, int ip, int p, int filters) {
    const int pa = adjust(n + ".adjust", p, ip, filters);
    const int h = conv1x1(n + ".conv_1x1", ip, filters);
    // Each pair's second branch first, so that the first's last batch norm adds it.
    const int x1 = sep(n + ".left1", h, filters, 5, 1, sep(n + ".right1", pa, filters, 3, 1));
    const int x2 = sep(n + ".left2", pa, filters, 5, 1, sep(n + ".right2", pa, filters, 3, 1));
    const int x3 = b_.add(n + ".add3", b_.avgpool(n + ".left3", h, 3, 1, 1, false), pa);
    // Keras' and slim's two pools of p are the same pool: computed once and added to itself.
    const int pool = b_.avgpool(n + ".left4", pa, 3, 1, 1, false);
    const int x4 = b_.add(n + ".add4", pool, pool);
    const int x5 = sep(n + ".left5", h, filters, 3, 1, h);
    return b_.concat(n, {pa, x1, x2, x3, x4, x5});
  }

  // Reduction cell (stride 2): the concatenation of x2 = max3(h) + sep7(p), x3 = avg3(h) +
  // sep5(p), x4 = avg3(x1) (stride 1) + x2, x5 = sep3(x1) + max3(h), with x1 = sep5(h) + sep7(p).
  int reduction(const std::string& n, int ip, int p, int filters) {
    const int pa = adjust(n + ".adjust", p, ip, filters);
    const int h = conv1x1(n + ".conv_1x1", ip, filters);
    const int x1 = sep(n + ".left1", h, filters, 5, 2, sep(n + ".right1", pa, filters, 7, 2));
    // Keras pools h twice the same way (for x2 and x5): one pool, read by both.
    const int max3 = b_.maxpool(n + ".left2", h, 3, 2, 1);
    const int x2 = sep(n + ".right2", pa, filters, 7, 2, max3);
    const int x3 = sep(n + ".right3", pa, filters, 5, 2, b_.avgpool(n + ".left3", h, 3, 2, 1, false));
    const int x4 = b_.add(n + ".add4", b_.avgpool(n + ".left4", x1, 3, 1, 1, false), x2);
    const int x5 = sep(n + ".left5", x1, filters, 3, 1, max3);
    return b_.concat(n, {x2, x3, x4, x5});
  }

 private:
  Builder& b_;
  std::map<int, int> relus_;
};

// Every cell reads the last two cells' outputs: `x` the last (its input), `p` the one before.
struct Stack {
  int x = 0, p = -1;
  void push(int out) { p = x, x = out; }
};

// The stem's 3x3 convolution (stride 2, no padding) and batch norm, then the cells, then ReLU,
// global average pooling and the classifier.
Model nasnet(const std::string& name, int image, int stem_filters, int penultimate, int cells_per_stack, int classes) {
  Builder b(name, classes, {3, image, image});
  Cells c(b);
  Stack s;
  s.x = c.bn("stem.bn", b.conv("stem.conv", 0, stem_filters, 3, 2, 0));
  const int filters = penultimate / 24;  // slim's num_conv_filters: the last stack's 6 x 4 x this
  s.push(c.reduction("cell_stem_0", s.x, s.p, filters / 4));
  s.push(c.reduction("cell_stem_1", s.x, s.p, filters / 2));
  int cell = 0;
  for (int stack = 0; stack < 3; ++stack) {
    if (stack > 0) s.push(c.reduction("reduction_cell_" + std::to_string(stack - 1), s.x, s.p, filters << stack));
    for (int k = 0; k < cells_per_stack; ++k, ++cell)
      s.push(c.normal("cell_" + std::to_string(cell), s.x, s.p, filters << stack));
  }
  const int x = b.global_avgpool("avgpool", c.relu(s.x));
  return b.finish(b.fc("fc", x, classes));
}
}  // namespace

Model nasnet_mobile(int image) { return nasnet("nasnet", image, 32, 1056, 4, 1000); }

Model tiny_nasnet() {
  Builder b("tiny-nasnet", 10, {3, 16, 16});
  Cells c(b);
  Stack s;
  s.x = c.bn("stem.bn", b.conv("stem.conv", 0, 8, 3, 2, 0));  // 7x7
  s.push(c.reduction("cell_stem_0", s.x, s.p, 4));            // 4x4
  s.push(c.normal("cell_0", s.x, s.p, 4));                    // the stem's 7x7 reduced to 4x4
  const int x = b.global_avgpool("avgpool", c.relu(s.x));
  return b.finish(b.fc("fc", x, 10));
}

}  // namespace scalebench::train
