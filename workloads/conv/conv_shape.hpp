#pragma once
#include <string>
#include <string_view>
#include <vector>

// One 2-D convolution problem and the shape sets the conv workload runs. Pure: no CUDA.
namespace scalebench::conv {

// x is N x C x H x W, the filter K x C/groups x R x S, y is N x K x P x Q (cross-correlation, as
// every framework computes it).
struct ConvShape {
  std::string name;  // where it comes from: "resnet50/layer2.0.conv2", "deepbench-train/12", the text given
  int n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, groups = 1;
  int count = 1;  // how often the layer occurs in its network (ResNet-50); 1 elsewhere

  int p() const;  // output height
  int q() const;  // output width
  // Empty when the shape is a valid convolution, else what is wrong with it.
  std::string invalid() const;
  // Same problem (name and count aside).
  bool same_problem(const ConvShape& o) const;
};

// FLOPs of one pass. Forward, backward-data and backward-filter each do the same multiply-adds:
// 2 * N * K * C * R * S * P * Q / groups (a multiply-add counts 2).
double conv_flops(const ConvShape& s);

// Every distinct convolution of torchvision's ResNet-50 (v1.5: the stride of a downsampling
// bottleneck sits on its 3x3 convolution) on 224 x 224 images at batch `batch`, with how often
// each occurs (53 convolutions in all).
std::vector<ConvShape> resnet50_shapes(int batch);

// DeepBench's convolution sets (baidu-research/DeepBench, code/kernels/conv_problems.h:
// training_set and inference_server_set), each with its own batch size, repeats removed.
std::vector<ConvShape> deepbench_training_shapes();
std::vector<ConvShape> deepbench_inference_shapes();

// The `shapes` parameter: resnet50, deepbench-train, deepbench-inference, or a comma-separated
// list of KxCxRxS@HxW[:sSTRIDE][:pPAD][:dDILATION][:gGROUPS] at batch `batch` (stride, padding and
// dilation apply to both dimensions; defaults 1, 0, 1, 1). Throws Error naming the bad item.
std::vector<ConvShape> shapes_from_param(std::string_view text, int batch);

}  // namespace scalebench::conv
