#include "workloads/train/inception.hpp"

#include <string>
#include <vector>

#include "workloads/train/model_builder.hpp"

namespace scalebench::train {

namespace {
constexpr double kInceptionBnEps = 0.001;

// BasicConv2d of both reference definitions: a convolution without bias, batch norm, ReLU.
int basic_hw(Builder& b, const std::string& n, int in, int channels, int kh, int kw, int stride, int ph, int pw) {
  const int x = b.conv(n + ".conv", in, channels, kh, kw, stride, ph, pw);
  return b.bn(n + ".bn", x, true, -1, kInceptionBnEps);
}
int basic(Builder& b, const std::string& n, int in, int channels, int k, int stride = 1, int pad = 0) {
  return basic_hw(b, n, in, channels, k, k, stride, pad, pad);
}
// A 1x7 (or 1x3) convolution padded to keep the width, and its 7x1 twin.
int basic_1xn(Builder& b, const std::string& n, int in, int channels, int k) {
  return basic_hw(b, n, in, channels, 1, k, 1, 0, k / 2);
}
int basic_nx1(Builder& b, const std::string& n, int in, int channels, int k) {
  return basic_hw(b, n, in, channels, k, 1, 1, k / 2, 0);
}

// torchvision's InceptionA .. InceptionE and InceptionAux (module and parameter order as there).
int v3_a(Builder& b, const std::string& n, int in, int pool_features) {
  const int b1 = basic(b, n + ".branch1x1", in, 64, 1);
  int b5 = basic(b, n + ".branch5x5_1", in, 48, 1);
  b5 = basic(b, n + ".branch5x5_2", b5, 64, 5, 1, 2);
  int b3 = basic(b, n + ".branch3x3dbl_1", in, 64, 1);
  b3 = basic(b, n + ".branch3x3dbl_2", b3, 96, 3, 1, 1);
  b3 = basic(b, n + ".branch3x3dbl_3", b3, 96, 3, 1, 1);
  const int pool = b.avgpool(n + ".avg_pool", in, 3, 1, 1, true);
  const int bp = basic(b, n + ".branch_pool", pool, pool_features, 1);
  return b.concat(n, {b1, b5, b3, bp});
}

int v3_b(Builder& b, const std::string& n, int in) {
  const int b3 = basic(b, n + ".branch3x3", in, 384, 3, 2);
  int bd = basic(b, n + ".branch3x3dbl_1", in, 64, 1);
  bd = basic(b, n + ".branch3x3dbl_2", bd, 96, 3, 1, 1);
  bd = basic(b, n + ".branch3x3dbl_3", bd, 96, 3, 2);
  const int pool = b.maxpool(n + ".max_pool", in, 3, 2, 0);
  return b.concat(n, {b3, bd, pool});
}

int v3_c(Builder& b, const std::string& n, int in, int c7) {
  const int b1 = basic(b, n + ".branch1x1", in, 192, 1);
  int b7 = basic(b, n + ".branch7x7_1", in, c7, 1);
  b7 = basic_1xn(b, n + ".branch7x7_2", b7, c7, 7);
  b7 = basic_nx1(b, n + ".branch7x7_3", b7, 192, 7);
  int bd = basic(b, n + ".branch7x7dbl_1", in, c7, 1);
  bd = basic_nx1(b, n + ".branch7x7dbl_2", bd, c7, 7);
  bd = basic_1xn(b, n + ".branch7x7dbl_3", bd, c7, 7);
  bd = basic_nx1(b, n + ".branch7x7dbl_4", bd, c7, 7);
  bd = basic_1xn(b, n + ".branch7x7dbl_5", bd, 192, 7);
  const int pool = b.avgpool(n + ".avg_pool", in, 3, 1, 1, true);
  const int bp = basic(b, n + ".branch_pool", pool, 192, 1);
  return b.concat(n, {b1, b7, bd, bp});
}

int v3_d(Builder& b, const std::string& n, int in) {
  int b3 = basic(b, n + ".branch3x3_1", in, 192, 1);
  b3 = basic(b, n + ".branch3x3_2", b3, 320, 3, 2);
  int b7 = basic(b, n + ".branch7x7x3_1", in, 192, 1);
  b7 = basic_1xn(b, n + ".branch7x7x3_2", b7, 192, 7);
  b7 = basic_nx1(b, n + ".branch7x7x3_3", b7, 192, 7);
  b7 = basic(b, n + ".branch7x7x3_4", b7, 192, 3, 2);
  const int pool = b.maxpool(n + ".max_pool", in, 3, 2, 0);
  return b.concat(n, {b3, b7, pool});
}

// torchvision joins the 1x3 and 3x1 halves of each branch first, then the branches: one concat
// of the six gives the same channels in the same order.
int v3_e(Builder& b, const std::string& n, int in) {
  const int b1 = basic(b, n + ".branch1x1", in, 320, 1);
  const int b3 = basic(b, n + ".branch3x3_1", in, 384, 1);
  const int b3a = basic_1xn(b, n + ".branch3x3_2a", b3, 384, 3);
  const int b3b = basic_nx1(b, n + ".branch3x3_2b", b3, 384, 3);
  int bd = basic(b, n + ".branch3x3dbl_1", in, 448, 1);
  bd = basic(b, n + ".branch3x3dbl_2", bd, 384, 3, 1, 1);
  const int bda = basic_1xn(b, n + ".branch3x3dbl_3a", bd, 384, 3);
  const int bdb = basic_nx1(b, n + ".branch3x3dbl_3b", bd, 384, 3);
  const int pool = b.avgpool(n + ".avg_pool", in, 3, 1, 1, true);
  const int bp = basic(b, n + ".branch_pool", pool, 192, 1);
  return b.concat(n, {b1, b3a, b3b, bda, bdb, bp});
}

// The auxiliary classifier and its loss, weighted 0.4 as torchvision's reference training
// weighs it (loss = main + 0.4 aux).
void v3_aux(Builder& b, const std::string& n, int in, int classes) {
  b.set_aux(true);
  int x = b.avgpool(n + ".avg_pool", in, 5, 3, 0, true);
  x = basic(b, n + ".conv0", x, 128, 1);
  x = basic(b, n + ".conv1", x, 768, 5);
  x = b.global_avgpool(n + ".adaptive_avg_pool", x);
  b.loss(n + ".loss", b.fc(n + ".fc", x, classes), 0.4f);
  b.set_aux(false);
}
}  // namespace

Model inception3(int image) {
  Builder b("inception3", 1000, {3, image, image});
  int x = basic(b, "Conv2d_1a_3x3", 0, 32, 3, 2);
  x = basic(b, "Conv2d_2a_3x3", x, 32, 3);
  x = basic(b, "Conv2d_2b_3x3", x, 64, 3, 1, 1);
  x = b.maxpool("maxpool1", x, 3, 2, 0);
  x = basic(b, "Conv2d_3b_1x1", x, 80, 1);
  x = basic(b, "Conv2d_4a_3x3", x, 192, 3);
  x = b.maxpool("maxpool2", x, 3, 2, 0);
  x = v3_a(b, "Mixed_5b", x, 32);
  x = v3_a(b, "Mixed_5c", x, 64);
  x = v3_a(b, "Mixed_5d", x, 64);
  x = v3_b(b, "Mixed_6a", x);
  x = v3_c(b, "Mixed_6b", x, 128);
  x = v3_c(b, "Mixed_6c", x, 160);
  x = v3_c(b, "Mixed_6d", x, 160);
  x = v3_c(b, "Mixed_6e", x, 192);
  if (b.dims(x).h < 17 || b.dims(x).w < 17)
    throw Error("inception3's auxiliary head needs images of 299x299 or more (image: " + std::to_string(image) + ")");
  v3_aux(b, "AuxLogits", x, 1000);
  x = v3_d(b, "Mixed_7a", x);
  x = v3_e(b, "Mixed_7b", x);
  x = v3_e(b, "Mixed_7c", x);
  x = b.global_avgpool("avgpool", x);
  return b.finish(b.fc("fc", x, 1000));
}

namespace {
// Cadene's (and timm's) Mixed_3a .. Inception_C, their names as features.<index>.
int v4_mixed_3a(Builder& b, const std::string& n, int in) {
  const int pool = b.maxpool(n + ".maxpool", in, 3, 2, 0);
  const int conv = basic(b, n + ".conv", in, 96, 3, 2);
  return b.concat(n, {pool, conv});
}

int v4_mixed_4a(Builder& b, const std::string& n, int in) {
  int b0 = basic(b, n + ".branch0.0", in, 64, 1);
  b0 = basic(b, n + ".branch0.1", b0, 96, 3);
  int b1 = basic(b, n + ".branch1.0", in, 64, 1);
  b1 = basic_1xn(b, n + ".branch1.1", b1, 64, 7);
  b1 = basic_nx1(b, n + ".branch1.2", b1, 64, 7);
  b1 = basic(b, n + ".branch1.3", b1, 96, 3);
  return b.concat(n, {b0, b1});
}

int v4_mixed_5a(Builder& b, const std::string& n, int in) {
  const int conv = basic(b, n + ".conv", in, 192, 3, 2);
  const int pool = b.maxpool(n + ".maxpool", in, 3, 2, 0);
  return b.concat(n, {conv, pool});
}

int v4_a(Builder& b, const std::string& n, int in) {
  const int b0 = basic(b, n + ".branch0", in, 96, 1);
  int b1 = basic(b, n + ".branch1.0", in, 64, 1);
  b1 = basic(b, n + ".branch1.1", b1, 96, 3, 1, 1);
  int b2 = basic(b, n + ".branch2.0", in, 64, 1);
  b2 = basic(b, n + ".branch2.1", b2, 96, 3, 1, 1);
  b2 = basic(b, n + ".branch2.2", b2, 96, 3, 1, 1);
  const int pool = b.avgpool(n + ".branch3.0", in, 3, 1, 1, false);
  const int b3 = basic(b, n + ".branch3.1", pool, 96, 1);
  return b.concat(n, {b0, b1, b2, b3});
}

int v4_reduction_a(Builder& b, const std::string& n, int in) {
  const int b0 = basic(b, n + ".branch0", in, 384, 3, 2);
  int b1 = basic(b, n + ".branch1.0", in, 192, 1);
  b1 = basic(b, n + ".branch1.1", b1, 224, 3, 1, 1);
  b1 = basic(b, n + ".branch1.2", b1, 256, 3, 2);
  const int pool = b.maxpool(n + ".branch2", in, 3, 2, 0);
  return b.concat(n, {b0, b1, pool});
}

int v4_b(Builder& b, const std::string& n, int in) {
  const int b0 = basic(b, n + ".branch0", in, 384, 1);
  int b1 = basic(b, n + ".branch1.0", in, 192, 1);
  b1 = basic_1xn(b, n + ".branch1.1", b1, 224, 7);
  b1 = basic_nx1(b, n + ".branch1.2", b1, 256, 7);
  int b2 = basic(b, n + ".branch2.0", in, 192, 1);
  b2 = basic_nx1(b, n + ".branch2.1", b2, 192, 7);
  b2 = basic_1xn(b, n + ".branch2.2", b2, 224, 7);
  b2 = basic_nx1(b, n + ".branch2.3", b2, 224, 7);
  b2 = basic_1xn(b, n + ".branch2.4", b2, 256, 7);
  const int pool = b.avgpool(n + ".branch3.0", in, 3, 1, 1, false);
  const int b3 = basic(b, n + ".branch3.1", pool, 128, 1);
  return b.concat(n, {b0, b1, b2, b3});
}

int v4_reduction_b(Builder& b, const std::string& n, int in) {
  int b0 = basic(b, n + ".branch0.0", in, 192, 1);
  b0 = basic(b, n + ".branch0.1", b0, 192, 3, 2);
  int b1 = basic(b, n + ".branch1.0", in, 256, 1);
  b1 = basic_1xn(b, n + ".branch1.1", b1, 256, 7);
  b1 = basic_nx1(b, n + ".branch1.2", b1, 320, 7);
  b1 = basic(b, n + ".branch1.3", b1, 320, 3, 2);
  const int pool = b.maxpool(n + ".branch2", in, 3, 2, 0);
  return b.concat(n, {b0, b1, pool});
}

// As in v3's E block, the halves of branches 1 and 2 go straight into the block's one concat.
int v4_c(Builder& b, const std::string& n, int in) {
  const int b0 = basic(b, n + ".branch0", in, 256, 1);
  const int b1 = basic(b, n + ".branch1_0", in, 384, 1);
  const int b1a = basic_1xn(b, n + ".branch1_1a", b1, 256, 3);
  const int b1b = basic_nx1(b, n + ".branch1_1b", b1, 256, 3);
  int b2 = basic(b, n + ".branch2_0", in, 384, 1);
  b2 = basic_nx1(b, n + ".branch2_1", b2, 448, 3);
  b2 = basic_1xn(b, n + ".branch2_2", b2, 512, 3);
  const int b2a = basic_1xn(b, n + ".branch2_3a", b2, 256, 3);
  const int b2b = basic_nx1(b, n + ".branch2_3b", b2, 256, 3);
  const int pool = b.avgpool(n + ".branch3.0", in, 3, 1, 1, false);
  const int b3 = basic(b, n + ".branch3.1", pool, 256, 1);
  return b.concat(n, {b0, b1a, b1b, b2a, b2b, b3});
}
}  // namespace

Model inception4(int image) {
  Builder b("inception4", 1000, {3, image, image});
  int x = basic(b, "features.0", 0, 32, 3, 2);
  x = basic(b, "features.1", x, 32, 3);
  x = basic(b, "features.2", x, 64, 3, 1, 1);
  x = v4_mixed_3a(b, "features.3", x);
  x = v4_mixed_4a(b, "features.4", x);
  x = v4_mixed_5a(b, "features.5", x);
  int i = 6;
  for (int k = 0; k < 4; ++k, ++i) x = v4_a(b, "features." + std::to_string(i), x);
  x = v4_reduction_a(b, "features." + std::to_string(i++), x);
  for (int k = 0; k < 7; ++k, ++i) x = v4_b(b, "features." + std::to_string(i), x);
  x = v4_reduction_b(b, "features." + std::to_string(i++), x);
  for (int k = 0; k < 3; ++k, ++i) x = v4_c(b, "features." + std::to_string(i), x);
  x = b.global_avgpool("global_pool", x);
  return b.finish(b.fc("last_linear", x, 1000));
}

Model tiny_inception() {
  Builder b("tiny-inception", 10, {3, 16, 16});
  const int stem = basic(b, "stem", 0, 8, 3, 1, 1);
  // Four branches read the stem: its gradient is the sum of theirs.
  const int b0 = basic(b, "block.branch0", stem, 8, 1);
  int b1 = basic(b, "block.branch1.0", stem, 8, 1);
  b1 = basic_1xn(b, "block.branch1.1", b1, 8, 3);
  b1 = basic_nx1(b, "block.branch1.2", b1, 8, 3);
  const int p2 = b.avgpool("block.branch2.0", stem, 3, 1, 1, true);
  const int b2 = basic(b, "block.branch2.1", p2, 8, 1);
  const int b3 = b.avgpool("block.branch3", stem, 3, 1, 1, false);
  const int block = b.concat("block", {b0, b1, b2, b3});
  // The auxiliary head reads the block (and so adds to its gradient) beside the reduction.
  b.set_aux(true);
  int aux = b.avgpool("aux.avg_pool", block, 5, 3, 0, true);
  aux = basic(b, "aux.conv", aux, 8, 1);
  b.loss("aux.loss", b.fc("aux.fc", b.global_avgpool("aux.gap", aux), 10), 0.4f);
  b.set_aux(false);
  const int r0 = basic(b, "reduction.branch0", block, 8, 3, 2);
  const int r1 = b.maxpool("reduction.branch1", block, 3, 2, 0);
  const int red = b.concat("reduction", {r0, r1});
  return b.finish(b.fc("fc", b.global_avgpool("avgpool", red), 10));
}

}  // namespace scalebench::train
