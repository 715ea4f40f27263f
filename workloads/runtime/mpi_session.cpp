#include "workloads/runtime/mpi_session.hpp"

#include <unistd.h>

#include <cstdlib>

#include "workloads/gpu/mpi_check.hpp"

namespace scalebench {

MpiSession::MpiSession(int* argc, char*** argv) {
  MPI_CHECK(MPI_Init(argc, argv));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  // A run placed over several nodes knows its node (host_binding.hpp): ranks group by it, so
  // that local ranks follow the placement even where two of its nodes share a machine.
  const char* node = std::getenv("SCALEBENCH_NODE");
  if (node && *node)
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, std::atoi(node), rank_, node_comm_.out()));
  else
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, node_comm_.out()));
  MPI_CHECK(MPI_Comm_rank(node_comm_.get(), &local_rank_));
  MPI_CHECK(MPI_Comm_size(node_comm_.get(), &local_size_));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const char* placed = std::getenv("SCALEBENCH_HOST");  // the placement's name of this node
  hostname_ = placed && *placed ? placed : host;
}

MpiSession::~MpiSession() {
  node_comm_.reset();  // before MPI_Finalize, after which no MPI call may run
  MPI_Finalize();
}

std::string MpiSession::library_version() const {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string v(buf, static_cast<std::size_t>(len));
  auto nl = v.find_first_of("\n,");
  return v.substr(0, nl);
}

std::vector<std::string> MpiSession::all_gather(const std::string& mine) const {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  MPI_CHECK(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD));
  int total = 0;
  for (int i = 0; i < size_; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += lens[static_cast<std::size_t>(i)];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_CHECK(
      MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, MPI_COMM_WORLD));
  std::vector<std::string> out;
  for (int i = 0; i < size_; ++i)
    out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(i)]),
                             static_cast<std::size_t>(lens[static_cast<std::size_t>(i)])));
  return out;
}

std::string MpiSession::first_problem(const std::string& mine) const {
  const std::vector<std::string> all = all_gather(mine);
  for (std::size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty()) return "rank " + std::to_string(r) + ": " + all[r];
  return "";
}

double MpiSession::allreduce_sum(double v) const {
  double out = 0;
  MPI_CHECK(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return out;
}
double MpiSession::allreduce_max(double v) const {
  double out = 0;
  MPI_CHECK(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return out;
}
long long MpiSession::allreduce_sum(long long v) const {
  long long out = 0;
  MPI_CHECK(MPI_Allreduce(&v, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  return out;
}
void MpiSession::barrier() const { MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }
void MpiSession::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace scalebench
