#include "common/thread_priority.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace scalebench {

bool lower_this_thread_priority(int by) {
  thread_local bool lowered = false;
  if (lowered || by <= 0) return true;
  lowered = true;
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);  // -1 is a valid nice value: errno tells
  if (errno != 0) return false;
  return setpriority(PRIO_PROCESS, tid, now + by) == 0;
}

}  // namespace scalebench
