#pragma once
#include <optional>
#include <string>

#include "common/json.hpp"
#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/nccl_transport.hpp"
#include "workloads/train/train_config.hpp"

// Measures one train point on this rank's GPU: data-parallel training steps (gradients all-reduced
// through NCCL in buckets, overlapped with the backward pass) or inference. Every rank calls
// measure at once. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

class Net;

class TrainBench {
 public:
  // comm: how the gradient all-reduce's communicator may use the SMs (CommConfig). With several ranks,
  // NCCL's log of its connections is read back and checked against the run's `env` (e.g.
  // NCCL_P2P_DISABLE=1) and variant `transport` (nvlink, pcie, ...): a mismatch fails the point.
  TrainBench(const MpiSession& mpi, CommConfig comm, Json env = Json::object(), std::string transport = "");
  compute::RankOutcome measure(const TrainPoint& point, const Config& cfg, const compute::TimingConfig& timing,
                               const compute::DeviceInfo& gpu);

  // A tiny net's gradients against central finite differences of its loss, in fp32 on the
  // current GPU: {"model", "tensors", "wrong", "max_rel_error", "tolerance_rel", "by_tensor"}.
  // `model`: "tiny" (the ResNet and VGG ops), "tiny-inception" (Inception's) or "tiny-nasnet"
  // (NASNet's); `depthwise` and `pointwise`: how its depthwise and 1x1 convolutions run
  // (NetConfig::depthwise, NetConfig::pointwise), also in the result.
  static Json gradient_check(cudaStream_t stream, const std::string& model = "tiny",
                             const std::string& depthwise = "ours", const std::string& pointwise = "auto");
  // The tiny net whose ops those of `m` are: tiny-nasnet for a net with grouped convolutions,
  // adds or subsampling, tiny-inception for one with branches, else tiny.
  static std::string gradient_check_model(const Model& m);

 private:
  compute::RankOutcome train(const TrainPoint& point, const Config& cfg, const compute::TimingConfig& timing);
  compute::RankOutcome infer(const TrainPoint& point, const Config& cfg, const compute::TimingConfig& timing);
  ncclComm_t comm();
  void record_checks(compute::RankOutcome& out, Json& details, const Net& net, double loss_first,
                     const std::optional<Json>& allreduce_check, std::optional<bool> ranks_agree, cudaStream_t s);

  const MpiSession& mpi_;
  gpu::Stream stream_;
  gpu::Stream comm_stream_;          // the highest priority: an all-reduce waiting for SMs holds up every rank
  std::optional<NcclLog> nccl_log_;  // made before the communicator, so NCCL logs to it
  Json env_;
  std::string transport_;
  std::optional<gpu::NcclComm> comm_;
  CommConfig comm_config_;
  std::optional<Json> grad_check_;
};

}  // namespace scalebench::train
