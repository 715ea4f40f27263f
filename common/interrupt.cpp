#include "common/interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace scalebench {

namespace {
std::atomic<int> g_signal{0};
void on_interrupt(int signal) { g_signal.store(signal); }
}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESTART;  // a request under way goes on; the command stops at its next poll
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_signal.load() != 0; }

int interrupt_signal() { return g_signal.load(); }

void throw_if_interrupted() {
  if (interrupted()) throw Interrupted("interrupted");
}

}  // namespace scalebench
