#include <gtest/gtest.h>

#include <algorithm>
#include <string>

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
}  // namespace

// torchvision's parameter counts (sum of numel over model.parameters()).
TEST(TrainModel, ParameterCountsMatchTorchvision) {
  EXPECT_EQ(build_model("resnet50").param_count, 25557032);
  EXPECT_EQ(build_model("resnet101").param_count, 44549160);
  EXPECT_EQ(build_model("resnet152").param_count, 60192808);
  EXPECT_EQ(build_model("vgg16").param_count, 138357544);
  // tiny: conv0 3*8*9+8, conv1 8*8*9, bn1 16, block conv1 8*4, bn 8, conv2 4*4*9, bn 8, conv3 4*16,
  // projection 8*16, bn 32, bn3 32, fc 16*10+10.
  EXPECT_EQ(build_model("tiny").param_count, 224 + 576 + 16 + 32 + 8 + 144 + 8 + 64 + 128 + 32 + 32 + 170);
}

// torchvision's inception_v3() (aux_logits=True): 27,161,264 parameters, 23,834,568 without the
// auxiliary head (inception_v3(aux_logits=False), as with its pretrained weights in eval).
// Inception-v4 as timm and Cadene's pretrainedmodels define it: 42,679,816.
TEST(TrainModel, InceptionParameterCountsMatchTheReferences) {
  const Model v3 = build_model("inception3");
  EXPECT_EQ(v3.param_count, 27161264);
  long long aux = 0;
  for (const Layer& l : v3.layers) aux += l.aux ? l.params : 0;
  // The head: conv0 768*128 + bn 256, conv1 128*768*25 + bn 1536, fc 768*1000 + 1000.
  EXPECT_EQ(aux, 98304 + 256 + 2457600 + 1536 + 769000);
  EXPECT_EQ(v3.param_count - aux, 23834568);
  EXPECT_EQ(build_model("inception4").param_count, 42679816);
  // tiny-inception: stem 3*8*9, block branches 8*8, 8*8, 8*8*3, 8*8*3, 8*8, aux conv 32*8, reduction
  // 32*8*9 (convolutions), 8 batch norms of 8 channels (16 each), aux fc 8*10+10, fc 40*10+10.
  EXPECT_EQ(build_model("tiny-inception").param_count, 216 + 64 + 64 + 192 + 192 + 64 + 256 + 2304 + 8 * 16 + 90 + 410);
}

// The published figures: inception_v3 5.71 GMACs at 299 (torchvision's table, the model in eval:
// no auxiliary head), Inception-v4 about 12.3 (timm's table: 12.28).
TEST(TrainModel, InceptionForwardFlops) {
  const Model v3 = build_model("inception3");
  EXPECT_NEAR(forward_flops(v3, false) / 2e9, 5.71, 0.01);
  // The auxiliary head adds its 3.3 M multiply-adds in training.
  EXPECT_NEAR((forward_flops(v3) - forward_flops(v3, false)) / 2e6, 0.768 * 25 * 0.128 + 2.4576 + 0.768, 0.001);
  EXPECT_NEAR(forward_flops(build_model("inception4")) / 2e9, 12.25, 0.05);
}

