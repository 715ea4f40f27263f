#pragma once
#include <vector>

// Where a mixed-precision net changes precision: its first n convolutions in 16 bits, the rest in
// 8, as TensorRT's builder keeps a layer in fp16 where its int8 kernel is slower. cuDNN's 8-bit
// engines take 1.2-3.5x fp16's time at ResNet-50's 56x56 and 28x28 shapes and half of it at 14x14
// and 7x7, so the slow layers are a prefix of the net. Pure: timings in, the split out.
namespace scalebench::train {

// Each convolution's time, in the net's order, in 16 bits and in 8 (negative: it has no such graph,
// so a split that puts it there is not taken).
struct ConvTimes {
  double sixteen = -1, eight = -1;
};

// The seconds of the convolutions with the first n in 16 bits; negative when one of them has no
// graph in the precision the split gives it.
double split_seconds(const std::vector<ConvTimes>& convs, int n);

// The n in [at_least, convs.size()] whose sum is least; the smaller n where sums are equal (the
// 8-bit tensors are half the memory). Throws Error when no split has every time it needs.
int cheapest_split(const std::vector<ConvTimes>& convs, int at_least);

}  // namespace scalebench::train
