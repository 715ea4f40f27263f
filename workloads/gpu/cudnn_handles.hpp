#pragma once
#include <cudnn.h>

#include <string>

#include "common/error.hpp"
#include "workloads/gpu/unique_handle.hpp"

namespace scalebench {

// cuDNN's status and, when it left one, its message about the last failed call.
inline std::string cudnn_status_text(cudnnStatus_t st) {
  char msg[512] = {0};
  cudnnGetLastErrorString(msg, sizeof msg);
  std::string s = cudnnGetErrorString(st);
  if (msg[0]) s += std::string(" (") + msg + ")";
  return s;
}

// cuDNN's CHECK macro: file:line, the call and cuDNN's own error string.
#define CUDNN_CHECK(call)                                                                                  \
  do {                                                                                                     \
    cudnnStatus_t cudnn_check_rc_ = (call);                                                                \
    if (cudnn_check_rc_ != CUDNN_STATUS_SUCCESS)                                                           \
      throw ::scalebench::Error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #call ": " + \
                                ::scalebench::cudnn_status_text(cudnn_check_rc_));                         \
  } while (0)

namespace gpu {

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

}  // namespace gpu
}  // namespace scalebench
