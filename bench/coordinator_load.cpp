// scalebench-coordinator-load: plays a cluster of agents against a real coordinator over loopback
// HTTP and prints what the coordinator sustained: set-up (registration, submission, the first
// heartbeats handing the queue out), result records ingested per second (counted in its store
// afterwards), heartbeat latency, /metrics latency and size, and its memory over time. Given
// several cluster sizes (--agents 1000,2000,4000) it runs each against a fresh coordinator and
// prints the cost curve. A benchmark program, not a test: it prints figures and judges nothing.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/coordinator_process.hpp"
#include "bench/elapsed.hpp"
#include "bench/load_options.hpp"
#include "bench/process_probe.hpp"
#include "bench/record_texts.hpp"
#include "bench/sim_agent.hpp"
#include "bench/store_count.hpp"
#include "bench/temp_folder.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "common/json.hpp"
#include "common/thread_priority.hpp"
#include "http/http_client.hpp"

namespace {
using namespace scalebench;
using namespace scalebench::load;
using Clock = std::chrono::steady_clock;

struct SetUp {
  double register_s = 0, submit_s = 0, assign_s = 0;
  std::vector<double> first_heartbeat_ms;
  int busy_answers = 0;
};

std::vector<SimAgent> register_agents(const CoordinatorProcess& t, int count, int gpus, SetUp* s) {
  std::vector<SimAgent> agents;
  agents.reserve(static_cast<std::size_t>(count));
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    throw_if_interrupted();
    agents.push_back(register_sim_agent(t.url(), sim_agent_name("load", i), gpus));
  }
  s->register_s = ms_since(start) / 1000;
  return agents;
}

// One experiment with a run for each agent, then each agent's first heartbeat takes one: the
// queue handed out one run at a time. Their next heartbeat (listing the run) confirms it.
void submit_and_assign(const CoordinatorProcess& t, std::vector<SimAgent>& agents, int gpus, SetUp* s) {
  auto start = Clock::now();
  submit_runs(t.url(), "load", static_cast<long long>(agents.size()), gpus);
  s->submit_s = ms_since(start) / 1000;
  start = Clock::now();
  for (auto& a : agents) {
    throw_if_interrupted();
    take_first_run(a, &s->first_heartbeat_ms, &s->busy_answers);
  }
  s->assign_s = ms_since(start) / 1000;
}

// What one load window measured.
struct Load {
  double elapsed_s = 0, stream_s = 0, cpu_s = -1, self_cpu_s = 0;
  long long posts = 0, acknowledged = 0, errors = 0, late = 0;
  std::vector<double> heartbeat_ms, post_ms, metrics_ms;
  std::size_t metrics_bytes = 0;
  std::vector<std::pair<double, long>> rss;  // seconds, KiB
  std::string first_error;
};

// Shared by the load's threads.
struct LoadState {
  std::mutex mu;
  Load* out;
  std::atomic<long long> acknowledged{0}, posts{0}, errors{0}, late{0};
  std::atomic<Clock::rep> last_answer{0};
  void error(const std::string& e) {
    ++errors;
    std::lock_guard lock(mu);
    if (out->first_error.empty()) out->first_error = e;
  }
};

// Until the window's end or an interrupt (SIGINT, SIGTERM).
bool in_window(Clock::time_point t_end) { return Clock::now() < t_end && !interrupted(); }

// Heartbeats: every agent once per interval, spread evenly over it, from 16 threads so that one
// slow answer does not delay the others' schedule.
void heartbeat_thread(const Options& o, std::vector<SimAgent>& agents, int t, int threads, Clock::time_point t0,
                      Clock::time_point t_end, LoadState* s) {
  std::vector<double> mine;
  const int n = static_cast<int>(agents.size());
  const double step = o.heartbeat_interval_s / n;
  for (long long tick = 0;; ++tick) {
    for (int i = t; i < n; i += threads) {
      auto due = t0 + std::chrono::duration<double>(static_cast<double>(tick) * o.heartbeat_interval_s + i * step);
      if (due >= t_end || !in_window(t_end)) goto done;  // late ones are dropped, not sent after the end
      if (Clock::now() > due + std::chrono::duration<double>(o.heartbeat_interval_s)) ++s->late;
      std::this_thread::sleep_until(due);
      const auto& a = agents[static_cast<std::size_t>(i)];
      const auto start = Clock::now();
      try {
        HttpResponse r = a.client->request("POST", a.heartbeat_path, heartbeat_body(a));
        mine.push_back(ms_since(start));
        if (r.status != 200) s->error("heartbeat HTTP " + std::to_string(r.status) + ": " + r.body);
      } catch (const std::exception& e) {
        s->error(e.what());
      }
    }
  }
done:
  std::lock_guard lock(s->mu);
  s->out->heartbeat_ms.insert(s->out->heartbeat_ms.end(), mine.begin(), mine.end());
}

