#pragma once
#include <mpi.h>

#include "workloads/gpu/unique_handle.hpp"

namespace scalebench::gpu {

// An MPI communicator this process made (MPI_Comm_split, ...), freed with MPI_Comm_free; reset it
// before MPI_Finalize.
struct FreeMpiComm {
  static MPI_Comm empty() { return MPI_COMM_NULL; }
  void operator()(MPI_Comm c) const noexcept { MPI_Comm_free(&c); }
};
using MpiComm = UniqueHandle<MPI_Comm, FreeMpiComm>;

}  // namespace scalebench::gpu
