#include "cli/interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace scalebench {

namespace {
std::atomic<bool> g_interrupted{false};
void on_interrupt(int) { g_interrupted.store(true); }
}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESTART;  // a request under way goes on; the command stops at its next poll
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_interrupted.load(); }

}  // namespace scalebench
