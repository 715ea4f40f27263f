#include "workloads/infer/loadgen_loop.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "workloads/infer/arrival_schedule.hpp"
#include "workloads/infer/search_give_up.hpp"

namespace scalebench::infer {

namespace {
bool closed_loop(Scenario s) { return s == Scenario::single_stream || s == Scenario::multi_stream; }
}  // namespace

std::vector<double> server_schedule(double qps, double min_duration_s, std::uint64_t min_queries, std::uint64_t seed) {
  if (!(qps > 0)) throw Error("Server scenario: target_qps must be above 0");
  // poisson_arrivals of one seed are a prefix of each other, so a longer draw only extends it.
  std::size_t count = static_cast<std::size_t>(std::max<double>(
      static_cast<double>(std::max<std::uint64_t>(min_queries, 1)), std::ceil(qps * min_duration_s * 1.1) + 16));
  std::vector<double> at = poisson_arrivals(qps, count, seed);
  while (at.back() < min_duration_s) at = poisson_arrivals(qps, count *= 2, seed);
  std::size_t keep = 0;
  while (keep < at.size() && (keep < min_queries || at[keep == 0 ? 0 : keep - 1] < min_duration_s)) ++keep;
  at.resize(std::max<std::size_t>(keep, 1));
  return at;
}

LoadGenLoop::LoadGenLoop(const LoopSettings& s)
    : s_(s),
      batcher_(s.max_batch, closed_loop(s.scenario) ? 0.0 : s.batch_timeout_s),
      in_flight_(static_cast<std::size_t>(std::max(s.streams, 0))) {
  if (s.streams < 1) throw Error("streams must be at least 1");
  if (s.depth < 1) throw Error("batches in flight per stream must be at least 1");
  if (s.samples_per_query < 1) throw Error("a query has at least one sample");
  if (s.pool_samples < 1) throw Error("the sample pool is empty");
  if (s.scenario == Scenario::offline && s.offline_samples < 1) throw Error("Offline: no samples to issue");
  if (s.scenario == Scenario::server)
    arrivals_ = server_schedule(s.target_qps, s.min_duration_s, s.min_queries, s.seed);
}

void LoadGenLoop::issue(double at_s, std::uint64_t samples) {
  const std::uint64_t q = next_query_++;
  Outstanding& o = queries_[q];
  o.issued_s = at_s;
  o.samples = samples;
  for (std::uint64_t done = 0; done < samples;) {
    const int n = static_cast<int>(std::min<std::uint64_t>(samples - done, static_cast<std::uint64_t>(s_.max_batch)));
    const std::uint64_t id = next_piece_++;
    pieces_[id] = Piece{q, next_sample_ + done, n};
    batcher_.add(Query{id, n, at_s});
    ++o.pieces;
    done += static_cast<std::uint64_t>(n);
  }
  next_sample_ += samples;
  if (s_.give_up_latency_ms > 0 && s_.scenario == Scenario::server) issue_order_.emplace_back(q, at_s);
}

bool LoadGenLoop::give_up(double now_s) {
  if (s_.give_up_latency_ms <= 0 || s_.scenario != Scenario::server || !gave_up_.empty()) return false;
  const double since_s = now_s - s_.give_up_latency_ms / 1e3;
  const std::uint64_t allowed = late_queries_allowed(s_.give_up_percentile, arrivals_.size());
  while (!issue_order_.empty() && queries_.count(issue_order_.front().first) == 0) issue_order_.pop_front();
  std::uint64_t late = late_;  // and the outstanding queries issued before `since_s`, oldest first
  for (auto it = issue_order_.begin(); it != issue_order_.end() && it->second < since_s && late <= allowed; ++it)
    late += queries_.count(it->first);
  if (late <= allowed) return false;
  gave_up_ =
      give_up_reason(now_s - start_s_, late, arrivals_.size(), "queries", s_.give_up_latency_ms, s_.give_up_percentile);
  next_arrival_ = arrivals_.size();
  issuing_ = false;
  for (const Batch& b : batcher_.drain(now_s))
    for (const Query& piece : b.queries) {
      queries_.erase(pieces_.at(piece.id).query);  // its pieces in flight complete as dropped
      pieces_.erase(piece.id);
    }
  return true;
}

int LoadGenLoop::stream_for_next_batch() const {
  int best = -1;
  for (int k = 0; k < s_.streams; ++k) {
    const std::size_t n = in_flight_[static_cast<std::size_t>(k)].size();
    if (n < static_cast<std::size_t>(s_.depth) && (best < 0 || n < in_flight_[static_cast<std::size_t>(best)].size()))
      best = k;
  }
  const bool wait_for_idle = s_.partial_waits_for_idle && s_.scenario == Scenario::server && !batcher_.full();
  if (best >= 0 && wait_for_idle && !in_flight_[static_cast<std::size_t>(best)].empty()) return -1;
  return best;
}

LoopStep LoadGenLoop::advance(double now_s) {
  LoopStep step;
  if (!started_) {
    started_ = true;
    start_s_ = last_completion_s_ = now_s;
    if (s_.scenario == Scenario::offline) {
      issue(now_s, s_.offline_samples);
      issuing_ = false;
    }
  }
  if (s_.scenario == Scenario::server) {
    while (next_arrival_ < arrivals_.size() && start_s_ + arrivals_[next_arrival_] <= now_s)
      issue(start_s_ + arrivals_[next_arrival_++], static_cast<std::uint64_t>(s_.samples_per_query));
    issuing_ = next_arrival_ < arrivals_.size();
    give_up(now_s);
  } else if (closed_loop(s_.scenario) && issuing_ && queries_.empty()) {
    issue(now_s, static_cast<std::uint64_t>(s_.samples_per_query));
  }
  for (int k = stream_for_next_batch(); k >= 0; k = stream_for_next_batch()) {
    std::optional<Batch> b = batcher_.take(now_s);
    if (!b) break;
    Dispatch d;
    d.stream = k;
    for (const Query& q : b->queries) {
      const Piece& p = pieces_.at(q.id);
      for (int i = 0; i < p.samples; ++i)
        d.samples.push_back((p.first_sample + static_cast<std::uint64_t>(i)) % s_.pool_samples);
    }
    ++batches_;
    batched_samples_ += static_cast<std::uint64_t>(b->samples);
    in_flight_[static_cast<std::size_t>(k)].push_back(std::move(*b));
    step.dispatch.push_back(std::move(d));
  }
  if (s_.scenario == Scenario::server && next_arrival_ < arrivals_.size())
    step.wake_s = start_s_ + arrivals_[next_arrival_];
  if (stream_for_next_batch() >= 0)
    if (const std::optional<double> due = batcher_.deadline())
      step.wake_s = step.wake_s ? std::min(*step.wake_s, *due) : *due;
  step.done = !issuing_ && queries_.empty();
  return step;
}

void LoadGenLoop::complete(int stream, double now_s) {
  if (stream < 0 || stream >= s_.streams || in_flight_[static_cast<std::size_t>(stream)].empty())
    throw Error("a completion on stream " + std::to_string(stream) + ", which has no batch in flight");
  std::deque<Batch>& flying = in_flight_[static_cast<std::size_t>(stream)];
  const Batch b = std::move(flying.front());
  flying.pop_front();
  last_completion_s_ = std::max(last_completion_s_, now_s);
  for (const Query& q : b.queries) {
    const auto piece = pieces_.find(q.id);
    const std::uint64_t query = piece->second.query;
    pieces_.erase(piece);
    const auto o = queries_.find(query);
    if (o == queries_.end()) continue;  // dropped by a give-up while a piece of it was in flight
    if (--o->second.pieces > 0) continue;
    latencies_ms_.push_back((now_s - o->second.issued_s) * 1e3);
    if (s_.give_up_latency_ms > 0 && latencies_ms_.back() > s_.give_up_latency_ms) ++late_;
    ++completed_queries_;
    completed_samples_ += o->second.samples;
    queries_.erase(o);
  }
  if (closed_loop(s_.scenario) && queries_.empty() && completed_queries_ >= s_.min_queries &&
      now_s - start_s_ >= s_.min_duration_s)
    issuing_ = false;
}

RunTally LoadGenLoop::tally() const {
  RunTally t;
  t.queries = completed_queries_;
  t.samples = completed_samples_;
  t.duration_s = last_completion_s_ - start_s_;
  t.latencies_ms = latencies_ms_;
  if (s_.scenario == Scenario::server) t.scheduled_qps = s_.target_qps;
  t.gave_up = gave_up_;
  return t;
}

}  // namespace scalebench::infer
