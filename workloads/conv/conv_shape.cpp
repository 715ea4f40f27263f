#include "workloads/conv/conv_shape.hpp"

#include <charconv>

#include "common/error.hpp"

namespace scalebench::conv {

namespace {
// n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w.
struct Row {
  int n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w;
};

// DeepBench's training_set, in its order (94 rows, 4 of them repeats). The rows are the data of
// baidu-research/DeepBench code/kernels/conv_problems.h (commit da81ba78), which lists them as
// W, H, C, N, K, S, R, pad_w, pad_h, stride_w, stride_h.
constexpr Row kDeepBenchTraining[] = {
    {4, 1, 161, 700, 32, 5, 20, 0, 0, 2, 2},    {8, 1, 161, 700, 32, 5, 20, 0, 0, 2, 2},
    {16, 1, 161, 700, 32, 5, 20, 0, 0, 2, 2},   {32, 1, 161, 700, 32, 5, 20, 0, 0, 2, 2},
    {4, 32, 79, 341, 32, 5, 10, 0, 0, 2, 2},    {8, 32, 79, 341, 32, 5, 10, 0, 0, 2, 2},
    {16, 32, 79, 341, 32, 5, 10, 0, 0, 2, 2},   {32, 32, 79, 341, 32, 5, 10, 0, 0, 2, 2},
    {16, 1, 48, 480, 16, 3, 3, 1, 1, 1, 1},     {16, 16, 24, 240, 32, 3, 3, 1, 1, 1, 1},
    {16, 32, 12, 120, 64, 3, 3, 1, 1, 1, 1},    {16, 64, 6, 60, 128, 3, 3, 1, 1, 1, 1},
    {8, 3, 108, 108, 64, 3, 3, 1, 1, 2, 2},     {8, 64, 54, 54, 64, 3, 3, 1, 1, 1, 1},
    {8, 128, 27, 27, 128, 3, 3, 1, 1, 1, 1},    {8, 128, 14, 14, 256, 3, 3, 1, 1, 1, 1},
    {8, 256, 7, 7, 512, 3, 3, 1, 1, 1, 1},      {8, 3, 224, 224, 64, 3, 3, 1, 1, 1, 1},
    {8, 64, 112, 112, 128, 3, 3, 1, 1, 1, 1},   {8, 128, 56, 56, 256, 3, 3, 1, 1, 1, 1},
    {8, 256, 28, 28, 512, 3, 3, 1, 1, 1, 1},    {8, 512, 14, 14, 512, 3, 3, 1, 1, 1, 1},
    {8, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},      {16, 3, 224, 224, 64, 3, 3, 1, 1, 1, 1},
    {16, 64, 112, 112, 128, 3, 3, 1, 1, 1, 1},  {16, 128, 56, 56, 256, 3, 3, 1, 1, 1, 1},
    {16, 256, 28, 28, 512, 3, 3, 1, 1, 1, 1},   {16, 512, 14, 14, 512, 3, 3, 1, 1, 1, 1},
    {16, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},     {16, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2},
    {16, 192, 28, 28, 32, 5, 5, 2, 2, 1, 1},    {16, 192, 28, 28, 64, 1, 1, 0, 0, 1, 1},
    {16, 512, 14, 14, 48, 5, 5, 2, 2, 1, 1},    {16, 512, 14, 14, 192, 1, 1, 0, 0, 1, 1},
    {16, 832, 7, 7, 256, 1, 1, 0, 0, 1, 1},     {16, 832, 7, 7, 128, 5, 5, 2, 2, 1, 1},
    {8, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1},      {8, 64, 56, 56, 256, 1, 1, 0, 0, 2, 2},
    {8, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1},    {8, 128, 28, 28, 512, 1, 1, 0, 0, 2, 2},
    {8, 256, 14, 14, 256, 1, 1, 0, 0, 1, 1},    {8, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1},
    {8, 256, 14, 14, 1024, 1, 1, 0, 0, 2, 2},   {8, 512, 7, 7, 512, 1, 1, 0, 0, 1, 1},
    {8, 2048, 7, 7, 512, 1, 1, 3, 3, 2, 2},     {16, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1},
    {16, 64, 56, 56, 256, 1, 1, 0, 0, 2, 2},    {16, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1},
    {16, 128, 28, 28, 512, 1, 1, 0, 0, 2, 2},   {16, 256, 14, 14, 256, 1, 1, 0, 0, 1, 1},
    {16, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1},   {16, 256, 14, 14, 1024, 1, 1, 0, 0, 2, 2},
    {16, 512, 7, 7, 512, 1, 1, 0, 0, 1, 1},     {16, 2048, 7, 7, 512, 1, 1, 3, 3, 2, 2},
    {16, 1, 161, 700, 64, 5, 5, 1, 1, 2, 2},    {16, 64, 80, 350, 64, 3, 3, 1, 1, 1, 1},
    {16, 64, 80, 350, 128, 5, 5, 1, 1, 2, 2},   {16, 128, 40, 175, 128, 3, 3, 1, 1, 1, 1},
    {16, 128, 40, 175, 256, 5, 5, 1, 1, 2, 2},  {16, 256, 20, 84, 256, 3, 3, 1, 1, 1, 1},
    {16, 256, 20, 84, 512, 5, 5, 1, 1, 2, 2},   {16, 512, 10, 42, 512, 3, 3, 1, 1, 1, 1},
    {8, 64, 112, 112, 64, 1, 1, 0, 0, 1, 1},    {8, 64, 56, 56, 256, 1, 1, 0, 0, 1, 1},
    {8, 256, 56, 56, 64, 1, 1, 0, 0, 1, 1},     {8, 256, 56, 56, 128, 1, 1, 0, 0, 2, 2},
    {8, 128, 28, 28, 512, 1, 1, 0, 0, 1, 1},    {8, 512, 28, 28, 128, 1, 1, 0, 0, 1, 1},
    {8, 512, 28, 28, 256, 1, 1, 0, 0, 2, 2},    {8, 256, 14, 14, 1024, 1, 1, 0, 0, 1, 1},
    {8, 512, 28, 28, 1024, 1, 1, 0, 0, 2, 2},   {8, 1024, 14, 14, 256, 1, 1, 0, 0, 1, 1},
    {8, 256, 14, 14, 1024, 1, 1, 0, 0, 1, 1},   {8, 1024, 14, 14, 512, 1, 1, 0, 0, 2, 2},
    {8, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},      {8, 512, 7, 7, 2048, 1, 1, 0, 0, 1, 1},
    {8, 1024, 14, 14, 2048, 1, 1, 0, 0, 2, 2},  {8, 2048, 7, 7, 512, 1, 1, 0, 0, 1, 1},
    {16, 64, 112, 112, 64, 1, 1, 0, 0, 1, 1},   {16, 64, 56, 56, 256, 1, 1, 0, 0, 1, 1},
    {16, 256, 56, 56, 64, 1, 1, 0, 0, 1, 1},    {16, 256, 56, 56, 128, 1, 1, 0, 0, 2, 2},
    {16, 128, 28, 28, 512, 1, 1, 0, 0, 1, 1},   {16, 512, 28, 28, 128, 1, 1, 0, 0, 1, 1},
    {16, 512, 28, 28, 256, 1, 1, 0, 0, 2, 2},   {16, 256, 14, 14, 1024, 1, 1, 0, 0, 1, 1},
    {16, 512, 28, 28, 1024, 1, 1, 0, 0, 2, 2},  {16, 1024, 14, 14, 256, 1, 1, 0, 0, 1, 1},
    {16, 256, 14, 14, 1024, 1, 1, 0, 0, 1, 1},  {16, 1024, 14, 14, 512, 1, 1, 0, 0, 2, 2},
    {16, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},     {16, 512, 7, 7, 2048, 1, 1, 0, 0, 1, 1},
    {16, 1024, 14, 14, 2048, 1, 1, 0, 0, 2, 2}, {16, 2048, 7, 7, 512, 1, 1, 0, 0, 1, 1},
};

// DeepBench's inference_server_set (107 rows, 4 of them repeats), same source and order.
constexpr Row kDeepBenchInference[] = {
    {1, 1, 161, 700, 32, 5, 20, 0, 0, 2, 2},  {2, 1, 161, 700, 32, 5, 20, 0, 0, 2, 2},
    {4, 1, 161, 700, 32, 5, 20, 0, 0, 2, 2},  {1, 32, 79, 341, 32, 5, 10, 0, 0, 2, 2},
    {2, 32, 79, 341, 32, 5, 10, 0, 0, 2, 2},  {4, 32, 79, 341, 32, 5, 10, 0, 0, 2, 2},
    {1, 1, 48, 480, 16, 3, 3, 1, 1, 1, 1},    {1, 16, 24, 240, 32, 3, 3, 1, 1, 1, 1},
    {1, 32, 12, 120, 64, 3, 3, 1, 1, 1, 1},   {1, 64, 6, 60, 128, 3, 3, 1, 1, 1, 1},
    {1, 3, 108, 108, 64, 3, 3, 1, 1, 2, 2},   {1, 64, 54, 54, 64, 3, 3, 1, 1, 1, 1},
    {1, 128, 27, 27, 128, 3, 3, 1, 1, 1, 1},  {1, 128, 14, 14, 256, 3, 3, 1, 1, 1, 1},
    {1, 256, 7, 7, 512, 3, 3, 1, 1, 1, 1},    {1, 3, 224, 224, 64, 3, 3, 1, 1, 1, 1},
    {1, 64, 112, 112, 128, 3, 3, 1, 1, 1, 1}, {1, 128, 56, 56, 256, 3, 3, 1, 1, 1, 1},
    {1, 256, 28, 28, 512, 3, 3, 1, 1, 1, 1},  {1, 512, 14, 14, 512, 3, 3, 1, 1, 1, 1},
    {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},    {2, 3, 224, 224, 64, 3, 3, 1, 1, 1, 1},
    {2, 64, 112, 112, 128, 3, 3, 1, 1, 1, 1}, {2, 128, 56, 56, 256, 3, 3, 1, 1, 1, 1},
    {2, 256, 28, 28, 512, 3, 3, 1, 1, 1, 1},  {2, 512, 14, 14, 512, 3, 3, 1, 1, 1, 1},
    {2, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},    {1, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2},
    {1, 192, 28, 28, 32, 5, 5, 2, 2, 1, 1},   {1, 192, 28, 28, 64, 1, 1, 0, 0, 1, 1},
    {1, 512, 14, 14, 48, 5, 5, 2, 2, 1, 1},   {1, 512, 14, 14, 192, 1, 1, 0, 0, 1, 1},
    {1, 832, 7, 7, 256, 1, 1, 0, 0, 1, 1},    {1, 832, 7, 7, 128, 5, 5, 2, 2, 1, 1},
    {2, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2},   {2, 192, 28, 28, 32, 5, 5, 2, 2, 1, 1},
    {2, 192, 28, 28, 64, 1, 1, 0, 0, 1, 1},   {2, 512, 14, 14, 48, 5, 5, 2, 2, 1, 1},
    {2, 512, 14, 14, 192, 1, 1, 0, 0, 1, 1},  {2, 832, 7, 7, 256, 1, 1, 0, 0, 1, 1},
    {2, 832, 7, 7, 128, 5, 5, 2, 2, 1, 1},    {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1},
    {1, 64, 56, 56, 256, 1, 1, 0, 0, 2, 2},   {1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1},
    {1, 128, 28, 28, 512, 1, 1, 0, 0, 2, 2},  {1, 256, 14, 14, 256, 1, 1, 0, 0, 1, 1},
    {1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1},  {1, 256, 14, 14, 1024, 1, 1, 0, 0, 2, 2},
    {1, 512, 7, 7, 512, 1, 1, 0, 0, 1, 1},    {1, 2048, 7, 7, 512, 1, 1, 3, 3, 2, 2},
    {2, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1},    {2, 64, 56, 56, 256, 1, 1, 0, 0, 2, 2},
    {2, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1},  {2, 128, 28, 28, 512, 1, 1, 0, 0, 2, 2},
    {2, 256, 14, 14, 256, 1, 1, 0, 0, 1, 1},  {2, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1},
    {2, 256, 14, 14, 1024, 1, 1, 0, 0, 2, 2}, {2, 512, 7, 7, 512, 1, 1, 0, 0, 1, 1},
    {2, 2048, 7, 7, 512, 1, 1, 3, 3, 2, 2},   {1, 1, 161, 700, 64, 5, 5, 1, 1, 2, 2},
    {1, 64, 80, 350, 64, 3, 3, 1, 1, 1, 1},   {1, 64, 80, 350, 128, 5, 5, 1, 1, 2, 2},
    {1, 128, 40, 175, 128, 3, 3, 1, 1, 1, 1}, {1, 128, 40, 175, 256, 5, 5, 1, 1, 2, 2},
    {1, 256, 20, 84, 256, 3, 3, 1, 1, 1, 1},  {1, 256, 20, 84, 512, 5, 5, 1, 1, 2, 2},
    {1, 512, 10, 42, 512, 3, 3, 1, 1, 1, 1},  {2, 1, 161, 700, 64, 5, 5, 1, 1, 2, 2},
    {2, 64, 80, 350, 64, 3, 3, 1, 1, 1, 1},   {2, 64, 80, 350, 128, 5, 5, 1, 1, 2, 2},
    {2, 128, 40, 175, 128, 3, 3, 1, 1, 1, 1}, {2, 128, 40, 175, 256, 5, 5, 1, 1, 2, 2},
    {2, 256, 20, 84, 256, 3, 3, 1, 1, 1, 1},  {2, 256, 20, 84, 512, 5, 5, 1, 1, 2, 2},
    {2, 512, 10, 42, 512, 3, 3, 1, 1, 1, 1},  {1, 64, 112, 112, 64, 1, 1, 0, 0, 1, 1},
    {1, 64, 56, 56, 256, 1, 1, 0, 0, 1, 1},   {1, 256, 56, 56, 64, 1, 1, 0, 0, 1, 1},
    {1, 256, 56, 56, 128, 1, 1, 0, 0, 2, 2},  {1, 128, 28, 28, 512, 1, 1, 0, 0, 1, 1},
    {1, 512, 28, 28, 128, 1, 1, 0, 0, 1, 1},  {1, 512, 28, 28, 256, 1, 1, 0, 0, 2, 2},
    {1, 256, 14, 14, 1024, 1, 1, 0, 0, 1, 1}, {1, 512, 28, 28, 1024, 1, 1, 0, 0, 2, 2},
    {1, 1024, 14, 14, 256, 1, 1, 0, 0, 1, 1}, {1, 256, 14, 14, 1024, 1, 1, 0, 0, 1, 1},
    {1, 1024, 14, 14, 512, 1, 1, 0, 0, 2, 2}, {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},
    {1, 512, 7, 7, 2048, 1, 1, 0, 0, 1, 1},   {1, 1024, 14, 14, 2048, 1, 1, 0, 0, 2, 2},
    {1, 2048, 7, 7, 512, 1, 1, 0, 0, 1, 1},   {2, 64, 112, 112, 64, 1, 1, 0, 0, 1, 1},
    {2, 64, 56, 56, 256, 1, 1, 0, 0, 1, 1},   {2, 256, 56, 56, 64, 1, 1, 0, 0, 1, 1},
    {2, 256, 56, 56, 128, 1, 1, 0, 0, 2, 2},  {2, 128, 28, 28, 512, 1, 1, 0, 0, 1, 1},
    {2, 512, 28, 28, 128, 1, 1, 0, 0, 1, 1},  {2, 512, 28, 28, 256, 1, 1, 0, 0, 2, 2},
    {2, 256, 14, 14, 1024, 1, 1, 0, 0, 1, 1}, {2, 512, 28, 28, 1024, 1, 1, 0, 0, 2, 2},
    {2, 1024, 14, 14, 256, 1, 1, 0, 0, 1, 1}, {2, 256, 14, 14, 1024, 1, 1, 0, 0, 1, 1},
    {2, 1024, 14, 14, 512, 1, 1, 0, 0, 2, 2}, {2, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},
    {2, 512, 7, 7, 2048, 1, 1, 0, 0, 1, 1},   {2, 1024, 14, 14, 2048, 1, 1, 0, 0, 2, 2},
    {2, 2048, 7, 7, 512, 1, 1, 0, 0, 1, 1},
};

std::vector<ConvShape> from_rows(const char* set, const Row* rows, std::size_t count) {
  std::vector<ConvShape> out;
  for (std::size_t i = 0; i < count; ++i) {
    const Row& x = rows[i];
    ConvShape s;
    s.name = std::string(set) + "/" + std::to_string(i + 1);
    s.n = x.n, s.c = x.c, s.h = x.h, s.w = x.w, s.k = x.k, s.r = x.r, s.s = x.s;
    s.pad_h = x.pad_h, s.pad_w = x.pad_w, s.stride_h = x.stride_h, s.stride_w = x.stride_w;
    bool repeat = false;
    for (const ConvShape& o : out) repeat = repeat || o.same_problem(s);
    if (!repeat) out.push_back(std::move(s));
  }
  return out;
}

int out_size(int in, int pad, int kernel, int stride, int dil) {
  const int span = dil * (kernel - 1) + 1;
  if (stride < 1 || in + 2 * pad < span) return 0;
  return (in + 2 * pad - span) / stride + 1;
}
}  // namespace

int ConvShape::p() const { return out_size(h, pad_h, r, stride_h, dil_h); }
int ConvShape::q() const { return out_size(w, pad_w, s, stride_w, dil_w); }

std::string ConvShape::invalid() const {
  for (int v : {n, c, h, w, k, r, s, stride_h, stride_w, dil_h, dil_w, groups})
    if (v < 1) return name + ": sizes, strides, dilations and groups must be at least 1";
  if (pad_h < 0 || pad_w < 0) return name + ": padding must not be negative";
  if (c % groups != 0 || k % groups != 0)
    return name + ": groups (" + std::to_string(groups) + ") must divide C (" + std::to_string(c) + ") and K (" +
           std::to_string(k) + ")";
  if (p() < 1 || q() < 1) return name + ": the filter does not fit the padded input (no output)";
  return "";
}

bool ConvShape::same_problem(const ConvShape& o) const {
  return n == o.n && c == o.c && h == o.h && w == o.w && k == o.k && r == o.r && s == o.s && pad_h == o.pad_h &&
         pad_w == o.pad_w && stride_h == o.stride_h && stride_w == o.stride_w && dil_h == o.dil_h && dil_w == o.dil_w &&
         groups == o.groups;
}

double conv_flops(const ConvShape& s) {
  return 2.0 * s.n * s.k * static_cast<double>(s.c) * s.r * s.s * s.p() * s.q() / s.groups;
}

std::vector<ConvShape> resnet50_shapes(int batch) {
  // Each: name, C, H (= W), K, kernel, stride, pad, count. Bottleneck blocks: 1x1 reduce, 3x3, 1x1
  // expand; the first block of each stage also has a 1x1 downsample, whose stride is the stage's.
  struct L {
    const char* name;
    int c, hw, k, rs, stride, pad, count;
  };
  static constexpr L kLayers[] = {
      {"conv1", 3, 224, 64, 7, 2, 3, 1},
      {"layer1.0.conv1", 64, 56, 64, 1, 1, 0, 1},
      {"layer1.x.conv2", 64, 56, 64, 3, 1, 1, 3},
      {"layer1.x.conv3+downsample", 64, 56, 256, 1, 1, 0, 4},  // 3 expands and the downsample
      {"layer1.x.conv1", 256, 56, 64, 1, 1, 0, 2},
      {"layer2.0.conv1", 256, 56, 128, 1, 1, 0, 1},
      {"layer2.0.conv2", 128, 56, 128, 3, 2, 1, 1},
      {"layer2.x.conv3", 128, 28, 512, 1, 1, 0, 4},
      {"layer2.0.downsample", 256, 56, 512, 1, 2, 0, 1},
      {"layer2.x.conv1", 512, 28, 128, 1, 1, 0, 3},
      {"layer2.x.conv2", 128, 28, 128, 3, 1, 1, 3},
      {"layer3.0.conv1", 512, 28, 256, 1, 1, 0, 1},
      {"layer3.0.conv2", 256, 28, 256, 3, 2, 1, 1},
      {"layer3.x.conv3", 256, 14, 1024, 1, 1, 0, 6},
      {"layer3.0.downsample", 512, 28, 1024, 1, 2, 0, 1},
      {"layer3.x.conv1", 1024, 14, 256, 1, 1, 0, 5},
      {"layer3.x.conv2", 256, 14, 256, 3, 1, 1, 5},
      {"layer4.0.conv1", 1024, 14, 512, 1, 1, 0, 1},
      {"layer4.0.conv2", 512, 14, 512, 3, 2, 1, 1},
      {"layer4.x.conv3", 512, 7, 2048, 1, 1, 0, 3},
      {"layer4.0.downsample", 1024, 14, 2048, 1, 2, 0, 1},
      {"layer4.x.conv1", 2048, 7, 512, 1, 1, 0, 2},
      {"layer4.x.conv2", 512, 7, 512, 3, 1, 1, 2},
  };
  std::vector<ConvShape> out;
  for (const L& l : kLayers) {
    ConvShape s;
    s.name = std::string("resnet50/") + l.name;
    s.n = batch, s.c = l.c, s.h = s.w = l.hw, s.k = l.k, s.r = s.s = l.rs;
    s.stride_h = s.stride_w = l.stride, s.pad_h = s.pad_w = l.pad, s.count = l.count;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<ConvShape> deepbench_training_shapes() {
  return from_rows("deepbench-train", kDeepBenchTraining, std::size(kDeepBenchTraining));
}

std::vector<ConvShape> deepbench_inference_shapes() {
  return from_rows("deepbench-inference", kDeepBenchInference, std::size(kDeepBenchInference));
}

namespace {
// Reads a positive integer at `pos` of `t`, advancing pos.
bool read_int(std::string_view t, std::size_t& pos, int& v) {
  auto [ptr, ec] = std::from_chars(t.data() + pos, t.data() + t.size(), v);
  if (ec != std::errc() || ptr == t.data() + pos) return false;
  pos = static_cast<std::size_t>(ptr - t.data());
  return true;
}

ConvShape parse_one(std::string_view item, int batch) {
  const std::string bad = "shapes: '" + std::string(item) +
                          "' is not KxCxRxS@HxW[:sSTRIDE][:pPAD][:dDILATION][:gGROUPS] (e.g. 256x64x1x1@56x56 or "
                          "64x64x3x3@56x56:p1)";
  ConvShape s;
  s.name = std::string(item);
  s.n = batch;
  std::size_t pos = 0;
  auto expect = [&](char c) {
    if (pos >= item.size() || item[pos] != c) throw Error(bad);
    ++pos;
  };
  auto number = [&](int& v) {
    if (!read_int(item, pos, v)) throw Error(bad);
  };
  number(s.k), expect('x'), number(s.c), expect('x'), number(s.r), expect('x'), number(s.s);
  expect('@'), number(s.h), expect('x'), number(s.w);
  while (pos < item.size()) {
    expect(':');
    if (pos >= item.size()) throw Error(bad);
    const char key = item[pos++];
    int v = 0;
    number(v);
    if (key == 's')
      s.stride_h = s.stride_w = v;
    else if (key == 'p')
      s.pad_h = s.pad_w = v;
    else if (key == 'd')
      s.dil_h = s.dil_w = v;
    else if (key == 'g')
      s.groups = v;
    else
      throw Error(bad);
  }
  // The filter's C is per group in the text (as a framework's weight shape writes it).
  s.c *= s.groups;
  return s;
}
}  // namespace

std::vector<ConvShape> shapes_from_param(std::string_view text, int batch) {
  std::vector<ConvShape> out;
  if (text == "resnet50")
    out = resnet50_shapes(batch);
  else if (text == "deepbench-train")
    out = deepbench_training_shapes();
  else if (text == "deepbench-inference")
    out = deepbench_inference_shapes();
  else {
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      const std::string_view item = text.substr(start, comma - start);
      if (!item.empty()) out.push_back(parse_one(item, batch));
      start = comma + 1;
    }
    if (out.empty())
      throw Error("shapes: empty; use resnet50, deepbench-train, deepbench-inference or a list of KxCxRxS@HxW");
  }
  for (const ConvShape& s : out)
    if (std::string why = s.invalid(); !why.empty()) throw Error("shapes: " + why);
  return out;
}

}  // namespace scalebench::conv