TEST(TrainModel, InceptionV3ShapesFollowTorchvision) {
  const Model m = build_model("inception3");
  EXPECT_EQ(m.layers[0].out, (Dims{3, 299, 299}));  // its own image size by default
  EXPECT_EQ(find(m, "Conv2d_1a_3x3.conv").out, (Dims{32, 149, 149}));
  EXPECT_EQ(find(m, "maxpool1").out, (Dims{64, 73, 73}));
  EXPECT_EQ(find(m, "maxpool2").out, (Dims{192, 35, 35}));
  EXPECT_EQ(find(m, "Mixed_5b").out, (Dims{256, 35, 35}));
  EXPECT_EQ(find(m, "Mixed_5d").out, (Dims{288, 35, 35}));
  EXPECT_EQ(find(m, "Mixed_6a").out, (Dims{768, 17, 17}));
  EXPECT_EQ(find(m, "Mixed_6e").out, (Dims{768, 17, 17}));
  EXPECT_EQ(find(m, "AuxLogits.avg_pool").out, (Dims{768, 5, 5}));
  EXPECT_EQ(find(m, "AuxLogits.conv1.conv").out, (Dims{768, 1, 1}));
  EXPECT_EQ(find(m, "Mixed_7a").out, (Dims{1280, 8, 8}));
  EXPECT_EQ(find(m, "Mixed_7c").out, (Dims{2048, 8, 8}));
  EXPECT_EQ(find(m, "fc").params, 2048 * 1000 + 1000);
  // A 1x7 convolution padded in width only, then a 7x1 padded in height: both keep 17x17.
  const Layer& c17 = find(m, "Mixed_6b.branch7x7_2.conv");
  EXPECT_EQ((std::vector<int>{c17.kernel_h, c17.kernel_w, c17.pad_h, c17.pad_w}), (std::vector<int>{1, 7, 0, 3}));
  EXPECT_EQ(c17.out, (Dims{128, 17, 17}));
  EXPECT_EQ(c17.params, 128 * 128 * 7);
  const Layer& c71 = find(m, "Mixed_6b.branch7x7_3.conv");
  EXPECT_EQ((std::vector<int>{c71.kernel_h, c71.kernel_w, c71.pad_h, c71.pad_w}), (std::vector<int>{7, 1, 3, 0}));
  EXPECT_EQ(c71.out, (Dims{192, 17, 17}));
  // BasicConv2d: no bias, batch norm eps 0.001, ReLU.
  EXPECT_FALSE(c17.bias);
  EXPECT_EQ(find(m, "Mixed_6b.branch7x7_2.bn").eps, 0.001);
  EXPECT_TRUE(find(m, "Mixed_6b.branch7x7_2.bn").relu);
  // The branch pool: 3x3, stride 1, padding 1, the padding counted (avg_pool2d's default).
  const Layer& pool = find(m, "Mixed_5b.avg_pool");
  EXPECT_EQ(pool.op, Op::kAvgPool);
  EXPECT_TRUE(pool.count_pad);
  EXPECT_EQ(pool.out, (Dims{192, 35, 35}));
  // Mixed_7b joins six: 320, the two halves of 3x3 (384 each), of 3x3dbl (384 each), pool 192.
  const Layer& e = find(m, "Mixed_7b");
  ASSERT_EQ(e.inputs.size(), 6u);
  EXPECT_EQ(m.layers[static_cast<std::size_t>(e.inputs[1])].name, "Mixed_7b.branch3x3_2a.bn");
  EXPECT_EQ(m.layers[static_cast<std::size_t>(e.inputs[2])].name, "Mixed_7b.branch3x3_2b.bn");
  // The auxiliary head reads Mixed_6e, its loss weighs 0.4; the main loss is last, weight 1.
  const Layer& aux_loss = find(m, "AuxLogits.loss");
  EXPECT_EQ(aux_loss.op, Op::kSoftmaxLoss);
  EXPECT_FLOAT_EQ(aux_loss.loss_weight, 0.4f);
  EXPECT_TRUE(aux_loss.aux);
  EXPECT_EQ(m.layers[static_cast<std::size_t>(find(m, "AuxLogits.avg_pool").input)].name, "Mixed_6e");
  EXPECT_EQ(m.layers.back().op, Op::kSoftmaxLoss);
  EXPECT_FLOAT_EQ(m.layers.back().loss_weight, 1.0f);
  EXPECT_FALSE(m.layers.back().aux);
  // torchvision's BasicConv2d modules; an image too small for the auxiliary head's 5x5 conv is
  // refused, naming the parameter.
  int convs = 0, bns = 0;
  for (const Layer& l : m.layers) convs += l.op == Op::kConv, bns += l.op == Op::kBatchNorm;
  EXPECT_EQ(convs, 96);  // 94 in the trunk and 2 in the auxiliary head
  EXPECT_EQ(bns, 96);
  try {
    build_model("inception3", 224);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("image: 224"), std::string::npos) << e.what();
  }
}

