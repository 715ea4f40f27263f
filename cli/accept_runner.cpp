#include "cli/accept_runner.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "cli/record_source.hpp"
#include "common/error.hpp"

namespace scalebench {

namespace {
std::string mm_ss(double seconds) {
  const int s = static_cast<int>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", s / 60, s % 60);
  return buf;
}

// Seconds still expected: per node, the items not finished one after another; nodes in parallel.
double eta(const std::vector<accept::Item>& items, const std::vector<bool>& finished) {
  std::map<std::string, double> per_node;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (!finished[i])
      for (const auto& a : items[i].agents) per_node[a] += items[i].expected_s;
  double most = 0;
  for (const auto& [node, s] : per_node) most = std::max(most, s);
  return most;
}
}  // namespace

std::vector<ItemOutcome> BatteryRunner::run(const std::vector<accept::Item>& items, std::chrono::seconds deadline,
                                            const std::string& what) {
  std::vector<ItemOutcome> out(items.size());
  std::vector<bool> finished(items.size(), false);
  try {
    for (std::size_t i = 0; i < items.size(); ++i) {
      out[i].item = items[i];
      const HttpResponse answer = client_.request("POST", "/api/v1/experiments", items[i].yaml, "application/yaml",
                                                  {{"X-Scalebench-Source", "scalebench accept"}});
      const Json j = Json::parse(answer.body.empty() ? "{}" : answer.body, nullptr, false);
      if (answer.status != 201)
        throw Error("the coordinator refused the battery's " + items[i].label + ": " +
                    (j.is_object() ? j.value("error", answer.body) : answer.body));
      out[i].experiment_id = j["experiment_id"].get<long long>();
    }
    follow(items, out, finished, deadline, what);
  } catch (...) {
    // Interrupted, a local child dead, the coordinator refusing an item: what this battery left
    // open would hold the nodes' GPUs up to the level's bound and queue a rerun behind it.
    cancel_open(out, finished);
    throw;
  }
  return out;
}

void BatteryRunner::cancel_open(const std::vector<ItemOutcome>& out, const std::vector<bool>& finished) {
  std::string ids;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (finished[i] || out[i].experiment_id == 0) continue;
    const std::string id = std::to_string(out[i].experiment_id);
    try {
      client_.post_json("/api/v1/experiments/" + id + "/cancel", Json::object());
      ids += (ids.empty() ? "" : ", ") + id;
    } catch (const std::exception& e) {
      std::cerr << "warning: could not cancel the battery's experiment " << id << ": " << e.what() << "\n";
    }
  }
  if (!ids.empty()) std::cerr << "cancelled the battery's open experiments: " << ids << "\n";
}

void BatteryRunner::follow(const std::vector<accept::Item>& items, std::vector<ItemOutcome>& out,
                           std::vector<bool>& finished, std::chrono::seconds deadline, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  std::size_t done = 0;
  double last_note = 0;
  while (done < items.size()) {
    check_alive_();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool late = elapsed > static_cast<double>(deadline.count());
    // One summary of every experiment a round, however many items: then each finished one in full.
    std::set<long long> ended;
    for (const Json& e : client_.get_json("/api/v1/experiments").value("experiments", Json::array()))
      if (e.value("finished", false)) ended.insert(e["id"].get<long long>());
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (finished[i]) continue;
      const std::string id = std::to_string(out[i].experiment_id);
      if (!ended.count(out[i].experiment_id) && !late) continue;
      const Json e = experiment_with_runs(client_, id);
      ItemOutcome& o = out[i];
      if (!e["finished"].get<bool>()) {
        // Hung past the level's bound: stop it; its node fails with the reason.
        client_.post_json("/api/v1/experiments/" + id + "/cancel", Json::object());
        o.state = "unfinished";
        o.reason = "did not finish within " + std::to_string(deadline.count()) + " s (the level's bound)";
      } else {
        o.state = "ok";
        for (const Json& r : e["run_list"]) {
          const std::string s = r["state"];
          // A skipped run (every record skipped: no NVML on a node without GPUs) measured
          // nothing wrong: its records say why, and the rules judge them.
          if (s == "ok" || s == "skipped") continue;
          o.state = s;
          o.reason = "run " + r["run_id"].dump() + " " + s +
                     (r.value("reason", "").empty() ? "" : ": " + r.value("reason", ""));
        }
        o.records.clear();
        for (const Json& r : Source(client_).records(id)) o.records.push_back(r);
      }
      o.took_s = elapsed;
      finished[i] = true;
      ++done;
      std::string nodes;
      for (const auto& a : o.item.agents) nodes += (nodes.empty() ? "" : ",") + a;
      std::cout << "[" << done << "/" << items.size() << "] " << what << " " << o.item.label << " on " << nodes << ": "
                << o.state << ", " << o.records.size() << " records" << (o.reason.empty() ? "" : " (" + o.reason + ")")
                << " | elapsed " << mm_ss(elapsed) << ", ~" << mm_ss(eta(items, finished)) << " left\n"
                << std::flush;
    }
    if (done < items.size() && elapsed - last_note >= 15) {
      last_note = elapsed;
      if (elapsed > 1)
        std::cout << "  ... " << done << "/" << items.size() << " done, elapsed " << mm_ss(elapsed) << ", ~"
                  << mm_ss(eta(items, finished)) << " left\n"
                  << std::flush;
    }
    if (done < items.size()) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

int post_node_health(HttpClient& client, const std::string& level, const std::vector<accept::Verdict>& verdicts) {
  Json list = Json::array();
  for (const accept::Verdict& v : verdicts)
    if (!v.host.empty()) list.push_back(accept::to_json(v));  // the run between nodes has no one host
  if (list.empty()) return 0;
  const Json answer = client.post_json("/api/v1/node-health", Json{{"level", level}, {"verdicts", list}});
  return answer.value("stored", 0);
}

void label_with_node(ItemOutcome& o) {
  if (o.item.agents.size() != 1) return;
  for (Json& r : o.records) {
    if (!r.contains("point") || !r["point"].is_object()) r["point"] = Json::object();
    r["point"]["host"] = o.item.agents.front();
  }
}

}  // namespace scalebench
