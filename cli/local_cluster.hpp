#pragma once
#include <optional>
#include <string>

#include "common/process.hpp"

namespace scalebench {

// A coordinator and one agent on loopback, for `scalebench study`: started as child processes
// with their logs in `log_dir`, stopped (by pid, SIGTERM then SIGKILL) when this goes away.
class LocalCluster {
 public:
  LocalCluster(const std::string& db_path, const std::string& log_dir);
  ~LocalCluster();
  const std::string& url() const { return url_; }
  // The cluster is closed like any other: fresh random tokens, the user's for this process.
  const std::string& user_token() const { return user_token_; }
  // Exit code of whichever child has died, if one has.
  std::optional<std::string> dead_child();

 private:
  std::string log_dir_;
  std::string url_;
  std::string user_token_;
  std::optional<ChildProcess> coordinator_;
  std::optional<ChildProcess> agent_;
};

}  // namespace scalebench
