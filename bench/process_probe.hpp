#pragma once
// What the load bench reads of a process and of the machine, from /proc.
#include <sys/types.h>

#include <vector>

namespace scalebench::load {

// The value at fraction p (0..1) of v, nearest rank; 0 for no values.
double percentile(std::vector<double> v, double p);
// User + system CPU seconds the process has used so far (-1 when unknown).
double cpu_seconds(pid_t pid);
// Seconds the process's live threads, all together, have spent runnable but waiting for a CPU
// (/proc/PID/task/*/schedstat), -1 when unknown: a reply that waited for its thread to be
// scheduled shows here, not in CPU time. A thread that has ended no longer counts.
double run_wait_seconds(pid_t pid);
// Resident memory in KiB (-1 when unknown).
long rss_kib(pid_t pid);
// The 1-minute load average: other work on the same cores moves every figure.
double load_average();

}  // namespace scalebench::load
