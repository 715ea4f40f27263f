// NASNet-A Mobile and tiny-nasnet as layer graphs (workloads/train/nasnet.cpp), and the builder's
// grouped convolutions, adds and subsampling they use. Pure: no GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/model_builder.hpp"

using namespace scalebench;
using namespace scalebench::train;

namespace {
const Layer& find(const Model& m, const std::string& n) {
  for (const Layer& l : m.layers)
    if (l.name == n) return l;
  throw Error("no layer " + n);
}
const Layer& at(const Model& m, int i) { return m.layers[static_cast<std::size_t>(i)]; }
int count(const Model& m, Op op) {
  int k = 0;
  for (const Layer& l : m.layers) k += l.op == op;
  return k;
}
}  // namespace

// Keras' NASNetMobile() summary: 5,326,716 parameters, 5,289,978 trainable; the 36,738 others are
// its batch norms' moving means and variances (2 per channel), which PyTorch and train keep as
// buffers. The paper's Table 2 gives NASNet-A (4 @ 1056) 5.3 M parameters and 564 M multiply-adds.
TEST(TrainNasnet, ParameterCountMatchesKeras) {
  const Model m = build_model("nasnet");
  EXPECT_EQ(m.param_count, 5289978);
  long long bn_channels = 0;
  for (const Layer& l : m.layers) bn_channels += l.op == Op::kBatchNorm ? l.out.c : 0;
  EXPECT_EQ(2 * bn_channels, 36738);
  EXPECT_EQ(m.param_count + 2 * bn_channels, 5326716);
  EXPECT_NEAR(forward_flops(m) / 2e6, 564, 1);
  for (const Layer& l : m.layers) EXPECT_FALSE(l.aux) << l.name;  // no auxiliary head
  // tiny-nasnet: stem 3*8*9 + bn 16; reduction cell (4 filters, p = its 8-channel input): 1x1
  // 8*4 + bn 8, separable blocks 5x5 on h 248, 7x7 on p 652 twice, 5x5 on p 364, 3x3 on x1 120;
  // normal cell: factorized reduction 8*2 * 2 + bn 8, 1x1 16*4 + bn 8, separable 5x5 248 twice,
  // 3x3 120 three times; fc 24*10 + 10. A separable block of c in, f out, k x k:
  // c*k*k + c*f + 2f + f*k*k + f*f + 2f.
  EXPECT_EQ(build_model("tiny-nasnet").param_count,
            216 + 16 + (32 + 8 + 248 + 652 * 2 + 364 + 120) + (40 + 72 + 248 * 2 + 120 * 3) + 250);
}

TEST(TrainNasnet, ShapesFollowTheReference) {
  const Model m = build_model("nasnet");
  EXPECT_EQ(m.layers[0].out, (Dims{3, 224, 224}));
  EXPECT_EQ(native_image("nasnet"), 224);
  EXPECT_EQ(find(m, "stem.conv").out, (Dims{32, 111, 111}));  // 3x3, stride 2, no padding
  EXPECT_EQ(find(m, "cell_stem_0").out, (Dims{44, 56, 56}));  // 4 x 11 filters
  EXPECT_EQ(find(m, "cell_stem_1").out, (Dims{88, 28, 28}));  // 4 x 22
  EXPECT_EQ(find(m, "cell_0").out, (Dims{264, 28, 28}));      // 6 x 44
  EXPECT_EQ(find(m, "cell_3").out, (Dims{264, 28, 28}));
  EXPECT_EQ(find(m, "reduction_cell_0").out, (Dims{352, 14, 14}));
  EXPECT_EQ(find(m, "cell_4").out, (Dims{528, 14, 14}));
  EXPECT_EQ(find(m, "cell_7").out, (Dims{528, 14, 14}));
  EXPECT_EQ(find(m, "reduction_cell_1").out, (Dims{704, 7, 7}));
  EXPECT_EQ(find(m, "cell_11").out, (Dims{1056, 7, 7}));  // penultimate_filters
  EXPECT_EQ(find(m, "fc").params, 1056 * 1000 + 1000);
  EXPECT_EQ(at(m, find(m, "avgpool").input).op, Op::kRelu);  // ReLU before the pooling
  // A separable convolution: depthwise (a group per channel, k x k, padded k / 2), pointwise 1x1,
  // batch norm (eps 0.001) with the ReLU of the second half; the second half's batch norm adds
  // the pair's other branch.
  const Layer& dw = find(m, "reduction_cell_0.right1.dw1");
  EXPECT_EQ(dw.groups, 88);  // p, projected from 264 channels to the cell's 88 filters
  EXPECT_EQ(dw.channels, 88);
  EXPECT_EQ((std::vector<int>{dw.kernel_h, dw.stride, dw.pad_h}), (std::vector<int>{7, 2, 3}));
  EXPECT_EQ(dw.params, 88 * 49);
  EXPECT_EQ(dw.out, (Dims{88, 14, 14}));
  EXPECT_EQ(at(m, dw.input).name, "reduction_cell_0.adjust.bn.relu");
  const Layer& pw = find(m, "reduction_cell_0.right1.pw1");
  EXPECT_EQ(pw.groups, 1);
  EXPECT_EQ(pw.params, 88 * 88);
  EXPECT_EQ(find(m, "reduction_cell_0.right1.bn1").eps, 0.001);
  EXPECT_TRUE(find(m, "reduction_cell_0.right1.bn1").relu);
  EXPECT_FALSE(find(m, "reduction_cell_0.left1.bn2").relu);
  EXPECT_EQ(at(m, find(m, "reduction_cell_0.left1.bn2").residual).name, "reduction_cell_0.right1.bn2");
  // Every convolution (3x3 to 7x7, strides 1 and 2) keeps 'SAME''s output size: ceil(in / stride).
  for (const Layer& l : m.layers)
    if (l.op == Op::kConv && l.name != "stem.conv") {
      const Dims& in = at(m, l.input).out;
      EXPECT_EQ(l.out.h, (in.h + l.stride - 1) / l.stride) << l.name;
      EXPECT_EQ(l.pad_h, l.kernel_h / 2) << l.name;
    }
  // 16 cells of 5 separable blocks, 2 depthwise convolutions each; 4 factorized reductions
  // (the second stem cell and the first cell after each reduction), 11 projections.
  int depthwise = 0;
  for (const Layer& l : m.layers) depthwise += l.op == Op::kConv && l.groups > 1;
  EXPECT_EQ(depthwise, 160);
  EXPECT_EQ(count(m, Op::kSubsample), 4);
  EXPECT_EQ(count(m, Op::kConv), 160 + 160 + 16 + 4 * 2 + 11 + 1);
  EXPECT_EQ(count(m, Op::kConcat), 16 + 4);  // the cells and the factorized reductions' paths
}