TEST(TrainModel, InceptionV4ShapesFollowTimm) {
  const Model m = build_model("inception4");
  EXPECT_EQ(m.layers[0].out, (Dims{3, 299, 299}));
  EXPECT_EQ(find(m, "features.2.conv").out, (Dims{64, 147, 147}));
  EXPECT_EQ(find(m, "features.3").out, (Dims{160, 73, 73}));    // Mixed_3a
  EXPECT_EQ(find(m, "features.4").out, (Dims{192, 71, 71}));    // Mixed_4a
  EXPECT_EQ(find(m, "features.5").out, (Dims{384, 35, 35}));    // Mixed_5a
  EXPECT_EQ(find(m, "features.9").out, (Dims{384, 35, 35}));    // the 4th Inception-A
  EXPECT_EQ(find(m, "features.10").out, (Dims{1024, 17, 17}));  // Reduction-A
  EXPECT_EQ(find(m, "features.17").out, (Dims{1024, 17, 17}));  // the 7th Inception-B
  EXPECT_EQ(find(m, "features.18").out, (Dims{1536, 8, 8}));    // Reduction-B
  EXPECT_EQ(find(m, "features.21").out, (Dims{1536, 8, 8}));    // the 3rd Inception-C
  EXPECT_EQ(find(m, "global_pool").out, (Dims{1536, 1, 1}));
  EXPECT_EQ(find(m, "last_linear").params, 1536 * 1000 + 1000);
  // timm's and Cadene's branch pools leave the padding out of the divisor.
  EXPECT_FALSE(find(m, "features.6.branch3.0").count_pad);
  const Layer& b = find(m, "features.11.branch2.4.conv");
  EXPECT_EQ((std::vector<int>{b.kernel_h, b.kernel_w, b.pad_h, b.pad_w}), (std::vector<int>{1, 7, 0, 3}));
  EXPECT_EQ(b.out, (Dims{256, 17, 17}));
  for (const Layer& l : m.layers) EXPECT_FALSE(l.aux) << l.name;
}

// What the executor relies on: every layer reads only earlier ones, a concat's channels are its
// inputs', and a block's input is read by each of its branches (its gradient, their sum).
TEST(TrainModel, InceptionGraphsAreTopologicalAndBranchesShareTheirInput) {
  for (const std::string n : {"inception3", "inception4", "tiny-inception"}) {
    const Model m = build_model(n);
    std::vector<int> readers(m.layers.size(), 0);
    for (std::size_t i = 1; i < m.layers.size(); ++i) {
      const Layer& l = m.layers[i];
      ASSERT_FALSE(l.reads().empty()) << n << " " << l.name;
      for (int r : l.reads()) {
        EXPECT_GE(r, 0) << n << " " << l.name;
        EXPECT_LT(r, static_cast<int>(i)) << n << " " << l.name;
        if (!l.aux) {
          EXPECT_FALSE(m.layers[static_cast<std::size_t>(r)].aux) << n << " " << l.name;
        }
        ++readers[static_cast<std::size_t>(r)];
      }
      if (l.op == Op::kConcat) {
        int c = 0;
        for (int in : l.inputs) c += m.layers[static_cast<std::size_t>(in)].out.c;
        EXPECT_EQ(c, l.out.c) << n << " " << l.name;
      }
    }
    auto readers_of = [&](const std::string& name) {
      for (std::size_t i = 0; i < m.layers.size(); ++i)
        if (m.layers[i].name == name) return readers[i];
      return -1;
    };
    if (n == "inception3") {
      EXPECT_EQ(readers_of("maxpool2"), 4);  // Mixed_5b's input: three 1x1 convolutions and the branch pool
      // Mixed_6e's output: Mixed_7a's two branches and its max pool, and the auxiliary head.
      EXPECT_EQ(readers_of("Mixed_6e"), 4);
    }
    if (n == "tiny-inception") {
      EXPECT_EQ(readers_of("stem.bn"), 4);  // the block's four branches
    }
  }
}

// The builder refuses what the executor cannot run: a concat of different sizes, a layer outside
// the auxiliary head reading it (inference leaves the head out).
TEST(TrainModel, BuilderRefusesMismatchedConcatAndReadsOfTheAuxiliaryHead) {
  Builder b("test", 10, {3, 16, 16});
  const int full = b.conv("full", 0, 8, 3, 1, 1);
  const int half = b.conv("half", 0, 8, 3, 2, 1);
  EXPECT_THROW(b.concat("cat", {full, half}), Error);
  EXPECT_EQ(b.dims(b.concat("cat", {full, full})), (Dims{16, 16, 16}));
  b.set_aux(true);
  const int aux = b.conv("aux", full, 8, 1, 1, 0);
  b.set_aux(false);
  EXPECT_THROW(b.conv("reads_aux", aux, 8, 1, 1, 0), Error);
}

// Multiply-adds x 2 of the forward pass: ResNet-50 4.09 GMACs, ResNet-101 7.80, ResNet-152 11.51,
// VGG-16 15.47 (the usual published figures, convolutions and fully connected layers).
TEST(TrainModel, ForwardFlops) {
  EXPECT_NEAR(forward_flops(build_model("resnet50")) / 2e9, 4.09, 0.01);
  EXPECT_NEAR(forward_flops(build_model("resnet101")) / 2e9, 7.80, 0.01);
  EXPECT_NEAR(forward_flops(build_model("resnet152")) / 2e9, 11.51, 0.01);
  EXPECT_NEAR(forward_flops(build_model("vgg16")) / 2e9, 15.47, 0.01);
}

