#pragma once
#include <chrono>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "common/json.hpp"
#include "http/http_client.hpp"
#include "store/store.hpp"

namespace scalebench {

// The coordinator URL: --coordinator, else $SCALEBENCH_COORDINATOR, else http://127.0.0.1:8470.
std::string coordinator_url(const CliArgs& a);

// A client of the coordinator at --coordinator, with the token of --token-file or SCALEBENCH_TOKEN.
HttpClient coordinator_client(const CliArgs& a, std::chrono::milliseconds timeout = std::chrono::seconds(10));

// An experiment's summary with every run in `run_list`: the coordinator answers one page of runs at
// a time, and this follows the pages to the end.
Json experiment_with_runs(HttpClient& client, const std::string& id);

// Records saved by `scalebench results --format json` (JSON lines) or as a JSON array, from a file
// or standard input ("-"); errors name the file, line and field.
Json read_records_file(const std::string& path);

// Records and experiment summaries from a running coordinator (--coordinator) or straight from a
// store file (--db, opened read-only).
class Source {
 public:
  explicit Source(const CliArgs& a);
  explicit Source(HttpClient client);
  Json experiments();
  Json experiment(const std::string& id);
  // Every record of the experiment (all experiments when empty), in store order, read in pages.
  Json records(const std::string& experiment);
  // Every prediction with its scores (docs/predictions.md), or the one with this id.
  Json predictions(const std::string& id);

 private:
  std::optional<Store> store_;
  std::optional<HttpClient> client_;
};

}  // namespace scalebench
