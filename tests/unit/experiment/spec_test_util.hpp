#pragma once
// What the tests of the experiment parser share: the error a text must throw, and where.
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "experiment/spec.hpp"

namespace scalebench::spec_test {

// Parses `yaml` as "exp.yaml" and returns the SpecError it must throw.
inline SpecError spec_error(const std::string& yaml) {
  try {
    parse_experiment(yaml, "exp.yaml");
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a SpecError for:\n" << yaml;
  return SpecError({});
}

// The one issue about `field`; fails the test when there is not exactly one.
inline SourceIssue issue_for(const SpecError& e, const std::string& field) {
  const SourceIssue* found = nullptr;
  int count = 0;
  for (const auto& i : e.issues())
    if (i.field == field) {
      found = &i;
      ++count;
    }
  EXPECT_EQ(count, 1) << "issues about '" << field << "' in:\n" << e.what();
  return found ? *found : SourceIssue{};
}

inline void expect_at(const SourceIssue& i, int line, int column, const std::string& message_part) {
  EXPECT_EQ(i.file, "exp.yaml");
  EXPECT_EQ(i.line, line) << i.to_string();
  EXPECT_EQ(i.column, column) << i.to_string();
  EXPECT_NE(i.message.find(message_part), std::string::npos) << i.to_string();
}

inline const char* kHeader =
    "name: demo\n"
    "workload: collective\n";

}  // namespace scalebench::spec_test
