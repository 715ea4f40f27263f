// scalebench-coordinator-soak: plays a changing cluster against a real coordinator for a long time,
// as a cluster runs for months: agents stream records and heartbeat; every window some agents stop
// (and are declared lost) and as many new ones register; a study is submitted and cancelled in
// each window; the coordinator is ended (SIGKILL by default: a crash) in the middle and started
// again on the same store while the agents ride through it as real ones do (heartbeats go on at
// their interval, records are resent until acknowledged, with the outbox's back-off). It prints
// each window's figures, compares the first minutes with the last (memory, heartbeat p99,
// records/s: none 10% worse), and checks in the store that each record sent is there exactly once.
// A benchmark program, not a test: it runs for 30 minutes by default.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/elapsed.hpp"
#include "bench/process_probe.hpp"
#include "bench/soak.hpp"
#include "bench/state_times.hpp"
#include "bench/temp_folder.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "common/json.hpp"
#include "http/http_client.hpp"

namespace {
using namespace scalebench;
using namespace scalebench::load;

std::string clock_time(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%H:%M:%S UTC", &tm);
  return out;
}

std::string minutes(double s) {
  char out[32];
  std::snprintf(out, sizeof out, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return out;
}

void print_window(const Soak& s, std::size_t w, std::size_t windows, std::size_t agents_on, const std::string& state) {
  const Window f = s.windows.at(w);
  const double left_s = std::max(0.0, std::chrono::duration<double>(s.t_end - Clock::now()).count());
  std::printf(
      "[%zu/%zu] %s-%s: agents %zu (left %d, joined %d), RSS %.1f MiB, heartbeat p99 %.2f ms (median %.2f, %zu), "
      "records/s %.0f, POST p99 %.2f ms, coordinator CPU %.0f%%, soak CPU %.0f%%, waited for a CPU: coordinator %.0f "
      "ms, soak %.0f ms, unreachable %lld, errors %lld, load average %.2f; %s left, ends at %s\n"
      "        %s\n",
      w + 1, windows, minutes(static_cast<double>(w) * s.o.window_s).c_str(),
      minutes(static_cast<double>(w + 1) * s.o.window_s).c_str(), agents_on, f.left, f.joined,
      static_cast<double>(f.rss_kib) / 1024.0, percentile(f.heartbeat_ms, 0.99), percentile(f.heartbeat_ms, 0.5),
      f.heartbeat_ms.size(), static_cast<double>(f.records) / s.o.window_s, percentile(f.post_ms, 0.99),
      100 * f.cpu_s / s.o.window_s, 100 * f.own_cpu_s / s.o.window_s, 1000 * f.wait_s, 1000 * f.own_wait_s,
      f.unreachable, f.errors, load_average(), minutes(left_s).c_str(),
      clock_time(std::chrono::system_clock::now() +
                 std::chrono::duration_cast<std::chrono::system_clock::duration>(s.t_end - Clock::now()))
          .c_str(),
      state.empty() ? "state lock: no reading" : ("state lock: " + state).c_str());
}

// The main thread's state while the agents play.
struct Director {
  int next_leaver = 0, left = 0, joined = 0, studies = 0, cancelled = 0;
  std::vector<std::size_t> free_slots;  // heartbeat slots of agents that left, for those that join
  long long open_study = 0;
  bool restarted = false;
  double restart_down_s = 0;
  UsageReading coordinator;                 // the coordinator at the last second's sample, of the process then running
  UsageReading own = read_usage(getpid());  // the soak itself, from the timed part's start
  StateTimes state;                         // the state-lock times at the last window's end
};

// Some agents with a main run stop (no more heartbeats or records: declared lost after the
// coordinator's timeout), and as many new ones register in their heartbeat slots (they take the
// studies' runs): the cluster keeps its size. A slot a failed registration left free is taken at
// the next churn.
void churn(Soak& s, Director* d) {
  int left = 0;
  for (; left < s.o.churn && d->next_leaver < s.o.agents; ++d->next_leaver) {
    SoakAgent& a = *s.agents[static_cast<std::size_t>(d->next_leaver)];
    if (!a.leaving && a.main_run) {
      a.leaving = true;
      d->free_slots.push_back(a.slot);
      ++left;
    }
  }
  int joined = 0;
  while (!d->free_slots.empty() && !interrupted()) {
    try {
      s.add(join(s, sim_agent_name("soak-joined", d->joined + 1), false), d->free_slots.back());
    } catch (const UnreachableError&) {
      s.windows.unreachable(s.now_s());
      break;
    }
    d->free_slots.pop_back();
    ++d->joined;
    ++joined;
  }
  d->left += left;
  s.windows.churn(s.now_s(), left, joined);
}

void cancel_study(Soak& s, long long id) {
  HttpClient user(s.coordinator.url(), std::chrono::seconds(60));
  HttpResponse r = user.request("POST", "/api/v1/experiments/" + std::to_string(id) + "/cancel", "");
  if (r.status != 200)
    s.windows.error(s.now_s(),
                    "cancel of study " + std::to_string(id) + ": HTTP " + std::to_string(r.status) + " " + r.body);
}

// GET /metrics, as Prometheus does: its text, or "" when it did not answer.
std::string scrape_metrics(Soak& s, const HttpClient& scraper) {
  try {
    HttpResponse r = scraper.request("GET", "/metrics");
    if (r.status == 200) return r.body;
    s.windows.error(s.now_s(), "/metrics: HTTP " + std::to_string(r.status));
  } catch (const UnreachableError&) {
    s.windows.unreachable(s.now_s());
  }
  return "";
}

// The CPU seconds the coordinator and the soak itself used since the last sample, and the seconds
// their threads waited for a CPU, into this second's window; a new coordinator (the restart)
// counts from its start. The soak's own figures tell whether a slower answer was the client's: it
// plays the cluster on a core of its own.
void sample_usage(Soak& s, Director* d) {
  const Usage coordinator = usage_since(&d->coordinator, s.coordinator.pid());
  const Usage own = usage_since(&d->own, getpid());
  s.windows.usage(s.now_s(), coordinator.cpu_s, coordinator.wait_s, own.cpu_s, own.wait_s);
}

// The state lock's times over the window that ends now.
std::string window_state(Soak& s, const HttpClient& scraper, Director* d) {
  const std::string text = scrape_metrics(s, scraper);
  if (text.empty()) return "";
  StateTimes now = parse_state_times(text);
  const StateTimes window = state_times_since(now, d->state);
  d->state = std::move(now);
  return describe_state_times(window, s.o.window_s);
}

// The main thread while the agents play: each second the coordinator's memory; each window its
// churn and its figures; in each window a study submitted (at a quarter) and cancelled (at three
// quarters); /metrics scraped every 15 s as Prometheus does; the restart in the middle.
void direct(Soak& s, std::size_t windows, Director* d) {
  HttpClient scraper(s.coordinator.url());
  const int study_runs = std::max(2, 2 * s.o.churn);
  const int restart_sig = s.o.restart_signal == "TERM" ? SIGTERM : SIGKILL;
  for (long k = 1; s.on(); ++k) {
    std::this_thread::sleep_until(s.t0 + std::chrono::seconds(k));
    if (!s.on()) break;
    const double now = s.now_s();
    if (s.o.restart_signal != "NONE" && !d->restarted && now >= s.duration_s / 2) {
      d->restarted = true;
      const auto down = Clock::now();
      s.coordinator.restart(restart_sig);
      d->restart_down_s = ms_since(down) / 1000;
      std::printf(
          "restarted the coordinator at %s (SIG%s, then started on the same store): %.2f s without it; pid %d\n",
          minutes(now).c_str(), s.o.restart_signal.c_str(), d->restart_down_s, s.coordinator.pid());
      if (interrupted()) break;
    }
    s.windows.rss(s.now_s(), rss_kib(s.coordinator.pid()));
    sample_usage(s, d);
    if (k % 15 == 0) scrape_metrics(s, scraper);
    const double in_window = std::fmod(now, s.o.window_s);
    try {
      if (d->open_study == 0 && in_window >= s.o.window_s / 4 && in_window < s.o.window_s / 2) {
        d->open_study = submit_runs(s.coordinator.url(), "soak-study", study_runs, s.o.gpus);
        ++d->studies;
      } else if (d->open_study != 0 && in_window >= 3 * s.o.window_s / 4) {
        cancel_study(s, d->open_study);
        d->open_study = 0;
        ++d->cancelled;
      }
    } catch (const UnreachableError&) {
      s.windows.unreachable(s.now_s());
    } catch (const std::exception& e) {
      s.windows.error(s.now_s(), e.what());
    }
    const auto w = static_cast<std::size_t>(now / s.o.window_s);
    if (w >= 1 && static_cast<std::size_t>((now - 1) / s.o.window_s) < w && w < windows) {
      std::size_t on = 0;
      for (std::size_t i = 0; i < s.count.load(); ++i) on += !s.agents[i]->leaving;
      print_window(s, w - 1, windows, on, window_state(s, scraper, d));
      churn(s, d);
    }
  }
}

// How long the soak runs in whole windows, and how many windows at each end are compared.
struct WindowCounts {
  std::size_t windows = 1, compare = 1;
};

WindowCounts window_counts(const SoakOptions& o) {
  WindowCounts w;
  w.windows = std::max<std::size_t>(1, static_cast<std::size_t>(o.duration_s / o.window_s + 1e-9));
  w.compare = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(o.compare_s / o.window_s)));
  if (2 * w.compare > w.windows) throw Error("--compare is over half of --duration");
  return w;
}

