#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace scalebench {

// Base of every error scalebench reports to a user: the message is meant to be printed as is.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A server (the coordinator) that could not be reached or did not answer within its deadline:
// the network's or the server's trouble, not the input's (the CLI exits 4).
class UnreachableError : public Error {
 public:
  using Error::Error;
};

// A server that answered but refused or failed the request (a non-2xx answer, or one that is not
// what the API promises). `status` is the HTTP status, 0 when the answer itself was malformed.
class RefusedError : public Error {
 public:
  RefusedError(const std::string& message, int status) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// Where in an input file a problem is: file, 1-based line and column, and the field's path.
struct SourceIssue {
  std::string file;
  int line = 0;
  int column = 0;
  std::string field;
  std::string message;
  std::string to_string() const;
};

// An experiment file that does not validate; holds every problem found, one per line.
class SpecError : public Error {
 public:
  explicit SpecError(std::vector<SourceIssue> issues);
  const std::vector<SourceIssue>& issues() const { return issues_; }

 private:
  std::vector<SourceIssue> issues_;
};

}  // namespace scalebench
