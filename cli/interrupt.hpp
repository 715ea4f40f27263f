#pragma once
#include "common/error.hpp"

namespace scalebench {

// Ctrl-C and SIGTERM for the commands that follow their work to its end (study, accept): the
// signal is only noted, so that the command stops at its next poll and ends what it started
// (a local cluster, experiments submitted for it) instead of leaving it behind.
void catch_interrupts();
bool interrupted();

// A command that stopped on an interrupt, having ended what it started: exit code 130, as a shell
// gives a program that SIGINT ended.
class Interrupted : public Error {
 public:
  using Error::Error;
};

}  // namespace scalebench