CoordinatorConfig coordinator_config(const SoakOptions& o, const TempFolder& folder) {
  CoordinatorConfig c;
  c.folder = folder.path();
  c.db = (folder.path() / "soak.db").string();
  c.heartbeat_interval_s = o.heartbeat_interval_s;
  c.heartbeat_timeout_s = o.heartbeat_timeout_s;
  c.cpus = o.coordinator_cpus;
  c.args = o.coordinator_args;
  return c;
}

void print_plan(const Soak& s, const WindowCounts& w) {
  const SoakOptions& o = s.o;
  std::printf(
      "== soak: %d agents x %d GPUs for %s (%zu windows of %s), %.0f records/s in batches of %d, %d agents leaving "
      "and %d joining per window, a study of %d runs submitted and cancelled per window, %s; first %zu vs last %zu "
      "windows; coordinator %s, pid %d%s; load average %.2f\n",
      o.agents, o.gpus, minutes(s.duration_s).c_str(), w.windows, minutes(o.window_s).c_str(), o.record_rate, o.batch,
      o.churn, o.churn, std::max(2, 2 * o.churn),
      o.restart_signal == "NONE"
          ? "no restart"
          : ("the coordinator ended with SIG" + o.restart_signal + " at " + minutes(s.duration_s / 2)).c_str(),
      w.compare, w.compare, s.coordinator.url().c_str(), s.coordinator.pid(),
      o.coordinator_cpus.empty() ? "" : (" on CPUs " + o.coordinator_cpus).c_str(), load_average());
}

