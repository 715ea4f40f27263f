#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/workload_schema.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/train_config.hpp"

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

TEST(TrainModel, ParametersAreContiguousInLayerOrder) {
  for (const std::string& n : model_names()) {
    const Model m = build_model(n);
    long long next = 0;
    for (const Layer& l : m.layers) {
      EXPECT_EQ(l.param_offset, next) << n << " " << l.name;
      next += l.params;
    }
    EXPECT_EQ(next, m.param_count) << n;
  }
}

TEST(TrainModel, BucketsCoverParametersBackwardsInWholeLayers) {
  const Model m = build_model("resnet50");
  const double target = 25.0 * 1024 * 1024;
  const std::vector<Bucket> b = make_buckets(m, target, 4);
  ASSERT_GE(b.size(), 3u);
  // The first bucket holds the last layers (fc first), buckets abut and end at parameter 0.
  EXPECT_EQ(b.front().end, m.param_count);
  EXPECT_EQ(b.front().last_layer, static_cast<int>(m.layers.size()) - 2);  // fc, before the loss
  EXPECT_EQ(b.back().begin, 0);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const Layer& first = m.layers[static_cast<std::size_t>(b[i].first_layer)];
    const Layer& last = m.layers[static_cast<std::size_t>(b[i].last_layer)];
    EXPECT_EQ(b[i].begin, first.param_offset);
    EXPECT_EQ(b[i].end, last.param_offset + last.params);
    if (i + 1 < b.size()) {
      EXPECT_EQ(b[i + 1].end, b[i].begin);
      // Closed as soon as it reached the target: without its first layer it was under it.
      EXPECT_GE((b[i].end - b[i].begin) * 4.0, target);
      EXPECT_LT((b[i].end - first.param_offset - first.params) * 4.0, target);
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
    EXPECT_EQ(taper.front().end, m.param_count);
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
  }
}

