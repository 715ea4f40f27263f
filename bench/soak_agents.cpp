#include "bench/soak.hpp"

#include <algorithm>
#include <thread>

#include "bench/elapsed.hpp"
#include "common/json.hpp"
#include "common/thread_priority.hpp"
#include "http/http_client.hpp"

namespace scalebench::load {

std::unique_ptr<SoakAgent> join(const Soak& s, const std::string& name, bool main_run) {
  auto a = std::make_unique<SoakAgent>();
  a->sim = register_sim_agent(s.coordinator.url(), name, s.o.gpus);
  a->main_run = main_run;
  return a;
}

namespace {
// The answer to a heartbeat: a run to take, runs to cancel.
void on_heartbeat_answer(SoakAgent& a, const Json& answer) {
  std::lock_guard lock(a.mutex);
  if (take_run(a.sim, answer)) {
    a.sent = 0;
    a.cancel = false;
  }
  if (const auto cancel = answer.find("cancel"); cancel != answer.end() && cancel->is_array())
    for (const auto& id : *cancel)
      if (id.is_number_integer() && id.get<long long>() == a.sim.run_id) a.cancel = true;
}
}  // namespace

// Heartbeats: every slot's agent once per interval, the slots spread evenly over it, from several
// threads so that one slow answer does not delay the others' schedule. Each thread goes through
// its slots in the order they fall due: an agent is never late behind another's (agents that
// joined were once sent at the end of each interval, all at once, and their burst grew with the
// churn). An agent that left sends none.
void heartbeat_thread(Soak& s, std::size_t t, std::size_t threads) {
  const std::size_t slots = s.slots.size();
  const double step = s.o.heartbeat_interval_s / static_cast<double>(slots);
  for (long long tick = 0;; ++tick) {
    for (std::size_t j = t; j < slots; j += threads) {
      const auto due =
          s.t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                     static_cast<double>(tick) * s.o.heartbeat_interval_s + static_cast<double>(j) * step));
      if (due >= s.t_end || !s.on()) return;
      std::this_thread::sleep_until(due);
      SoakAgent* seated = s.slots[j].load(std::memory_order_acquire);
      if (!seated || seated->leaving) continue;
      SoakAgent& a = *seated;
      std::string body;
      {
        std::lock_guard lock(a.mutex);
        body = heartbeat_body(a.sim);
      }
      const auto start = Clock::now();
      try {
        HttpResponse r = a.sim.client->request("POST", a.sim.heartbeat_path, body);
        s.windows.heartbeat(s.now_s(), ms_since(start));
        if (r.status == 200)
          on_heartbeat_answer(a, Json::parse(r.body));
        else if (r.status >= 500)
          s.windows.unreachable(s.now_s());
        else
          s.windows.error(s.now_s(),
                          "heartbeat of " + a.sim.name + ": HTTP " + std::to_string(r.status) + " " + r.body);
      } catch (const UnreachableError&) {
        s.windows.unreachable(s.now_s());
      } catch (const std::exception& e) {
        s.windows.error(s.now_s(), e.what());
      }
    }
  }
}