// The factorized reduction: ReLU of the previous cell's output, a 1x1 stride-2 convolution on
// one path, the shifted subsampling then a 1x1 on the other, joined, batch norm. At 111x111 the
// shifted path's last row and column fall past the edge (56 of them from 111).
TEST(TrainNasnet, FactorizedReductionShiftsItsSecondPath) {
  const Model m = build_model("nasnet");
  const Layer& p1 = find(m, "cell_stem_1.adjust.path1");
  EXPECT_EQ((std::vector<int>{p1.kernel_h, p1.stride, p1.pad_h, p1.channels}), (std::vector<int>{1, 2, 0, 11}));
  EXPECT_EQ(p1.out, (Dims{11, 56, 56}));
  const Layer& shift = find(m, "cell_stem_1.adjust.shift");
  EXPECT_EQ(shift.op, Op::kSubsample);
  EXPECT_EQ(shift.stride, 2);
  EXPECT_EQ(shift.offset, 1);
  EXPECT_EQ(shift.out, (Dims{32, 56, 56}));
  EXPECT_EQ(at(m, shift.input).name, "stem.bn.relu");
  EXPECT_EQ(p1.input, shift.input);  // both paths read the one ReLU
  const Layer& p2 = find(m, "cell_stem_1.adjust.path2");
  EXPECT_EQ((std::vector<int>{p2.kernel_h, p2.stride, p2.channels}), (std::vector<int>{1, 1, 11}));
  const Layer& bn = find(m, "cell_stem_1.adjust.bn");
  EXPECT_EQ(at(m, bn.input).op, Op::kConcat);
  EXPECT_EQ(bn.out, (Dims{22, 56, 56}));
  // Where only the channels differ: ReLU, 1x1, batch norm.
  const Layer& proj = find(m, "cell_1.adjust.conv");
  EXPECT_EQ(at(m, proj.input).name, "cell_stem_1.relu");
  EXPECT_EQ(proj.params, 88 * 44);
  // The first cell has no previous one: its p is its input, read unchanged (no adjust layers).
  for (const Layer& l : m.layers) EXPECT_EQ(l.name.rfind("cell_stem_0.adjust", 0), std::string::npos) << l.name;
  EXPECT_EQ(find(m, "cell_stem_0.right1.dw1").groups, 32);
}