// The cluster's set-up (a run handed to each agent by its first heartbeat) before the clock
// starts: the first minutes compared are of a cluster at work, as the last are.
void set_up_cluster(Soak& s) {
  const SoakOptions& o = s.o;
  for (int i = 0; i < o.agents; ++i) {
    throw_if_interrupted();
    s.add(join(s, sim_agent_name("soak", i), true), static_cast<std::size_t>(i));
  }
  submit_runs(s.coordinator.url(), "soak", o.agents, o.gpus);
  std::vector<double> first_heartbeat_ms;
  int busy = 0;
  for (std::size_t i = 0; i < s.count.load(); ++i) {
    throw_if_interrupted();
    SoakAgent& a = *s.agents[i];
    std::lock_guard lock(a.mutex);
    take_first_run(a.sim, &first_heartbeat_ms, &busy);
  }
  std::printf("set-up: %d agents registered, each took its run in its first heartbeat (p99 %.2f ms, %d busy answers)\n",
              o.agents, percentile(first_heartbeat_ms, 0.99), busy);
}

// The timed part: the agents' threads play while the main thread directs, then each agent's last
// batch is sent again, so that the store check counts every record that was sent.
Director play(Soak& s, std::size_t windows) {
  s.t0 = Clock::now();
  s.t_end = s.t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s.duration_s));
  std::vector<std::thread> threads;
  const std::size_t hb_threads = 16, record_threads = 2;
  for (std::size_t t = 0; t < hb_threads; ++t) threads.emplace_back(heartbeat_thread, std::ref(s), t, hb_threads);
  for (std::size_t t = 0; t < record_threads; ++t) threads.emplace_back(records_thread, std::ref(s), t, record_threads);
  Director d;
  try {
    direct(s, windows, &d);
  } catch (...) {
    s.stop = true;  // the threads end before the exception goes on
    for (auto& th : threads) th.join();
    throw;
  }
  for (auto& th : threads) th.join();
  throw_if_interrupted();
  drain(s);
  throw_if_interrupted();
  std::size_t on = 0;
  for (std::size_t i = 0; i < s.count.load(); ++i) on += !s.agents[i]->leaving;
  print_window(s, windows - 1, windows, on, window_state(s, HttpClient(s.coordinator.url()), &d));
  return d;
}

// The first windows' figures against the last ones'. figures[]: RSS, heartbeat p99, records/s.
struct Drift {
  Comparison figures[3];
  bool holds = true;  // none 10% worse
};

