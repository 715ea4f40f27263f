#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "accept/battery.hpp"
#include "accept/verdict.hpp"
#include "common/json.hpp"
#include "http/http_client.hpp"

namespace scalebench {

// One battery item as it ended: its records, or why it measured nothing.
struct ItemOutcome {
  accept::Item item;
  long long experiment_id = 0;
  std::string state;   // ok | failed | timeout | cancelled | unfinished
  std::string reason;  // why not ok
  double took_s = 0;
  std::vector<Json> records;
};

// Submits battery items to a coordinator and follows them to their end, one progress line per
// item and an ETA; an item still running at the deadline is cancelled and ends `unfinished`.
// `check_alive` is called every poll; when it (or anything else) throws, the items not yet
// finished are cancelled before the exception goes on.
class BatteryRunner {
 public:
  BatteryRunner(HttpClient& client, std::function<void()> check_alive)
      : client_(client), check_alive_(std::move(check_alive)) {}

  // Every item at once (the scheduler starts those whose nodes are free); returns in item order.
  std::vector<ItemOutcome> run(const std::vector<accept::Item>& items, std::chrono::seconds deadline,
                               const std::string& what);

 private:
  // Polls the submitted items until each has ended (or the deadline cancelled it).
  void follow(const std::vector<accept::Item>& items, std::vector<ItemOutcome>& out, std::vector<bool>& finished,
              std::chrono::seconds deadline, const std::string& what);
  void cancel_open(const std::vector<ItemOutcome>& out, const std::vector<bool>& finished);

  HttpClient& client_;
  std::function<void()> check_alive_;
};

// Sends the verdicts of named nodes to the coordinator (POST /api/v1/node-health), which keeps
// the newest per node, GPU and check and shows them as scalebench_node_health on /metrics.
// Returns how many it stored; throws Error when the coordinator refuses them.
int post_node_health(HttpClient& client, const std::string& level, const std::vector<accept::Verdict>& verdicts);

// Records of per-node items carry the node's agent name as point.host (on one machine several
// agents share a hostname; the agent's name is what SLURM and the operator know).
void label_with_node(ItemOutcome& outcome);

}  // namespace scalebench
