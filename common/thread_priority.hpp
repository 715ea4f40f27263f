#pragma once
// A thread's CPU priority (its nice value), for work that may wait behind other work on a busy
// core: bulk work lowered lets latency-bound work on the same core run first when it wakes.

namespace scalebench {

// Raises the calling thread's nice value by `by` (Linux gives each thread its own), once per
// thread: later calls on the same thread do nothing. An unprivileged process can lower a thread's
// priority but never raise it again, so only threads that do nothing else should call it. False
// when the system refused.
bool lower_this_thread_priority(int by);

}  // namespace scalebench