// Records: each stream posts batches for its share of the agents in turn, as fast as the
// coordinator answers (each agent's seq numbers go up as its outbox's do).
void records_thread(const Options& o, const RecordTexts& texts, std::vector<SimAgent>& agents, int t,
                    Clock::time_point t_end, LoadState* s) {
  // Below the heartbeat threads on this core, as the coordinator's record threads are on its own:
  // a heartbeat's answer is timed when it arrives, not after a batch being built here.
  lower_this_thread_priority(5);
  std::vector<double> mine;
  std::string payload;
  const int n = static_cast<int>(agents.size());
  for (int i = t; in_window(t_end); i = i + o.record_threads < n ? i + o.record_threads : t) {
    auto& a = agents[static_cast<std::size_t>(i)];
    texts.batch(a.run_id, a.attempt, a.next_seq, o.batch, &payload);
    const auto start = Clock::now();
    try {
      HttpResponse r = a.client->request("POST", "/api/v1/runs/" + std::to_string(a.run_id) + "/records", payload);
      const auto now = Clock::now();
      mine.push_back(ms_since(start));
      ++s->posts;
      Clock::rep seen = s->last_answer.load();
      while (seen < now.time_since_epoch().count() &&
             !s->last_answer.compare_exchange_weak(seen, now.time_since_epoch().count())) {
      }
      if (r.status == 200) {
        s->acknowledged += Json::parse(r.body).value("stored", 0LL);
        a.next_seq += o.batch;
      } else {
        s->error("records HTTP " + std::to_string(r.status) + ": " + r.body);
      }
    } catch (const std::exception& e) {
      s->error(e.what());
    }
  }
  std::lock_guard lock(s->mu);
  s->out->post_ms.insert(s->out->post_ms.end(), mine.begin(), mine.end());
}

// /metrics every 2 s (on a kept connection, as Prometheus scrapes) and the coordinator's RSS every
// second.
void sampler_thread(const CoordinatorProcess& target, Clock::time_point t0, Clock::time_point t_end, LoadState* s) {
  HttpClient scraper(target.url());
  for (int k = 0; in_window(t_end); ++k) {
    if (k % 2 == 0) {
      const auto start = Clock::now();
      try {
        HttpResponse r = scraper.request("GET", "/metrics");
        const double ms = ms_since(start);
        if (r.status != 200) s->error("/metrics HTTP " + std::to_string(r.status));
        std::lock_guard lock(s->mu);
        s->out->metrics_ms.push_back(ms);
        s->out->metrics_bytes = std::max(s->out->metrics_bytes, r.body.size());
      } catch (const std::exception& e) {
        s->error(e.what());
      }
    }
    if (target.pid() > 0) {
      std::lock_guard lock(s->mu);
      s->out->rss.emplace_back(std::chrono::duration<double>(Clock::now() - t0).count(), rss_kib(target.pid()));
    }
    std::this_thread::sleep_until(t0 + std::chrono::seconds(k + 1));
  }
}

Load run_load(const Options& o, const CoordinatorProcess& target, std::vector<SimAgent>& agents) {
  Load out;
  LoadState s;
  s.out = &out;
  const RecordTexts texts(o.gpus);
  const pid_t pid = target.pid();
  const double cpu0 = pid > 0 ? cpu_seconds(pid) : -1;
  const double self_cpu0 = cpu_seconds(getpid());
  const auto t0 = Clock::now();
  const Clock::time_point t_end =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));
  std::vector<std::thread> threads;
  const int hb_threads = std::min<int>(16, static_cast<int>(agents.size()));
  for (int t = 0; t < hb_threads; ++t)
    threads.emplace_back(heartbeat_thread, std::cref(o), std::ref(agents), t, hb_threads, t0, t_end, &s);
  for (int t = 0; t < o.record_threads; ++t)
    threads.emplace_back(records_thread, std::cref(o), std::cref(texts), std::ref(agents), t, t_end, &s);
  threads.emplace_back(sampler_thread, std::cref(target), t0, t_end, &s);
  for (auto& th : threads) th.join();
  out.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
  // The ingest rate is over the streaming window only: from the start to the last answer.
  out.stream_s = std::chrono::duration<double>(Clock::time_point(Clock::duration(s.last_answer.load())) - t0).count();
  out.cpu_s = pid > 0 ? cpu_seconds(pid) - cpu0 : -1;
  out.self_cpu_s = cpu_seconds(getpid()) - self_cpu0;
  out.posts = s.posts;
  out.acknowledged = s.acknowledged;
  out.errors = s.errors;
  out.late = s.late;
  return out;
}

