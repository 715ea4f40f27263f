#pragma once
#include <memory>
#include <vector>

#include "workloads/collective/backend.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/runtime/environment.hpp"
#include "workloads/runtime/mpi_session.hpp"

namespace scalebench::collective {

// NCCL collectives on the GPUs this process drives: `gpus_per_process` of them, picked by local
// rank (nccl-tests -g), one NCCL rank each, launched together in one NCCL group. Timed with CUDA
// events on each communicator's stream; a process's time is its slowest GPU's. The communicators
// come from an MPI-broadcast unique id.
class NcclBackend final : public Backend {
 public:
  NcclBackend(const MpiSession& mpi, int gpus_per_process);
  std::string name() const override { return "nccl"; }
  int nranks() const override { return nranks_; }
  std::vector<int> local_ranks() const override;
  std::string unsupported(const Config& c) const override;
  void allocate(const Config& c, const Layout& largest) override;
  double time_ops(const Config& c, const Layout& l, int iters) override;
  Buffers run_checked(const Config& c, const Layout& l, const Buffers& inputs) override;
  std::optional<long long> count_wrong_in_place(const Config& c, const Layout& l) override;
  std::vector<int> devices() const;

 private:
  // Everything one GPU of this process owns; built with that GPU current.
  struct Gpu {
    int device = 0;
    int rank = 0;  // NCCL rank
    std::unique_ptr<gpu::NcclComm> comm;
    gpu::Stream stream;
    gpu::Event start, stop;
    gpu::DeviceBuffer send, recv;
    gpu::DeviceBuffer wrong{sizeof(unsigned long long)};  // the GPU check's counter
  };
  // All GPUs' operations of one step, in one NCCL group.
  void launch_all(const Config& c, const Layout& l);
  void launch(Gpu& g, const Config& c, const Layout& l);
  double elapsed_slowest() const;
  void capture(const Config& c, const Layout& l, int iters);
  std::byte* send_ptr(const Gpu& g, const Config& c, const Layout& l) const;
  std::byte* recv_ptr(const Gpu& g, const Config& c, const Layout& l) const;

  const MpiSession& mpi_;
  int nranks_ = 0;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  // The last captured graph per GPU, reused while the size and iteration count stay the same.
  std::vector<gpu::GraphExec> graphs_;
  std::uint64_t graph_bytes_ = 0;
  int graph_iters_ = 0;
};

}  // namespace scalebench::collective
