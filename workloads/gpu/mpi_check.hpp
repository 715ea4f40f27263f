#pragma once
#include <mpi.h>

#include <string>

#include "common/error.hpp"

namespace scalebench {

// Throws with file:line, the call and MPI's own error string.
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

#define MPI_CHECK(call)                                                                                        \
  do {                                                                                                         \
    int mpi_check_rc_ = (call);                                                                                \
    if (mpi_check_rc_ != MPI_SUCCESS) ::scalebench::throw_mpi_error(mpi_check_rc_, #call, __FILE__, __LINE__); \
  } while (0)

}  // namespace scalebench