TEST(TrainModel, ShapesFollowTorchvisionV15) {
  const Model m = build_model("resnet50");
  EXPECT_EQ(find(m, "conv1").out, (Dims{64, 112, 112}));
  EXPECT_EQ(find(m, "maxpool").out, (Dims{64, 56, 56}));
  // v1.5: layer2's first block strides in its 3x3 conv, not its first 1x1.
  EXPECT_EQ(find(m, "layer2.0.conv1").out, (Dims{128, 56, 56}));
  EXPECT_EQ(find(m, "layer2.0.conv2").out, (Dims{128, 28, 28}));
  EXPECT_EQ(find(m, "layer2.0.conv2").stride, 2);
  EXPECT_EQ(find(m, "layer4.2.bn3").out, (Dims{2048, 7, 7}));
  EXPECT_EQ(find(m, "avgpool").out, (Dims{2048, 1, 1}));
  EXPECT_EQ(find(m, "fc").params, 2048 * 1000 + 1000);
  // The residual add: bn3 of a projecting block adds the projection's bn; others the block input.
  const Layer& bn3 = find(m, "layer1.0.bn3");
  EXPECT_EQ(m.layers[static_cast<std::size_t>(bn3.residual)].name, "layer1.0.downsample.1");
  const Layer& bn3b = find(m, "layer1.1.bn3");
  EXPECT_EQ(m.layers[static_cast<std::size_t>(bn3b.residual)].name, "layer1.0.bn3");
  EXPECT_TRUE(bn3b.relu);
  EXPECT_FALSE(find(m, "layer1.0.downsample.1").relu);
  // 53 convolutions and batch norms, one fc, a loss last.
  int convs = 0, bns = 0;
  for (const Layer& l : m.layers) convs += l.op == Op::kConv, bns += l.op == Op::kBatchNorm;
  EXPECT_EQ(convs, 53);
  EXPECT_EQ(bns, 53);
  EXPECT_EQ(m.layers.back().op, Op::kSoftmaxLoss);
  // Every layer reads an earlier one.
  for (std::size_t i = 1; i < m.layers.size(); ++i) {
    EXPECT_GE(m.layers[i].input, 0);
    EXPECT_LT(m.layers[i].input, static_cast<int>(i));
    EXPECT_LT(m.layers[i].residual, static_cast<int>(i));
  }
}

// In layer order, each layer's parameters at the first multiple of kParamAlign after the last
// one's: 16-bit weights 256-byte aligned whatever the channel counts (NASNet's 44 among them).
TEST(TrainModel, ParametersFollowInLayerOrderEachLayerAligned) {
  for (const std::string& n : model_names()) {
    const Model m = build_model(n);
    long long next = 0, count = 0;
    for (const Layer& l : m.layers) {
      if (l.params == 0) continue;
      EXPECT_EQ(l.param_offset % kParamAlign, 0) << n << " " << l.name;
      EXPECT_GE(l.param_offset, next) << n << " " << l.name;
      EXPECT_LT(l.param_offset - next, kParamAlign) << n << " " << l.name;
      next = l.param_offset + l.params;
      count += l.params;
    }
    EXPECT_EQ(next, m.param_slots) << n;
    EXPECT_EQ(count, m.param_count) << n;
  }
}

