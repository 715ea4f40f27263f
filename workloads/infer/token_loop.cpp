#include "workloads/infer/token_loop.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "workloads/infer/loadgen_loop.hpp"
#include "workloads/infer/search_give_up.hpp"

namespace scalebench::infer {

long long Iteration::prompt_tokens() const {
  long long n = 0;
  for (const Admission& a : admit) n += a.shape.prompt_tokens;
  return n;
}

TokenLoop::TokenLoop(const TokenLoopSettings& s) : s_(s), slots_(static_cast<std::size_t>(std::max(s.slots, 0))) {
  if (s.scenario != Scenario::offline && s.scenario != Scenario::server)
    throw Error("text generation runs the offline and server scenarios, not " + scenario_name(s.scenario));
  if (s.slots < 1) throw Error("slots must be at least 1");
  if (s.max_prefill_tokens < 0) throw Error("max_prefill_tokens must be 0 (no limit) or more");
  if (s.shapes.empty()) throw Error("no query shapes");
  for (const QueryShape& q : s.shapes)
    if (q.prompt_tokens < 1 || q.output_tokens < 1)
      throw Error("a query needs a prompt and asks for a token at least (got " + std::to_string(q.prompt_tokens) +
                  " and " + std::to_string(q.output_tokens) + ")");
  if (s.scenario == Scenario::offline) {
    if (s.offline_queries < 1) throw Error("Offline: no queries to issue");
    total_queries_ = s.offline_queries;
  } else {
    arrivals_ = server_schedule(s.target_qps, s.min_duration_s, s.min_queries, s.seed);
    total_queries_ = arrivals_.size();
    tally_.scheduled_qps = arrivals_.back() > 0 ? static_cast<double>(arrivals_.size()) / arrivals_.back() : 0;
  }
}

QueryShape TokenLoop::shape_of(std::uint64_t query) const { return s_.shapes[query % s_.shapes.size()]; }

void TokenLoop::issue_due(double now_s) {
  if (s_.scenario == Scenario::offline) {
    for (; next_query_ < total_queries_; ++next_query_) waiting_.push_back({next_query_, start_s_});
    return;
  }
  for (; next_arrival_ < arrivals_.size() && start_s_ + arrivals_[next_arrival_] <= now_s; ++next_arrival_)
    waiting_.push_back({next_query_++, start_s_ + arrivals_[next_arrival_]});
}

Iteration TokenLoop::next_iteration() {
  Iteration it;
  for (std::size_t k = 0; k < slots_.size(); ++k)
    if (slots_[k]) it.decode.push_back(static_cast<int>(k));
  long long prompt = 0;
  for (std::size_t k = 0; k < slots_.size() && !waiting_.empty(); ++k) {
    if (slots_[k]) continue;
    const Waiting w = waiting_.front();
    const QueryShape shape = shape_of(w.query);
    if (s_.max_prefill_tokens > 0 && !it.admit.empty() && prompt + shape.prompt_tokens > s_.max_prefill_tokens) break;
    waiting_.pop_front();
    prompt += shape.prompt_tokens;
    slots_[k] = Active{w.query, shape, w.issued_s, 0, 0, true};
    it.admit.push_back({static_cast<int>(k), w.query, shape});
  }
  return it;
}

TokenStep TokenLoop::advance(double now_s) {
  TokenStep step;
  if (!started_) {
    started_ = true;
    start_s_ = last_token_s_ = now_s;
  }
  issue_due(now_s);
  if (in_flight_) return step;
  if (!tally_.gave_up.empty() || give_up(now_s)) {
    step.done = true;
    return step;
  }
  Iteration it = next_iteration();
  if (!it.admit.empty() || !it.decode.empty()) {
    in_flight_ = true;
    ++tally_.iterations;
    tally_.decode_rows += it.decode.size();
    step.run = std::move(it);
    return step;
  }
  if (next_arrival_ < arrivals_.size())
    step.wake_s = start_s_ + arrivals_[next_arrival_];
  else
    step.done = waiting_.empty();
  return step;
}

bool TokenLoop::give_up(double now_s) {
  if (s_.give_up_ttft_ms <= 0 || s_.scenario != Scenario::server) return false;
  const double bound_s = s_.give_up_ttft_ms / 1e3;
  std::uint64_t waiting_late = 0;  // first come, first served: the late ones are at the front
  for (const Waiting& w : waiting_) {
    if (now_s - w.issued_s <= bound_s) break;
    ++waiting_late;
  }
  if (late_ + waiting_late <= late_queries_allowed(s_.give_up_percentile, arrivals_.size())) return false;
  tally_.gave_up = give_up_reason(now_s - start_s_, late_ + waiting_late, arrivals_.size(), "queries' first tokens",
                                  s_.give_up_ttft_ms, s_.give_up_percentile);
  next_arrival_ = arrivals_.size();
  waiting_.clear();
  for (auto& slot : slots_) slot.reset();
  last_token_s_ = std::max(last_token_s_, now_s);
  return true;
}

void TokenLoop::finish(Active& a, double now_s) {
  tally_.ttft_ms.push_back((a.first_token_s - a.issued_s) * 1e3);
  tally_.latency_ms.push_back((now_s - a.issued_s) * 1e3);
  if (a.shape.output_tokens > 1)
    tally_.tpot_ms.push_back((now_s - a.first_token_s) * 1e3 / (a.shape.output_tokens - 1));
  ++tally_.queries;
  tally_.output_tokens += static_cast<std::uint64_t>(a.shape.output_tokens);
  tally_.prompt_tokens += static_cast<std::uint64_t>(a.shape.prompt_tokens);
}

void TokenLoop::complete(double now_s) {
  if (!in_flight_) throw Error("token loop: a completion with no iteration in flight");
  in_flight_ = false;
  last_token_s_ = now_s;
  for (auto& slot : slots_) {
    if (!slot) continue;
    Active& a = *slot;
    if (a.admitted_now) {
      a.admitted_now = false;
      a.first_token_s = now_s;
      if (s_.give_up_ttft_ms > 0 && (now_s - a.issued_s) * 1e3 > s_.give_up_ttft_ms) ++late_;
    }
    if (++a.produced == a.shape.output_tokens) {
      finish(a, now_s);
      slot.reset();
    }
  }
}

TokenTally TokenLoop::tally() const {
  TokenTally t = tally_;
  t.duration_s = last_token_s_ - start_s_;
  return t;
}

}  // namespace scalebench::infer
