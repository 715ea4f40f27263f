#pragma once
#include <cstddef>
#include <string>

namespace scalebench {

// How many connections a server may hold at once without running out of file descriptors: each
// takes one, and once none is left, accept fails and new clients wait unanswered (in the listen
// backlog) until an idle connection's read deadline passes. Kept below the limit, a connection
// past it is accepted and refused at once with a 503 and Retry-After instead.
struct ConnectionLimit {
  std::size_t connections = 0;  // what the server may hold: `wanted`, or less
  bool clamped = false;         // less than `wanted`
  long long fd_limit = 0;       // RLIMIT_NOFILE's soft limit; -1 when unlimited
  long long fds_open = 0;       // descriptors open when it was computed
  std::string note;             // for the start-up log when clamped
};

// Descriptors kept free beside the connections: a refused connection's accept, SQLite's temporary
// files and the read-only store connections opened on demand.
constexpr long long kSpareDescriptors = 16;

// `wanted` connections, clamped to this process's descriptor limit less the descriptors open now
// and kSpareDescriptors; 0 when not even one connection fits. Call it once the server's sockets
// and stores are open.
ConnectionLimit connection_limit(std::size_t wanted);

// The arithmetic of connection_limit, given the limit (-1: none) and the descriptors open.
ConnectionLimit connection_limit(std::size_t wanted, long long fd_limit, long long fds_open);

}  // namespace scalebench
