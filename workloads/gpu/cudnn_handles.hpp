#pragma once
#include <cudnn.h>

#include <string>

#include "common/error.hpp"
#include "workloads/gpu/cudnn_check.hpp"
#include "workloads/gpu/unique_handle.hpp"

namespace scalebench::gpu {

// Move-only owner of one cuDNN object made by `create` and freed by `destroy` (the handle and
// each descriptor kind share this shape). The destructor never throws.
template <typename T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class CudnnObject {
 public:
  CudnnObject() { CUDNN_CHECK(Create(h_.out())); }
  T get() const { return h_.get(); }

 private:
  UniqueHandle<T, FreeWith<Destroy>> h_;
};

using CudnnHandle = CudnnObject<cudnnHandle_t, cudnnCreate, cudnnDestroy>;
using TensorDescriptor =
    CudnnObject<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    CudnnObject<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnObject<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using DropoutDescriptor =
    CudnnObject<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor, cudnnDestroyDropoutDescriptor>;
using RnnDescriptor = CudnnObject<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using RnnDataDescriptor =
    CudnnObject<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor, cudnnDestroyRNNDataDescriptor>;
using ActivationDescriptor =
    CudnnObject<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor>;

}  // namespace scalebench::gpu
