#include <iostream>

#include "cli/commands.hpp"
#include "cli/record_source.hpp"
#include "common/error.hpp"

namespace scalebench {

int cmd_report(const CliArgs& a) {
  Source src(a);
  Json records = src.records(a.opt("experiment"));
  if (records.empty()) throw Error("no records to report");
  std::cout << records.size() << " records\n";
  return 0;
}

}  // namespace scalebench
