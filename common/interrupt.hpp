#pragma once
#include "common/error.hpp"

namespace scalebench {

// Ctrl-C and SIGTERM for the programs that follow their work to its end (the CLI's study and
// accept, the coordinator benchmarks): the signal is only noted, so that the program stops at its
// next poll and ends what it started (a local cluster, experiments submitted for it, a coordinator
// and its temporary folder) instead of leaving it behind.
void catch_interrupts();
bool interrupted();
// The signal that interrupted (SIGINT or SIGTERM), 0 while none has.
int interrupt_signal();

// A command that stopped on an interrupt, having ended what it started: exit code 130, as a shell
// gives a program that SIGINT ended.
class Interrupted : public Error {
 public:
  using Error::Error;
};

// Throws Interrupted("interrupted") once SIGINT or SIGTERM came: a poll between two steps.
void throw_if_interrupted();

}  // namespace scalebench
