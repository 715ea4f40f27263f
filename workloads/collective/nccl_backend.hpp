#pragma once
#include <memory>

#include "workloads/bootstrap/mpi_session.hpp"
#include "workloads/collective/backend.hpp"
#include "workloads/gpu/cuda_handles.hpp"

namespace scalebench::collective {

// NCCL collectives on the rank's GPU (chosen by local rank), timed with CUDA events on the
// communicator's stream. The communicator comes from an MPI-broadcast unique id.
class NcclBackend final : public Backend {
 public:
  explicit NcclBackend(const MpiSession& mpi);
  std::string name() const override { return "nccl"; }
  std::string unsupported(const Config& c) const override;
  void allocate(const Config& c, const Layout& largest) override;
  double time_ops(const Config& c, const Layout& l, int iters) override;
  std::vector<std::byte> run_checked(const Config& c, const Layout& l, const std::vector<std::byte>& input) override;
  int device() const { return device_; }

 private:
  void launch(const Config& c, const Layout& l);
  std::byte* send_ptr(const Config& c, const Layout& l) const;
  std::byte* recv_ptr(const Config& c, const Layout& l) const;

  const MpiSession& mpi_;
  int device_ = 0;
  std::unique_ptr<gpu::NcclComm> comm_;
  gpu::Stream stream_;
  gpu::Event start_, stop_;
  gpu::DeviceBuffer send_, recv_;
};

// "NVIDIA H200|GPU-uuid|0000:19:00.0" of the GPU this rank uses, and the versions of the stack.
std::string describe_device(int device);
Json gpu_versions();

}  // namespace scalebench::collective
