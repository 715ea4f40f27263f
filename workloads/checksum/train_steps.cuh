#pragma once
#include <cuda_runtime.h>

#include <cstddef>

// The element-wise and per-sample kernels of the checksum workload's training run. Each is
// deterministic: no atomics, and every reduction runs in a fixed order for a fixed shape, so the
// same inputs give the same bits on every GPU of one model.
namespace scalebench::checksum {

// w = bf16(pattern x scale) and master = float(w), for weights drawn from bf16_pattern in [-1, 1).
void scale_weights(void* w, float* master, std::size_t n, float scale, cudaStream_t stream);

// labels[j] = the first row of the largest value in column j of the rows x cols bf16 matrix z.
void argmax_labels(const void* z, int rows, int cols, int* labels, cudaStream_t stream);

void relu(void* h, std::size_t n, cudaStream_t stream);

// For each column j of the classes x batch logits z: dz = (softmax(z_j) - onehot(labels[j])) / batch,
// and loss[j] = the cross-entropy of column j.
void softmax_cross_entropy_grad(const void* z, const int* labels, int classes, int batch, void* dz, float* loss,
                                cudaStream_t stream);

// dh = 0 where h (after the ReLU) is 0.
void relu_backward(void* dh, const void* h, std::size_t n, cudaStream_t stream);

// master -= lr x dw; w = bf16(master).
void sgd_step(float* master, void* w, const void* dw, std::size_t n, float lr, cudaStream_t stream);

}  // namespace scalebench::checksum