TEST(TrainModel, BucketsCoverParametersBackwardsInWholeLayers) {
  const Model m = build_model("resnet50");
  const double target = 25.0 * 1024 * 1024;
  const std::vector<Bucket> b = make_buckets(m, target, 4);
  ASSERT_GE(b.size(), 3u);
  // The first bucket holds the last layers (fc first), buckets abut (the gaps between layers
  // included) and end at parameter 0.
  EXPECT_EQ(b.front().end, m.param_slots);
  EXPECT_EQ(b.front().last_layer, static_cast<int>(m.layers.size()) - 2);  // fc, before the loss
  EXPECT_EQ(b.back().begin, 0);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const Layer& first = m.layers[static_cast<std::size_t>(b[i].first_layer)];
    const Layer& last = m.layers[static_cast<std::size_t>(b[i].last_layer)];
    EXPECT_EQ(b[i].begin, first.param_offset);
    EXPECT_GE(b[i].end, last.param_offset + last.params);
    EXPECT_LT(b[i].end - (last.param_offset + last.params), kParamAlign);
    if (i + 1 < b.size()) {
      EXPECT_EQ(b[i + 1].end, b[i].begin);
      // Closed as soon as it reached the target: without its first layer it was under it.
      EXPECT_GE((b[i].end - b[i].begin) * 4.0, target);
      EXPECT_LT((b[i].end - align_params(first.param_offset + first.params)) * 4.0, target);
    }
  }
  // fp16 gradients: half the bytes, so about half as many buckets.
  EXPECT_LT(make_buckets(m, target, 2).size(), b.size());
  // A target of one byte: one bucket per layer with parameters.
  int with_params = 0;
  for (const Layer& l : m.layers) with_params += l.params > 0;
  EXPECT_EQ(make_buckets(m, 1, 4).size(), static_cast<std::size_t>(with_params));
  // A target above the model: everything at once.
  EXPECT_EQ(make_buckets(m, 1e12, 4).size(), 1u);
}

TEST(TrainModel, TaperedBucketsLeaveLittleForTheEndOfTheBackwardPass) {
  const Model m = build_model("resnet50");
  const double target = 25.0 * 1024 * 1024;
  for (int bytes : {4, 2}) {
    const std::vector<Bucket> size = make_buckets(m, target, bytes, BucketPolicy::kSize);
    const std::vector<Bucket> taper = make_buckets(m, target, bytes, BucketPolicy::kTaper);
    // The same cover: from fc back to parameter 0, abutting, in whole layers.
    EXPECT_EQ(taper.front().end, m.param_slots);
    EXPECT_EQ(taper.back().begin, 0);
    for (std::size_t i = 0; i + 1 < taper.size(); ++i) EXPECT_EQ(taper[i + 1].end, taper[i].begin);
    // DDP's policy leaves a bucket of over 15 MB for the end; tapered, what waits for the stem's
    // gradients is under the floor, and no bucket is above the target by more than one layer.
    EXPECT_GT((size.back().end - size.back().begin) * bytes, 15e6) << bytes;
    EXPECT_LT((taper.back().end - taper.back().begin) * bytes, kMinTaperedBytes) << bytes;
    for (const Bucket& b : taper) {
      const Layer& first = m.layers[static_cast<std::size_t>(b.first_layer)];
      EXPECT_LT((b.end - b.begin - first.params) * static_cast<double>(bytes), target);
    }
    EXPECT_GT(taper.size(), size.size());
  }
  // A target below the floor is the floor for nothing: buckets are at most the target.
  EXPECT_EQ(make_buckets(m, 1, 4, BucketPolicy::kTaper).size(), make_buckets(m, 1, 4).size());
}

// ResNet-50's first 16-bit bucket closes at layer4.0.conv3, just before layer4.0.bn2: launched when
// ready, its all-reduce would hold SMs that batch norm's persistent kernel needs.
TEST(TrainModel, AllReducesWaitPastTheNextPersistentBatchNorm) {
  const Model m = build_model("resnet50");
  const std::vector<Bucket> b = make_buckets(m, 25.0 * 1024 * 1024, 2);
  ASSERT_EQ(b.size(), 2u);
  ASSERT_EQ(m.layers[static_cast<std::size_t>(b[0].first_layer)].name, "layer4.0.conv3");
  auto all_fused = [&](int i) { return m.layers[static_cast<std::size_t>(i)].op == Op::kBatchNorm; };
  auto none_fused = [](int) { return false; };
  // DDP's rule: when the gradients are done, whatever follows.
  const std::vector<int> ready = launch_layers(m, b, LaunchPolicy::kReady, all_fused);
  EXPECT_EQ(ready, (std::vector<int>{b[0].first_layer, b[1].first_layer}));
  const std::vector<int> after = launch_layers(m, b, LaunchPolicy::kAfterFusedBn, all_fused);
  EXPECT_EQ(m.layers[static_cast<std::size_t>(after[0])].name, "layer4.0.bn2");
  // The last bucket ends at the stem's conv: no batch norm follows it, so it goes when ready.
  EXPECT_EQ(after[1], b[1].first_layer);
  // Batch norms in our own kernels (bf16, tf32) need no SM the all-reduce holds: nothing waits.
  EXPECT_EQ(launch_layers(m, b, LaunchPolicy::kAfterFusedBn, none_fused), ready);
  // Buckets never launch out of order (NCCL needs the same order on every rank), even when one
  // bucket ends between another's gradients and the batch norm that one waits for.
  const std::vector<Bucket> one_per_layer = make_buckets(m, 1, 2);
  const std::vector<int> each = launch_layers(m, one_per_layer, LaunchPolicy::kAfterFusedBn, all_fused);
  for (std::size_t i = 0; i + 1 < each.size(); ++i) EXPECT_GE(each[i], each[i + 1]) << i;
  for (std::size_t i = 0; i < each.size(); ++i) EXPECT_LE(each[i], one_per_layer[i].first_layer) << i;
}

