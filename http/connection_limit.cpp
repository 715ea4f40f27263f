#include "http/connection_limit.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace scalebench {

namespace {
// The descriptors this process has open (Linux: the entries of /proc/self/fd, less the one that
// lists them); 0 when they cannot be listed.
long long open_descriptors() {
  std::error_code ec;
  long long n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n > 0 ? n - 1 : 0;
}
}  // namespace

ConnectionLimit connection_limit(std::size_t wanted, long long fd_limit, long long fds_open) {
  ConnectionLimit out;
  out.connections = wanted;
  out.fd_limit = fd_limit;
  out.fds_open = fds_open;
  if (fd_limit < 0) return out;
  const long long room = std::max(0LL, fd_limit - fds_open - kSpareDescriptors);
  if (static_cast<unsigned long long>(room) >= wanted) return out;
  out.connections = static_cast<std::size_t>(room);
  out.clamped = true;
  out.note = "at most " + std::to_string(room) + " connections at once, not " + std::to_string(wanted) +
             ": the descriptor limit (ulimit -n) is " + std::to_string(fd_limit) + ", " + std::to_string(fds_open) +
             " are open and " + std::to_string(kSpareDescriptors) + " are kept spare";
  return out;
}

ConnectionLimit connection_limit(std::size_t wanted) {
  rlimit nofile{};
  long long limit = -1;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY)
    limit = static_cast<long long>(nofile.rlim_cur);
  return connection_limit(wanted, limit, open_descriptors());
}

}  // namespace scalebench
