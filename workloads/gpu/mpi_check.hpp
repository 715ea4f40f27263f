#pragma once
#include <mpi.h>

namespace scalebench {

// Throws Error with file:line, the call's text and MPI's own error string (mpi_check.cpp).
[[noreturn]] void throw_mpi_error(const char* file, int line, const char* call, int status);

#define MPI_CHECK(call)                                                                                        \
  do {                                                                                                         \
    int mpi_check_rc_ = (call);                                                                                \
    if (mpi_check_rc_ != MPI_SUCCESS) ::scalebench::throw_mpi_error(__FILE__, __LINE__, #call, mpi_check_rc_); \
  } while (0)

}  // namespace scalebench
