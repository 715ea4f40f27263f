#pragma once
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "common/json.hpp"

struct sqlite3;

namespace scalebench {

// Acceptance verdicts per node, GPU and check, as `scalebench accept` posts them
// (POST /api/v1/node-health): kept in the store file (table node_health) so that a restart keeps
// them, the newest per (host, gpu, check) winning, and shown on /metrics as
// scalebench_node_health{Hostname, gpu, check}: 1 pass, 0.5 warn, 0 fail. Thread-safe.
class NodeHealth {
 public:
  // Opens a connection of its own to the store file, makes the table and loads what it holds.
  explicit NodeHealth(const std::string& db_path);
  ~NodeHealth();
  NodeHealth(const NodeHealth&) = delete;
  NodeHealth& operator=(const NodeHealth&) = delete;

  // What is wrong with a POST body, naming the field ("verdicts[3].outcome: ..."); "" when none.
  static std::string check_body(const Json& body);
  // Stores a checked body's verdicts at time `now` (seconds since 1970): per (host, gpu, check)
  // the worst outcome of the body's verdicts, replacing an older one. Skipped verdicts measured
  // nothing and change nothing. Returns how many (host, gpu, check) were stored.
  int post(const Json& body, double now);
  // Every stored verdict with its time, by host, gpu and check.
  Json list();
  // The scalebench_node_health family in the Prometheus text format ("" while none is stored).
  std::string metrics_text();

  // The gauge's value of an outcome: 1 pass, 0.5 warn, 0 fail.
  static double health_value(const std::string& outcome);

 private:
  using Key = std::tuple<std::string, int, std::string>;  // host, gpu, check
  void set_gauge(const Key& key, const std::string& outcome);
  void exec(const char* sql);

  std::mutex mutex_;
  sqlite3* db_ = nullptr;
  std::string path_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>* family_ = nullptr;
  std::map<Key, prometheus::Gauge*> gauges_;
};

}  // namespace scalebench