// With the launch after layer4.0.bn2, the all-reduce outlasts the next convolution on 4 GPUs and
// layer4.0.bn1 waited for its SMs: that batch norm is the one unfuse_after_launch=1 moves off cuDNN.
TEST(TrainModel, BatchNormsBesideAnAllReduceAreTheNextPersistentOnes) {
  const Model m = build_model("resnet50");
  const std::vector<Bucket> b = make_buckets(m, 25.0 * 1024 * 1024, 2);
  auto fused = [&](int i) {
    const Layer& l = m.layers[static_cast<std::size_t>(i)];
    return l.op == Op::kBatchNorm && l.relu;  // as in fp16: the downsample's batch norm has nothing to fuse
  };
  const std::vector<int> at = launch_layers(m, b, LaunchPolicy::kAfterFusedBn, fused);
  auto names = [&](const std::vector<int>& layers) {
    std::vector<std::string> out;
    for (int i : layers) out.push_back(m.layers[static_cast<std::size_t>(i)].name);
    return out;
  };
  EXPECT_TRUE(batch_norms_beside(m, at, 0, fused).empty());
  EXPECT_EQ(names(batch_norms_beside(m, at, 1, fused)), std::vector<std::string>{"layer4.0.bn1"});
  // The next one past the downsample branch; the last bucket launches after the stem: none follows.
  EXPECT_EQ(names(batch_norms_beside(m, at, 2, fused)), (std::vector<std::string>{"layer3.5.bn3", "layer4.0.bn1"}));
  // With DDP's launch the first one beside it is bn2 itself.
  EXPECT_EQ(names(batch_norms_beside(m, launch_layers(m, b, LaunchPolicy::kReady, fused), 1, fused)),
            std::vector<std::string>{"layer4.0.bn2"});
  // No persistent batch norms (bf16, tf32, fp32): nothing to move.
  EXPECT_TRUE(batch_norms_beside(m, at, 3, [](int) { return false; }).empty());
  // Launches close together name a batch norm once, in layer order.
  const std::vector<int> each =
      batch_norms_beside(m, launch_layers(m, make_buckets(m, 1, 2), LaunchPolicy::kReady, fused), 2, fused);
  EXPECT_TRUE(std::is_sorted(each.begin(), each.end()));
  EXPECT_EQ(std::adjacent_find(each.begin(), each.end()), each.end());
}

// The time-to-accuracy net: 28x28 in, pooled to 14 and 7, 10 classes; every block's residual add
// has its input's shape.
TEST(TrainModel, FmnistResnetShapes) {
  const Model m = build_model("fmnist-resnet");
  EXPECT_EQ(m.classes, 10);
  EXPECT_EQ(m.layers[0].out, (Dims{kFmnistChannels, 28, 28}));
  int residuals = 0;
  for (const Layer& l : m.layers) {
    if (l.name == "layer1.pool") {
      EXPECT_EQ(l.out, (Dims{64, 14, 14}));
    }
    if (l.name == "layer2.pool") {
      EXPECT_EQ(l.out, (Dims{128, 7, 7}));
    }
    residuals += l.residual >= 0;
  }
  EXPECT_EQ(residuals, 2);
  // conv weights: 8*32*9, 32*64*9, 2 x 64*64*9, 64*128*9, 2 x 128*128*9; bn: 2 x (32+64+64+64+128+128+128);
  // fc: 128*10+10.
  EXPECT_EQ(m.param_count,
            2304 + 18432 + 2 * 36864 + 73728 + 2 * 147456 + 2 * (32 + 64 + 64 + 64 + 128 + 128 + 128) + 1290);
}

TEST(TrainModel, UnknownModelNamesTheChoices) {
  try {
    build_model("resnet18");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50, resnet101"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("inception3, inception4"), std::string::npos);
  }
}
