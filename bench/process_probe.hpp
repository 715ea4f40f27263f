#pragma once
// What the load bench reads of a process and of the machine, from /proc.
#include <sys/types.h>

#include <map>
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
// Each live thread's run-queue wait so far, in seconds, by thread id (empty when unknown).
std::map<pid_t, double> thread_wait_seconds(pid_t pid);
// A process at one reading: its CPU seconds (-1 when unknown) and each live thread's run-queue
// wait, so that a thread ending between two readings takes nothing off.
struct UsageReading {
  pid_t pid = 0;
  double cpu_s = -1;
  std::map<pid_t, double> thread_wait_s;
};
UsageReading read_usage(pid_t pid);
// What a process used between two readings: CPU seconds and its threads' run-queue wait.
struct Usage {
  double cpu_s = 0, wait_s = 0;
};
// What `pid` used since `*last` (all of it when `*last` is of another process, or unknown: a
// restarted process counts from its start; 0 for a figure /proc did not give now); `*last`
// becomes this reading. The wait is summed thread by thread: a thread seen last time adds what it
// grew by, a new one all of its wait, one that has ended nothing (what it waited after the last
// reading is lost, not taken off the others).
Usage usage_since(UsageReading* last, pid_t pid);
// Resident memory in KiB (-1 when unknown).
long rss_kib(pid_t pid);
// The 1-minute load average: other work on the same cores moves every figure.
double load_average();

}  // namespace scalebench::load
