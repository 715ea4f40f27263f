#include <memory>
#include <string>
#include <vector>

#include "store/occupancy.hpp"
#include "store/store.hpp"
#include "store/store_statement.hpp"

// The runs that are not over (queued, running, cancelling), held in memory once read: the queue in
// its order, the counts per state and the GPUs held, kept as indexes that every change updates,
// so that a heartbeat reads no table.
namespace scalebench {

namespace {
bool is_open(const std::string& state) { return state == "queued" || state == "running" || state == "cancelling"; }
bool in_flight(const std::string& state) { return state == "running" || state == "cancelling"; }
}  // namespace

Json Store::scheduling_spec(const Json& spec) {
  Json slim = Json::object();
  for (const char* key : {"nodes", "gpu", "gpus_per_node", "ranks_per_node", "priority", "agents"})
    if (auto it = spec.find(key); it != spec.end()) slim[key] = *it;
  return slim;
}

std::map<long long, Store::Run>& Store::open_runs() {
  if (!open_) {
    std::map<long long, Run> runs;
    std::string sql = run_columns_ + " WHERE state IN ('queued', 'running', 'cancelling')";
    Statement q(*statements_, path_, sql.c_str());
    while (q.step()) {
      Run r = read_run(q);
      if (r.state == "queued") r.spec = scheduling_spec(r.spec);
      runs.emplace(r.id, std::move(r));
    }
    open_ = std::move(runs);
    queued_count_ = running_count_ = cancelling_count_ = 0;
    held_.clear();
    queue_.clear();
    busy_ = std::make_unique<Occupancy>();
    for (const auto& [id, r] : *open_) index_run(r, +1);
  }
  return *open_;
}

void Store::note_run(const Run& run) {
  ++open_generation_;
  if (!open_) return;
  if (auto old = open_->find(run.id); old != open_->end()) {
    index_run(old->second, -1);
    open_->erase(old);
  }
  if (!is_open(run.state)) return;
  Run& kept = open_->emplace(run.id, run).first->second;
  if (kept.state == "queued") kept.spec = scheduling_spec(kept.spec);
  index_run(kept, +1);
}

void Store::index_run(const Run& run, int sign) {
  if (run.state == "queued") {
    queued_count_ += sign;
    const std::pair<int, long long> key{-run.spec.value("priority", 0), run.id};
    if (sign > 0)
      queue_.insert(key);
    else
      queue_.erase(key);
  }
  if (!in_flight(run.state)) return;
  (run.state == "running" ? running_count_ : cancelling_count_) += sign;
  bool gpu = false;
  const auto hosts = held_hosts(run, &gpu);
  if (sign > 0) {
    held_[run.agent_id].insert(run.id);
    busy_->take(hosts, gpu);
  } else {
    busy_->release(hosts, gpu);
    if (auto it = held_.find(run.agent_id); it != held_.end()) {
      it->second.erase(run.id);
      if (it->second.empty()) held_.erase(it);
    }
  }
}

void Store::forget_open_runs() {
  ++open_generation_;
  open_.reset();
}

std::vector<const Store::Run*> Store::runs_held_by(const std::string& agent_id) {
  auto& runs = open_runs();
  std::vector<const Run*> out;
  if (auto it = held_.find(agent_id); it != held_.end())
    for (long long id : it->second) out.push_back(&runs.at(id));
  return out;
}

std::vector<Store::Run> Store::runs_in_flight() {
  std::vector<Run> out;
  for (const auto& [id, r] : open_runs())
    if (in_flight(r.state)) out.push_back(r);
  return out;
}

std::vector<const Store::Run*> Store::queued_runs(std::size_t limit) {
  auto& runs = open_runs();
  std::vector<const Run*> out;
  for (const auto& [priority, id] : queue_) {
    if (limit > 0 && out.size() == limit) break;
    out.push_back(&runs.at(id));
  }
  return out;
}

std::vector<long long> Store::open_run_ids(long long experiment_id) {
  std::vector<long long> out;
  for (const auto& [id, r] : open_runs())
    if (r.experiment_id == experiment_id) out.push_back(id);
  return out;
}

const Occupancy& Store::occupancy() {
  open_runs();
  return *busy_;
}

int Store::count_runs(const std::string& state) {
  if (is_open(state)) {
    open_runs();
    return state == "queued" ? queued_count_ : state == "running" ? running_count_ : cancelling_count_;
  }
  Statement q(*statements_, path_, "SELECT COUNT(*) FROM runs WHERE state=?");
  q.bind(1, state);
  q.step();
  return static_cast<int>(q.i64(0));
}

}  // namespace scalebench
