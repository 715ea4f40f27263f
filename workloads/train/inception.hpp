#pragma once
#include "workloads/train/model.hpp"

// The Inception networks (build_model's inception3, inception4, tiny-inception): branches of
// convolutions, some with 1xn and nx1 kernels, joined along channels. Pure: no CUDA.
namespace scalebench::train {

// torchvision's inception_v3 (aux_logits=True, transform_input=False): 299x299 images, batch
// norm eps 0.001, convolutions without bias, the auxiliary head on Mixed_6e (its loss weighted
// 0.4), dropout left out.
Model inception3(int image);
// Inception-v4 (Szegedy et al. 2016) as timm and Cadene's pretrainedmodels define it: 299x299,
// 1536 features, average pools that leave the padding out of their divisor.
Model inception4(int image);
// Every op of the two on 16x16 images, 10 classes, small enough for finite differences: a block
// whose input four branches read (1x3 and 3x1 convolutions, a 3x3 average pool with and without
// the padding counted), a reduction (strided conv beside max pooling), an auxiliary head.
Model tiny_inception();

}  // namespace scalebench::train
