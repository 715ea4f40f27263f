#pragma once
#include "workloads/collective/backend.hpp"
#include "workloads/runtime/mpi_session.hpp"

namespace scalebench::collective {

// MPI collectives on host memory: lets the whole system run, and be tested, without a GPU.
class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const MpiSession& mpi) : mpi_(mpi) {}
  std::string name() const override { return "mpi"; }
  int nranks() const override { return mpi_.size(); }
  std::vector<int> local_ranks() const override { return {mpi_.rank()}; }
  std::string unsupported(const Config& c) const override;
  void allocate(const Config& c, const Layout& largest) override;
  double time_ops(const Config& c, const Layout& l, int iters) override;
  Buffers run_checked(const Config& c, const Layout& l, const Buffers& inputs) override;

 private:
  void launch(const Config& c, const Layout& l);
  const MpiSession& mpi_;
  std::vector<std::byte> send_, recv_;
};

}  // namespace scalebench::collective