// One cluster size's figures, for its report and the cost curve.
struct Scale {
  int agents = 0;
  SetUp setup;
  Load load;
  long long stored = 0;
  double load_before = 0, load_after = 0;
  long max_rss_kib = -1;
};

void print_scale(const Options& o, const Scale& r) {
  const Load& l = r.load;
  std::printf(
      "registered %d agents in %.2f s (%.0f/s); submitted %d runs in %.2f s; their first heartbeats took them in "
      "%.2f s (p50 %.2f ms, max %.2f ms each; %d busy answers)\n",
      r.agents, r.setup.register_s, r.agents / r.setup.register_s, r.agents, r.setup.submit_s, r.setup.assign_s,
      percentile(r.setup.first_heartbeat_ms, 0.5), percentile(r.setup.first_heartbeat_ms, 1.0), r.setup.busy_answers);
  std::printf("%.1f s of load: %lld record POSTs, %lld records acknowledged, %lld in the store, %lld errors\n",
              l.elapsed_s, l.posts, l.acknowledged, r.stored, l.errors);
  if (!l.first_error.empty()) std::printf("first error: %s\n", l.first_error.c_str());
  std::printf(
      "ingest:    %.0f records/s stored over %.1f s of streaming (acknowledged %.0f/s); POST of %d records p50 %.2f "
      "ms, p99 %.2f ms\n",
      static_cast<double>(r.stored) / l.stream_s, l.stream_s, static_cast<double>(l.acknowledged) / l.stream_s, o.batch,
      percentile(l.post_ms, 0.5), percentile(l.post_ms, 0.99));
  std::printf("heartbeat: %zu answered (%.0f/s; %lld sent over a period late), p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              l.heartbeat_ms.size(), static_cast<double>(l.heartbeat_ms.size()) / l.elapsed_s, l.late,
              percentile(l.heartbeat_ms, 0.5), percentile(l.heartbeat_ms, 0.99), percentile(l.heartbeat_ms, 1.0));
  // Both sides' CPU, one beside the other: the side near a whole core of its own is the limit.
  if (l.cpu_s > 0)
    std::printf(
        "CPU:       coordinator %.2f cores busy (%.2f s over %.1f s; %.0f records stored per CPU-second, all its "
        "work), this client %.2f cores busy (%.2f s: playing the agents)\n",
        l.cpu_s / l.elapsed_s, l.cpu_s, l.elapsed_s, static_cast<double>(r.stored) / l.cpu_s,
        l.self_cpu_s / l.elapsed_s, l.self_cpu_s);
  else
    std::printf("CPU:       this client %.2f cores busy (%.2f s over %.1f s); the coordinator's is unknown\n",
                l.self_cpu_s / l.elapsed_s, l.self_cpu_s, l.elapsed_s);
  std::printf("/metrics:  %zu scrapes, p50 %.1f ms, max %.1f ms, largest %zu bytes\n", l.metrics_ms.size(),
              percentile(l.metrics_ms, 0.5), percentile(l.metrics_ms, 1.0), l.metrics_bytes);
  if (!l.rss.empty()) {
    std::printf("coordinator RSS (MiB) by second:");
    for (std::size_t i = 0; i < l.rss.size(); ++i)
      if (i % 5 == 0 || i + 1 == l.rss.size()) std::printf(" %.0fs:%.1f", l.rss[i].first, l.rss[i].second / 1024.0);
    std::printf("\n");
  }
  std::printf("load average (1 min) before %.2f, after %.2f\n", r.load_before, r.load_after);
  if (l.acknowledged > r.stored)
    std::printf("ERROR: %lld acknowledged records are missing from the store\n", l.acknowledged - r.stored);
}