Drift compare_ends(const Soak& s, const WindowCounts& w) {
  const SpanFigures first = s.windows.span(0, w.compare), last = s.windows.span(w.windows - w.compare, w.compare);
  Drift drift{{{"RSS (MiB)", first.rss_mib, last.rss_mib, true},
               {"heartbeat p99 (ms)", first.heartbeat_p99_ms, last.heartbeat_p99_ms, true},
               {"records/s", first.records_per_s, last.records_per_s, false}},
              true};
  std::printf("first %s vs last %s:\n", minutes(static_cast<double>(w.compare) * s.o.window_s).c_str(),
              minutes(static_cast<double>(w.compare) * s.o.window_s).c_str());
  for (const auto& f : drift.figures) {
    std::printf("  %-20s %10.2f %10.2f %+7.1f%%  %s\n", f.name, f.first, f.last, 100 * f.change(),
                f.holds() ? "not 10% worse" : "10% WORSE");
    drift.holds = drift.holds && f.holds();
  }
  return drift;
}

// What the soak did (churn, studies, the restart), the calls that failed, and the store's count of
// what was sent: each record acknowledged is stored once.
StoreCheck account(const Soak& s, const Director& d, std::size_t windows, long long errors) {
  long long unreachable = 0;
  for (std::size_t w = 0; w < windows; ++w) unreachable += s.windows.at(w).unreachable;
  std::printf(
      "churn: %d agents left, %d joined; %d studies submitted, %d cancelled; restart: %.2f s without a coordinator\n",
      d.left, d.joined, d.studies, d.cancelled, d.restart_down_s);
  std::printf("calls: %lld found no coordinator (its restart), %lld other errors%s%s\n", unreachable, errors,
              errors ? "; first: " : "", s.windows.first_error().c_str());
  const StoreCheck sc = s.ledger.check(s.coordinator.db());
  std::printf(
      "store: %lld records acknowledged over %lld run attempts, %lld point records stored: %lld lost, %lld duplicated "
      "(%lld sent without an answer, %lld of them stored); store file %.1f MiB\n",
      sc.acknowledged, sc.attempts, sc.stored, sc.lost, sc.duplicated, sc.in_doubt, sc.in_doubt_stored,
      static_cast<double>(std::filesystem::file_size(s.coordinator.db())) / (1024.0 * 1024.0));
  return sc;
}

// In phases, in the order a cluster lives them: the coordinator started, the cluster set up and
// at work, then played for the whole duration; the figures are judged only after the store has
// everything that was sent. Returns the exit code.
int soak(const SoakOptions& o, const TempFolder& folder) {
  const WindowCounts w = window_counts(o);
  CoordinatorProcess coordinator(coordinator_config(o, folder));
  throw_if_interrupted();
  Soak s(o, coordinator, w.windows, static_cast<std::size_t>(o.agents) + w.windows * static_cast<std::size_t>(o.churn));
  s.duration_s = static_cast<double>(w.windows) * o.window_s;
  print_plan(s, w);
  set_up_cluster(s);
  const Director d = play(s, w.windows);
  const Drift drift = compare_ends(s, w);
  const long long errors = s.windows.errors();
  const StoreCheck sc = account(s, d, w.windows, errors);
  const bool ok = drift.holds && sc.lost == 0 && sc.duplicated == 0 && errors == 0;
  std::printf(
      "verdict: %s: RSS %+.1f%%, heartbeat p99 %+.1f%%, records/s %+.1f%% (first vs last %s), %lld lost, %lld "
      "duplicated, %lld errors; load average %.2f\n",
      ok ? "PASS" : "FAIL", 100 * drift.figures[0].change(), 100 * drift.figures[1].change(),
      100 * drift.figures[2].change(), minutes(static_cast<double>(w.compare) * o.window_s).c_str(), sc.lost,
      sc.duplicated, errors, load_average());
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it comes, into a file too
  SoakOptions o;
  if (auto rc = parse_soak_options(argc, argv, &o)) return *rc;
  catch_interrupts();  // noted only: the soak stops at its next step, its coordinator and folder go
  try {
    rlimit nofile{};  // a kept connection per simulated agent here, one per client in the coordinator
    getrlimit(RLIMIT_NOFILE, &nofile);
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
    TempFolder folder(o.keep, "scalebench-soak");
    return soak(o, folder);
  } catch (const Interrupted&) {
    const int sig = interrupt_signal();
    std::cerr << "scalebench-coordinator-soak: interrupted by " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
              << "; stopped its coordinator" << (o.keep ? "" : " and removed its temporary folder") << "\n";
    return 128 + sig;
  } catch (const std::exception& e) {
    std::cerr << "scalebench-coordinator-soak: " << e.what() << "\n";
    return 1;
  }
}