namespace {
// The outbox's back-off: 100 ms doubling to 2 s while the coordinator does not answer.
struct Backoff {
  std::chrono::milliseconds wait{0};
  void failed() {
    wait = std::min<std::chrono::milliseconds>(std::chrono::seconds(2),
                                               wait.count() ? wait * 2 : std::chrono::milliseconds(100));
    std::this_thread::sleep_for(wait);
  }
  void delivered() { wait = std::chrono::milliseconds(0); }
};

enum class Delivery { delivered, refused, unreachable };

// What one call of an agent's outbox came to, into the window's figures.
Delivery classify(Soak& s, const std::string& what, const HttpResponse& r) {
  if (r.status == 200) return Delivery::delivered;
  if (r.status >= 500) {
    s.windows.unreachable(s.now_s());
    return Delivery::unreachable;
  }
  s.windows.error(s.now_s(), what + ": HTTP " + std::to_string(r.status) + " " + r.body);
  return Delivery::refused;
}

// The agent's run ends (finished as cancelled, or refused): into the ledger, the agent free.
void release_run(Soak& s, SoakAgent& a) {
  std::lock_guard lock(a.mutex);
  s.ledger.note(a.sim.run_id, a.sim.attempt, a.sim.next_seq, a.sent);
  a.sim.run_id = 0;
  a.cancel = false;
  a.main_run = false;
}

// One call of an agent's outbox: its run's end when it is cancelled, else its next batch of
// records (or the last one again, when its answer did not come).
Delivery deliver_one(Soak& s, SoakAgent& a, std::string* payload) {
  long long run_id, first;
  int attempt;
  bool cancel;
  {
    std::lock_guard lock(a.mutex);
    run_id = a.sim.run_id;
    attempt = a.sim.attempt;
    first = a.sim.next_seq;
    cancel = a.cancel;
    if (!cancel) a.sent = std::max(a.sent, first + s.o.batch);
  }
  const std::string run_path = "/api/v1/runs/" + std::to_string(run_id);
  try {
    if (cancel) {
      const Json end{{"run_id", run_id}, {"attempt", attempt}, {"status", "cancelled"}, {"reason", "cancelled"}};
      const Delivery d = classify(s, "finish of run " + std::to_string(run_id),
                                  a.sim.client->request("POST", run_path + "/finish", end.dump()));
      if (d != Delivery::unreachable) release_run(s, a);
      return d;
    }
    s.texts.batch(run_id, attempt, first, s.o.batch, payload);
    const auto start = Clock::now();
    HttpResponse r = a.sim.client->request("POST", run_path + "/records", *payload);
    const Delivery d = classify(s, "records of run " + std::to_string(run_id), r);
    if (d == Delivery::delivered) {
      s.windows.post(s.now_s(), ms_since(start), s.o.batch);
      std::lock_guard lock(a.mutex);
      a.sim.next_seq = first + s.o.batch;
    } else if (d == Delivery::refused) {
      release_run(s, a);  // the run ended under it (lost, cancelled): nothing more to send
    }
    return d;
  } catch (const UnreachableError&) {
    s.windows.unreachable(s.now_s());
    return Delivery::unreachable;
  } catch (const std::exception& e) {
    s.windows.error(s.now_s(), e.what());
    return Delivery::refused;
  }
}

bool has_work(SoakAgent& a) {
  if (a.leaving) return false;
  std::lock_guard lock(a.mutex);
  return a.sim.run_id > 0;
}
}  // namespace

// Records: each thread takes its share of the agents in turn, at its share of --record-rate. An
// agent's calls go one at a time and in order, as through its outbox: a batch whose answer did
// not come is sent again, the same seqs, before anything after it.
void records_thread(Soak& s, std::size_t t, std::size_t threads) {
  // Far below the heartbeat threads on this core (nice 19): a heartbeat's answer is timed when it
  // arrives, not after a batch being built here. The played cluster stands for 2,000 hosts, where
  // no agent's heartbeat waits for another's records; at nice 5 a waking heartbeat thread could
  // still wait out a records thread's slice, and that wait grew with the soak's own CPU.
  lower_this_thread_priority(19);
  const auto per_batch = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(static_cast<double>(s.o.batch) * static_cast<double>(threads) / s.o.record_rate));
  auto due = s.t0;
  std::string payload;
  Backoff backoff;
  // This thread's agents are those of index t modulo `threads`: no other thread posts for them,
  // so each agent's calls stay in order.
  std::size_t i = t;
  while (s.on()) {
    const std::size_t n = s.count.load(std::memory_order_acquire);
    const std::size_t mine = n > t ? (n - t + threads - 1) / threads : 0;
    auto next = [&] { i = i + threads < n ? i + threads : t; };
    if (i >= n) i = t;
    std::size_t scanned = 0;
    for (; scanned < mine && !has_work(*s.agents[i]); ++scanned) next();
    if (scanned >= mine) {  // none of them holds a run now
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    // After an outage the schedule starts again from now: no burst makes up for it.
    due = std::max(due + per_batch, Clock::now() - std::chrono::seconds(1));
    std::this_thread::sleep_until(due);
    if (deliver_one(s, *s.agents[i], &payload) == Delivery::unreachable) {
      backoff.failed();  // the same agent again: its outbox holds the batch
    } else {
      backoff.delivered();
      next();
    }
  }
}

// The agents whose last batch had no answer when the soak ended: sent again until answered
// (30 s at most), as an agent's outbox would, so that in doubt is only what a restart lost.
void drain(Soak& s) {
  std::string payload;
  const auto until = Clock::now() + std::chrono::seconds(30);
  for (std::size_t i = 0; i < s.count.load(); ++i) {
    SoakAgent& a = *s.agents[i];
    while (has_work(a) && Clock::now() < until && !interrupted()) {
      {
        std::lock_guard lock(a.mutex);
        if (a.sent <= a.sim.next_seq) break;
      }
      if (deliver_one(s, a, &payload) == Delivery::unreachable)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::lock_guard lock(a.mutex);
    if (a.sim.run_id > 0) s.ledger.note(a.sim.run_id, a.sim.attempt, a.sim.next_seq, a.sent);
  }
}

}  // namespace scalebench::load
