// scalebench-coordinator-load: plays a cluster of agents against a real coordinator over loopback
// HTTP and prints what the coordinator sustained: set-up (registration, submission, the first
// heartbeats handing the queue out), result records ingested per second (counted in its store
// afterwards), heartbeat latency, /metrics latency and size, and its memory over time. Given
// several cluster sizes (--agents 1000,2000,4000) it runs each against a fresh coordinator and
// prints the cost curve. A benchmark program, not a test: it prints figures and judges nothing.
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/load_options.hpp"
#include "bench/process_probe.hpp"
#include "bench/temp_folder.hpp"
#include "common/error.hpp"
#include "common/json.hpp"
#include "common/process.hpp"
#include "common/program_options.hpp"
#include "http/http_client.hpp"

namespace {
using namespace scalebench;
using namespace scalebench::load;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// A point record of the collective workload, as scalebench-run writes it (busbw, time, algbw per
// size), 20 samples of stats.
std::string record_json(long long run_id, int gpus, const std::string& metric, long long size, double value) {
  char samples[512];
  int off = 0;
  for (int i = 0; i < 20; ++i)
    off += std::snprintf(samples + off, sizeof samples - static_cast<std::size_t>(off), "%s%.4f", i ? "," : "",
                         value * (1.0 + 0.001 * (i % 7)));
  char out[2048];
  std::snprintf(
      out, sizeof out,
      R"({"schema_version":1,"run_id":%lld,"experiment":"load","workload":"collective","variant":"default","round":1,)"
      R"("transport":"","params":{"op":"all_reduce","dtype":"float32","reduce_op":"sum","in_place":false,"backend":"nccl"},)"
      R"("env_overrides":{},"placement":{"nodes":1,"ranks_per_node":%d,"ranks":%d,"gpus":%d,"hosts":["load-host"]},)"
      R"("point":{"size":%lld,"count":%lld},"metric":"%s","unit":"%s","better":"%s","value":%.4f,)"
      R"("stats":{"n":20,"median":%.4f,"mean":%.4f,"stddev":0.01,"cv":0.001,"min":%.4f,"max":%.4f,"samples":[%s],"stop":"repetitions"},)"
      R"("correctness":{"checked":true,"passed":true,"wrong":0},"status":"ok","reason":"","time":"2026-11-21T12:00:00Z"})",
      run_id, gpus, gpus, gpus, size, size / 4, metric.c_str(), metric == "time" ? "us" : "GB/s",
      metric == "time" ? "lower" : "higher", value, value, value, value, value, samples);
  return out;
}

// The coordinator under load: one this bench started (stopped when this goes), or a running one.
struct Target {
  std::string url;
  pid_t pid = -1;
  std::string db;                       // the store to count records in ("" : through the API)
  std::optional<ChildProcess> process;  // the one started here
  std::filesystem::path log;
  ~Target() {
    if (process) process->terminate_group(std::chrono::seconds(10));
  }
};

std::unique_ptr<Target> start_coordinator(const Options& o, const std::filesystem::path& folder,
                                          const std::string& db) {
  auto t = std::make_unique<Target>();
  t->db = db;
  t->log = folder / "coordinator.log";
  const auto port_file = folder / "port";
  ChildProcess::Options copts;
  copts.output_file = t->log.string();
  // The timeout is generous: on a loaded machine a heartbeat may come late, and a lost agent
  // would fail its run and end the stream.
  std::vector<std::string> argv{executable_dir() + "/scalebench-coordinator",
                                "--port",
                                "0",
                                "--port-file",
                                port_file.string(),
                                "--db",
                                db,
                                "--heartbeat-interval",
                                std::to_string(o.heartbeat_interval_s),
                                "--heartbeat-timeout",
                                "60"};
  if (o.threads > 0) {
    argv.push_back("--threads");
    argv.push_back(std::to_string(o.threads));
  }
  if (!o.coordinator_cpus.empty()) argv.insert(argv.begin(), {"taskset", "-c", o.coordinator_cpus});
  t->process = ChildProcess::spawn(argv, copts);
  t->pid = t->process->pid();
  int port = 0;
  for (int i = 0; i < 200 && port == 0 && !t->process->try_wait(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream pf(port_file);
    pf >> port;
  }
  if (port == 0) throw Error("the coordinator did not start; its log: " + t->log.string());
  t->url = "http://127.0.0.1:" + std::to_string(port);
  return t;
}

std::unique_ptr<Target> attach(const Options& o) {
  if (o.url.rfind("http://127.0.0.1:", 0) != 0) throw Error("--coordinator must be http://127.0.0.1:PORT (loopback)");
  auto t = std::make_unique<Target>();
  t->url = o.url;
  t->pid = o.pid;
  return t;
}

// One simulated agent: its own client (and so its own kept-alive connections, as an agent
// process has), the run it was given and how far its record stream has come.
struct SimAgent {
  std::string name;
  std::unique_ptr<HttpClient> client;
  long long run_id = 0;
  int attempt = 0;
  long long next_seq = 0;
};

struct SetUp {
  double register_s = 0, submit_s = 0, assign_s = 0;
  std::vector<double> first_heartbeat_ms;
  int busy_answers = 0;
};

std::vector<SimAgent> register_agents(const Target& t, int count, int gpus, SetUp* s) {
  std::vector<SimAgent> agents(static_cast<std::size_t>(count));
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    auto& a = agents[static_cast<std::size_t>(i)];
    char name[32];
    std::snprintf(name, sizeof name, "load-%05d", i);
    a.name = name;
    a.client = std::make_unique<HttpClient>(t.url);
    Json list = Json::array();
    for (int g = 0; g < gpus; ++g)
      list.push_back({{"index", g},
                      {"name", "NVIDIA H200"},
                      {"uuid", "GPU-" + a.name + "-" + std::to_string(g)},
                      {"pci_bus_id", ""},
                      {"memory_mib", 143771},
                      {"driver", ""},
                      {"pcie_gen", 5},
                      {"pcie_gen_max", 5},
                      {"pcie_width", 16},
                      {"pcie_width_max", 16},
                      {"numa_node", -1}});
    a.client->post_json("/api/v1/agents/register", Json{{"name", a.name},
                                                        {"hostname", a.name},
                                                        {"gpus", list},
                                                        {"slots", gpus},
                                                        {"capabilities", {"nccl", "mpi"}},
                                                        {"version", "load"}});
  }
  s->register_s = ms_since(start) / 1000;
  return agents;
}

// One experiment with a run for each agent, then each agent's first heartbeat takes one: the
// queue handed out one run at a time. Their next heartbeat (listing the run) confirms it.
void submit_and_assign(const Target& t, std::vector<SimAgent>& agents, int gpus, SetUp* s) {
  const std::string yaml =
      "name: load\nworkload: collective\nparams:\n  op: all_reduce\n  dtype: float32\n"
      "placement:\n  gpus_per_node: [" +
      std::to_string(gpus) + "]\nrounds: " + std::to_string(agents.size()) + "\n";
  HttpClient user(t.url, std::chrono::seconds(120));
  auto start = Clock::now();
  HttpResponse r = user.request("POST", "/api/v1/experiments", yaml, "application/yaml");
  if (r.status != 201) throw Error("submit: HTTP " + std::to_string(r.status) + " " + r.body);
  s->submit_s = ms_since(start) / 1000;
  start = Clock::now();
  for (auto& a : agents) {
    Json answer;
    // A busy answer (the state held past the heartbeat's wait) gives nothing: the agent gets its
    // run at its next heartbeat, as a real one would, and the busy answer is counted.
    for (int tries = 0; tries < 100; ++tries) {
      const auto one = Clock::now();
      answer = a.client->post_json("/api/v1/agents/" + a.name + "/heartbeat", Json{{"active", Json::array()}});
      s->first_heartbeat_ms.push_back(ms_since(one));
      if (!answer.value("busy", false)) break;
      ++s->busy_answers;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (answer["runs"].empty()) throw Error("heartbeat of " + a.name + " got no run: " + answer.dump());
    a.run_id = answer["runs"][0]["run_id"].get<long long>();
    a.attempt = answer["runs"][0]["attempt"].get<int>();
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
      if (due >= t_end || Clock::now() >= t_end) goto done;  // late ones are dropped, not sent after the end
      if (Clock::now() > due + std::chrono::duration<double>(o.heartbeat_interval_s)) ++s->late;
      std::this_thread::sleep_until(due);
      const auto& a = agents[static_cast<std::size_t>(i)];
      const auto start = Clock::now();
      try {
        HttpResponse r = a.client->request("POST", "/api/v1/agents/" + a.name + "/heartbeat",
                                           "{\"active\":[" + std::to_string(a.run_id) + "]}");
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
void records_thread(const Options& o, std::vector<SimAgent>& agents, int t, Clock::time_point t_end, LoadState* s) {
  static const long long kSizes[] = {1024,    4096,    16384,    65536,    262144,   1048576,
                                     4194304, 8388608, 16777216, 33554432, 67108864, 134217728};
  static const char* kMetrics[] = {"time", "algbw", "busbw"};
  std::vector<double> mine;
  std::string payload;
  const int n = static_cast<int>(agents.size());
  for (int i = t; Clock::now() < t_end; i = i + o.record_threads < n ? i + o.record_threads : t) {
    auto& a = agents[static_cast<std::size_t>(i)];
    payload = "{\"attempt\":" + std::to_string(a.attempt) + ",\"records\":[";
    for (int k = 0; k < o.batch; ++k) {
      const long long seq = a.next_seq + k;
      payload += (k ? ",{\"seq\":" : "{\"seq\":") + std::to_string(seq) + ",\"record\":" +
                 record_json(a.run_id, o.gpus, kMetrics[seq % 3], kSizes[(seq / 3) % 12],
                             100.0 + static_cast<double>(seq % 97)) +
                 "}";
    }
    payload += "]}";
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
void sampler_thread(const Target& target, Clock::time_point t0, Clock::time_point t_end, LoadState* s) {
  HttpClient scraper(target.url);
  for (int k = 0; Clock::now() < t_end; ++k) {
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
    if (target.pid > 0) {
      std::lock_guard lock(s->mu);
      s->out->rss.emplace_back(std::chrono::duration<double>(Clock::now() - t0).count(), rss_kib(target.pid));
    }
    std::this_thread::sleep_until(t0 + std::chrono::seconds(k + 1));
  }
}

Load run_load(const Options& o, const Target& target, std::vector<SimAgent>& agents) {
  Load out;
  LoadState s;
  s.out = &out;
  const double cpu0 = target.pid > 0 ? cpu_seconds(target.pid) : -1;
  const double self_cpu0 = cpu_seconds(getpid());
  const auto t0 = Clock::now();
  const Clock::time_point t_end =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));
  std::vector<std::thread> threads;
  const int hb_threads = std::min<int>(16, static_cast<int>(agents.size()));
  for (int t = 0; t < hb_threads; ++t)
    threads.emplace_back(heartbeat_thread, std::cref(o), std::ref(agents), t, hb_threads, t0, t_end, &s);
  for (int t = 0; t < o.record_threads; ++t)
    threads.emplace_back(records_thread, std::cref(o), std::ref(agents), t, t_end, &s);
  threads.emplace_back(sampler_thread, std::cref(target), t0, t_end, &s);
  for (auto& th : threads) th.join();
  out.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
  // The ingest rate is over the streaming window only: from the start to the last answer.
  out.stream_s = std::chrono::duration<double>(Clock::time_point(Clock::duration(s.last_answer.load())) - t0).count();
  out.cpu_s = target.pid > 0 ? cpu_seconds(target.pid) - cpu0 : -1;
  out.self_cpu_s = cpu_seconds(getpid()) - self_cpu0;
  out.posts = s.posts;
  out.acknowledged = s.acknowledged;
  out.errors = s.errors;
  out.late = s.late;
  return out;
}

// What was stored, counted in the store itself (or through the API for a coordinator this bench
// did not start): every acknowledged record must be there.
long long count_stored(const Target& t) {
  if (!t.db.empty()) {
    sqlite3* db = nullptr;
    long long stored = -1;
    if (sqlite3_open_v2(t.db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* q = nullptr;
      if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM records", -1, &q, nullptr) == SQLITE_OK &&
          sqlite3_step(q) == SQLITE_ROW)
        stored = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return stored;
  }
  HttpClient reader(t.url, std::chrono::seconds(60));
  long long after = 0, stored = 0;
  for (;;) {
    Json page = reader.get_json("/api/v1/results?limit=10000&after=" + std::to_string(after));
    stored += static_cast<long long>(page["records"].size());
    after = page["next_after"].get<long long>();
    if (page["complete"].get<bool>()) return stored;
  }
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
  if (l.cpu_s > 0)
    std::printf(
        "coordinator CPU: %.2f s over %.1f s (%.2f cores busy), all its work (records, heartbeats, /metrics): "
        "%.0f records stored per CPU-second\n",
        l.cpu_s, l.elapsed_s, l.cpu_s / l.elapsed_s, static_cast<double>(r.stored) / l.cpu_s);
  std::printf("this client's CPU: %.2f s (%.2f cores busy) on the same cores: building records and connecting\n",
              l.self_cpu_s, l.self_cpu_s / l.elapsed_s);
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
  std::printf("\ncost curve (x %d GPUs)\n%7s %9s %9s %11s %12s %11s %10s %11s %9s %12s\n", gpus, "agents", "submit_s",
              "assign_s", "records/s", "hb_p99_ms", "hb_max_ms", "metrics_ms", "metrics_max", "rss_MiB", "load_avg");
  for (const auto& r : all)
    std::printf("%7d %9.2f %9.2f %11.0f %12.2f %11.2f %10.1f %11.1f %9.1f %6.2f-%.2f\n", r.agents, r.setup.submit_s,
                r.setup.assign_s, static_cast<double>(r.stored) / r.load.stream_s,
                percentile(r.load.heartbeat_ms, 0.99), percentile(r.load.heartbeat_ms, 1.0),
                percentile(r.load.metrics_ms, 0.5), percentile(r.load.metrics_ms, 1.0),
                static_cast<double>(r.max_rss_kib) / 1024.0, r.load_before, r.load_after);
}

Scale run_scale(const Options& o, int agents, const TempFolder& folder) {
  Scale r;
  r.agents = agents;
  r.load_before = load_average();
  std::unique_ptr<Target> target;
  if (o.url.empty()) {
    const auto own = folder.path() / ("agents-" + std::to_string(agents));
    std::filesystem::create_directories(own);
    target = start_coordinator(o, own, o.db.empty() ? (own / "load.db").string() : o.db);
  } else {
    target = attach(o);
  }
  std::printf("\n== %d agents x %d GPUs: coordinator at %s, pid %d%s, batches of %d records, %d record streams\n",
              agents, o.gpus, target->url.c_str(), target->pid,
              o.coordinator_cpus.empty() ? "" : (" on CPUs " + o.coordinator_cpus).c_str(), o.batch, o.record_threads);
  std::vector<SimAgent> sim = register_agents(*target, agents, o.gpus, &r.setup);
  submit_and_assign(*target, sim, o.gpus, &r.setup);
  r.load = run_load(o, *target, sim);
  r.stored = count_stored(*target);
  for (const auto& [t, kib] : r.load.rss) r.max_rss_kib = std::max(r.max_rss_kib, kib);
  r.load_after = load_average();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it comes, into a file too
  Options o;
  if (auto rc = parse_options(argc, argv, &o)) return *rc;
  try {
    // One kept connection per simulated agent here, one per client in the coordinator (our
    // child): room for both.
    rlimit nofile{};
    getrlimit(RLIMIT_NOFILE, &nofile);
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
    TempFolder folder(o.keep);  // removed on every way out of this scope
    std::vector<Scale> all;
    bool failed = false;
    for (int n : o.agents) {
      all.push_back(run_scale(o, n, folder));
      print_scale(o, all.back());
      failed = failed || all.back().load.errors > 0 || all.back().load.acknowledged > all.back().stored;
    }
    if (all.size() > 1) print_curve(all, o.gpus);
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "scalebench-coordinator-load: " << e.what() << "\n";
    return 1;
  }
}