// The workload's parameters: lists of precisions and batches become points, precision outermost;
// bad items are refused naming the parameter, before any GPU work.
TEST(TrainConfig, PlanAndBadParameters) {
  const WorkloadDef* def = find_workload("train");
  ASSERT_NE(def, nullptr);
  Json params = Json::object();
  for (const auto& p : def->params) params[p.name] = p.default_value;
  params["precision"] = "fp16,bf16";
  params["batch"] = "64,256";
  EXPECT_EQ(check_param_set(*def, params), "");
  const Config cfg = Config::from_params(params);
  const std::vector<TrainPoint> pts = plan(cfg);
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_EQ(pts[0].to_json(), (Json{{"precision", "fp16"}, {"batch", 64}}));
  EXPECT_EQ(pts[3].to_json(), (Json{{"precision", "bf16"}, {"batch", 256}}));
  EXPECT_EQ(TrainPoint::from_json(pts[1].to_json()).batch, 256);
  EXPECT_EQ(throughput(pts[1]).work, 256);
  EXPECT_EQ(throughput(pts[1]).unit, "images/s");
  params["batch"] = 128;  // YAML makes a single batch a number
  EXPECT_EQ(Config::from_params(params).batches, std::vector<int>{128});

  Json bad = params;
  bad["precision"] = "fp16,fp8e4m3";
  EXPECT_NE(check_param_set(*def, bad).find("precision: unknown value 'fp8e4m3'"), std::string::npos);
  EXPECT_THROW(Config::from_params(bad), Error);
  bad = params;
  bad["batch"] = "64,0";
  EXPECT_NE(check_param_set(*def, bad).find("batch: '0'"), std::string::npos);
  EXPECT_THROW(Config::from_params(bad), Error);
  EXPECT_NE(parse_param(*def->find("model"), "resnet18").error, "");

  // The communication and convolution knobs: defaults, values, and bad values named.
  EXPECT_EQ(Config::from_params(params).comm.ctas, 0);
  EXPECT_EQ(Config::from_params(params).conv_api, "best");
  Json knobs = params;
  knobs["comm_ctas"] = 8;
  knobs["conv_api"] = "graph";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).comm.ctas, 8);
  EXPECT_EQ(Config::from_params(knobs).conv_api, "graph");
  EXPECT_FALSE(Config::from_params(params).comm.cta_efficiency);
  knobs["cta_policy"] = "efficiency";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_TRUE(Config::from_params(knobs).comm.cta_efficiency);
  EXPECT_NE(parse_param(*def->find("cta_policy"), "zero").error, "");
  knobs.erase("cta_policy");
  // The all-reduce's cluster size is NCCL's unless asked for; a size NCCL cannot take is refused.
  EXPECT_EQ(Config::from_params(params).comm.cga, 0);
  knobs["comm_cga"] = 2;
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).comm.cga, 2);
  EXPECT_NE(parse_param(*def->find("comm_cga"), "-1").error, "");
  EXPECT_NE(parse_param(*def->find("comm_cga"), "9").error.find("at most 8"), std::string::npos);
  knobs["comm_cga"] = 9;
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("comm_cga");
  // Buckets are DDP's fixed size unless tapering is asked for.
  EXPECT_EQ(Config::from_params(params).bucket_policy, BucketPolicy::kSize);
  knobs["bucket_policy"] = "taper";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).bucket_policy, BucketPolicy::kTaper);
  EXPECT_NE(parse_param(*def->find("bucket_policy"), "time").error, "");
  knobs.erase("bucket_policy");
  // All-reduces wait for a persistent batch norm unless DDP's rule is asked for.
  EXPECT_EQ(Config::from_params(params).launch, LaunchPolicy::kAfterFusedBn);
  knobs["bucket_launch"] = "ready";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).launch, LaunchPolicy::kReady);
  EXPECT_NE(parse_param(*def->find("bucket_launch"), "early").error, "");
  knobs["bucket_launch"] = "early";
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("bucket_launch");
  // cuDNN's persistent batch norms stay unless some beside each all-reduce are asked off.
  EXPECT_EQ(Config::from_params(params).unfuse_after_launch, 0);
  knobs["unfuse_after_launch"] = 1;
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).unfuse_after_launch, 1);
  EXPECT_NE(parse_param(*def->find("unfuse_after_launch"), "-1").error, "");
  knobs["unfuse_after_launch"] = -1;
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("unfuse_after_launch");
  // The step timeline is asked for, never on by default.
  EXPECT_FALSE(Config::from_params(params).timeline);
  knobs["timeline"] = true;
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_TRUE(Config::from_params(knobs).timeline);
  EXPECT_NE(parse_param(*def->find("timeline"), "sometimes").error, "");
  knobs.erase("timeline");
  // Gradients in NCCL's symmetric memory unless turned off.
  EXPECT_TRUE(Config::from_params(params).symmetric);
  knobs["symmetric"] = false;
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_FALSE(Config::from_params(knobs).symmetric);
  EXPECT_NE(parse_param(*def->find("symmetric"), "maybe").error, "");
  knobs.erase("symmetric");
  // NCCL all-reduces the gradients unless the copy engines are asked for.
  EXPECT_FALSE(Config::from_params(params).copy_engine);
  knobs["allreduce"] = "copy_engine";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_TRUE(Config::from_params(knobs).copy_engine);
  EXPECT_NE(parse_param(*def->find("allreduce"), "nvls").error, "");
  knobs["allreduce"] = "nvls";
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("allreduce");
  knobs["conv_api"] = "fastest";
  EXPECT_NE(parse_param(*def->find("conv_api"), "fastest").error, "");
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs["conv_api"] = "legacy";
  knobs["comm_ctas"] = -1;
  EXPECT_NE(parse_param(*def->find("comm_ctas"), "-1").error, "");
  EXPECT_THROW(Config::from_params(knobs), Error);
}