// The cost curve: one line per size, the goals' figures side by side.
void print_curve(const std::vector<Scale>& all, int gpus) {
  std::printf("\ncost curve (x %d GPUs)\n%7s %9s %9s %11s %12s %11s %10s %11s %9s %9s %10s %12s\n", gpus, "agents",
              "submit_s", "assign_s", "records/s", "hb_p99_ms", "hb_max_ms", "metrics_ms", "metrics_max", "rss_MiB",
              "coord_cpu", "client_cpu", "load_avg");
  for (const auto& r : all)
    std::printf("%7d %9.2f %9.2f %11.0f %12.2f %11.2f %10.1f %11.1f %9.1f %9.2f %10.2f %6.2f-%.2f\n", r.agents,
                r.setup.submit_s, r.setup.assign_s, static_cast<double>(r.stored) / r.load.stream_s,
                percentile(r.load.heartbeat_ms, 0.99), percentile(r.load.heartbeat_ms, 1.0),
                percentile(r.load.metrics_ms, 0.5), percentile(r.load.metrics_ms, 1.0),
                static_cast<double>(r.max_rss_kib) / 1024.0, r.load.cpu_s / r.load.elapsed_s,
                r.load.self_cpu_s / r.load.elapsed_s, r.load_before, r.load_after);
}

Scale run_scale(const Options& o, int agents, const TempFolder& folder) {
  Scale r;
  r.agents = agents;
  r.load_before = load_average();
  std::unique_ptr<CoordinatorProcess> target;
  if (o.url.empty()) {
    CoordinatorConfig c;
    c.folder = folder.path() / ("agents-" + std::to_string(agents));
    std::filesystem::create_directories(c.folder);
    c.db = o.db.empty() ? (c.folder / "load.db").string() : o.db;
    c.heartbeat_interval_s = o.heartbeat_interval_s;
    c.threads = o.threads;
    c.cpus = o.coordinator_cpus;
    c.args = o.coordinator_args;
    target = std::make_unique<CoordinatorProcess>(c);
  } else {
    target = std::make_unique<CoordinatorProcess>(o.url, o.pid);
  }
  throw_if_interrupted();
  std::printf("\n== %d agents x %d GPUs: coordinator at %s, pid %d%s, batches of %d records, %d record streams\n",
              agents, o.gpus, target->url().c_str(), target->pid(),
              o.coordinator_cpus.empty() ? "" : (" on CPUs " + o.coordinator_cpus).c_str(), o.batch, o.record_threads);
  std::vector<SimAgent> sim = register_agents(*target, agents, o.gpus, &r.setup);
  submit_and_assign(*target, sim, o.gpus, &r.setup);
  r.load = run_load(o, *target, sim);
  throw_if_interrupted();
  r.stored = count_stored(target->db(), target->url());
  for (const auto& [t, kib] : r.load.rss) r.max_rss_kib = std::max(r.max_rss_kib, kib);
  r.load_after = load_average();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it comes, into a file too
  Options o;
  if (auto rc = parse_options(argc, argv, &o)) return *rc;
  // SIGINT and SIGTERM are only noted: the bench stops at its next step, and its coordinator and
  // folder go on the way out, as on any other.
  catch_interrupts();
  try {
    // One kept connection per simulated agent here, one per client in the coordinator (our
    // child): room for both.
    rlimit nofile{};
    getrlimit(RLIMIT_NOFILE, &nofile);
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
    TempFolder folder(o.keep, "scalebench-load");  // removed on every way out of this scope
    std::vector<Scale> all;
    bool failed = false;
    for (int n : o.agents) {
      all.push_back(run_scale(o, n, folder));
      print_scale(o, all.back());
      failed = failed || all.back().load.errors > 0 || all.back().load.acknowledged > all.back().stored;
    }
    if (all.size() > 1) print_curve(all, o.gpus);
    throw_if_interrupted();
    return failed ? 1 : 0;
  } catch (const Interrupted&) {
    const int sig = interrupt_signal();
    std::cerr << "scalebench-coordinator-load: interrupted by " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
              << "; stopped its coordinator" << (o.keep ? "" : " and removed its temporary folder") << "\n";
    return 128 + sig;  // as a shell reports a program the signal ended
  } catch (const std::exception& e) {
    std::cerr << "scalebench-coordinator-load: " << e.what() << "\n";
    return 1;
  }
}
