#include "workloads/gpu/mpi_check.hpp"

#include <string>

#include "common/call_failed.hpp"

namespace scalebench {

void throw_mpi_error(const char* file, int line, const char* call, int status) {
  char msg[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(status, msg, &len);
  throw_call_failed(file, line, call, std::string("MPI error: ") + msg);
}

}  // namespace scalebench