// The cells' adds: the normal cell's avg3(h) + p and avg3(p) + avg3(p) (one pool, added to
// itself), the reduction cell's avg3(x1) + x2; the others ride on a batch norm's residual.
TEST(TrainNasnet, CellsAddPairsOfBranches) {
  const Model m = build_model("nasnet");
  const Layer& add3 = find(m, "cell_0.add3");
  ASSERT_EQ(add3.inputs.size(), 2u);
  EXPECT_EQ(at(m, add3.inputs[0]).name, "cell_0.left3");
  EXPECT_FALSE(at(m, add3.inputs[0]).count_pad);  // 'SAME' average pooling
  EXPECT_EQ(at(m, add3.inputs[1]).name, "cell_0.adjust.bn");
  const Layer& add4 = find(m, "cell_0.add4");
  EXPECT_EQ(add4.inputs, (std::vector<int>{add4.inputs[0], add4.inputs[0]}));
  EXPECT_EQ(at(m, add4.inputs[0]).name, "cell_0.left4");
  const Layer& red = find(m, "reduction_cell_1.add4");
  EXPECT_EQ(at(m, red.inputs[0]).name, "reduction_cell_1.left4");
  EXPECT_EQ(at(m, red.inputs[1]).name, "reduction_cell_1.right2.bn2");
  // x5 = sep3(h) + h in a normal cell; sep3(x1) + max3(h) in a reduction cell, the max pool
  // that x2 adds too.
  EXPECT_EQ(at(m, find(m, "cell_0.left5.bn2").residual).name, "cell_0.conv_1x1.bn");
  EXPECT_EQ(at(m, find(m, "reduction_cell_1.left5.bn2").residual).name, "reduction_cell_1.left2");
  EXPECT_EQ(at(m, find(m, "reduction_cell_1.right2.bn2").residual).name, "reduction_cell_1.left2");
  const Layer& max3 = find(m, "reduction_cell_1.left2");
  EXPECT_EQ((std::vector<int>{max3.kernel_h, max3.stride, max3.pad_h}), (std::vector<int>{3, 2, 1}));
  // A normal cell joins p, x1 .. x5; a reduction cell x2 .. x5.
  const Layer& cat = find(m, "cell_5");
  ASSERT_EQ(cat.inputs.size(), 6u);
  EXPECT_EQ(at(m, cat.inputs[0]).name, "cell_5.adjust.bn");
  EXPECT_EQ(at(m, cat.inputs[5]).name, "cell_5.left5.bn2");
  EXPECT_EQ(find(m, "reduction_cell_0").inputs.size(), 4u);
}

// What the executor relies on, in both NASNets: every layer reads earlier ones, each ReLU is made
// once per layer it rectifies, the adds' operands and the batch norms' residuals match in shape.
TEST(TrainNasnet, GraphsAreTopologicalWithOneReluPerTensor) {
  for (const std::string n : {"nasnet", "tiny-nasnet"}) {
    const Model m = build_model(n);
    std::vector<int> relus(m.layers.size(), 0);
    for (std::size_t i = 1; i < m.layers.size(); ++i) {
      const Layer& l = m.layers[i];
      for (int r : l.reads()) {
        EXPECT_GE(r, 0) << n << " " << l.name;
        EXPECT_LT(r, static_cast<int>(i)) << n << " " << l.name;
      }
      if (l.op == Op::kRelu) ++relus[static_cast<std::size_t>(l.input)];
      if (l.op == Op::kAdd) {
        EXPECT_EQ(at(m, l.inputs[0]).out, at(m, l.inputs[1]).out) << n << " " << l.name;
      }
      if (l.residual >= 0) {
        EXPECT_EQ(at(m, l.residual).out, l.out) << n << " " << l.name;
      }
    }
    for (std::size_t i = 0; i < m.layers.size(); ++i) EXPECT_LE(relus[i], 1) << n << " " << m.layers[i].name;
  }
  // tiny-nasnet has one cell of each kind, the normal one behind a factorized reduction from 7x7.
  const Model t = build_model("tiny-nasnet");
  EXPECT_EQ(find(t, "stem.conv").out, (Dims{8, 7, 7}));
  EXPECT_EQ(find(t, "cell_stem_0").out, (Dims{16, 4, 4}));
  EXPECT_EQ(find(t, "cell_0.adjust.shift").out, (Dims{8, 4, 4}));
  EXPECT_EQ(find(t, "cell_0").out, (Dims{24, 4, 4}));
  EXPECT_EQ(count(t, Op::kSubsample), 1);
  EXPECT_EQ(count(t, Op::kAdd), 3);
  EXPECT_EQ(build_model("tiny-nasnet", 299).layers[0].out, (Dims{3, 16, 16}));  // ignores the image size
}

// The builder refuses groups that do not divide the channels, adds of different shapes and an
// offset outside the stride, naming the layer; a subsample of an odd size keeps the last
// (partly past the edge) row.
TEST(TrainNasnet, BuilderChecksGroupsAddsAndSubsampling) {
  Builder b("test", 10, {6, 9, 9});
  EXPECT_EQ(b.dims(b.conv("g2", 0, 4, 3, 3, 1, 1, 1, false, 2)), (Dims{4, 9, 9}));
  b.conv("g2b", 0, 4, 3, 3, 1, 1, 1, false, 2);
  EXPECT_EQ(b.dims(b.depthwise("dw", 0, 5, 2, 2)), (Dims{6, 5, 5}));
  try {
    b.conv("g4", 0, 8, 3, 3, 1, 1, 1, false, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("g4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b.add("mismatch", 0, b.last()), Error);
  EXPECT_EQ(b.dims(b.add("same", 1, 2)), (Dims{4, 9, 9}));
  EXPECT_EQ(b.dims(b.subsample("odd", 0, 2, 1)), (Dims{6, 5, 5}));
  EXPECT_THROW(b.subsample("bad", 0, 2, 2), Error);
  const Model m = b.finish(b.fc("fc", b.global_avgpool("gap", b.last()), 10));
  EXPECT_EQ(find(m, "g2").params, 4 * 3 * 3 * 3);  // 6 / 2 input channels per output channel
  EXPECT_EQ(find(m, "dw").params, 6 * 25);
}
