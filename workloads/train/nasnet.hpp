#pragma once
#include "workloads/train/model.hpp"

// NASNet-A (build_model's nasnet, tiny-nasnet): cells of separable convolutions (depthwise, then
// pointwise), pools and identities, added in pairs and joined along channels. Pure: no CUDA.
namespace scalebench::train {

// NASNet-A Mobile (Zoph et al. 2018) as tf_cnn_benchmarks' `nasnet` builds it (slim's cells,
// its mobile configuration) and Keras' NASNetMobile: 224x224 images, a 3x3 stem of 32 filters,
// two stem reduction cells, then 3 stacks of 4 normal cells (44, 88, 176 filters: penultimate
// 1056) with a reduction cell between stacks, ReLU, global average pooling, 1000 classes:
// 5,289,978 parameters (Keras' 5,326,716 counts the batch norms' running statistics too). No
// auxiliary head (tf_cnn_benchmarks builds the network without classes, so slim adds none, and
// puts its own classifier on the pooled features: 1001 classes there, 1,057 parameters more), no
// drop-path. Batch norm eps 0.001.
//
// Padding: every convolution and pool is padded by k / 2 on each side. That gives the output
// size of TensorFlow's 'SAME' at every stride-2 kernel (3, 5, 7) on every size the net sees, but
// not its alignment on even sizes (SAME pads one more at the bottom and right). Max pools pad
// with -inf and average pools leave the padding out of the divisor, as 'SAME' pooling does. The
// PyTorch peer (examples/pytorch/nasnet_mobile.py) pads the same, so the two are one function.
Model nasnet_mobile(int image);
// NASNet's ops on 16x16 images, 10 classes, small enough for finite differences: a strided stem
// to 7x7, a reduction cell (to 4x4) and a normal cell whose previous input is the stem's
// output, so that it goes through the factorized reduction with its shifted path on an odd size.
Model tiny_nasnet();

}  // namespace scalebench::train
