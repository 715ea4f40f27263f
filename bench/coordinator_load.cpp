// scalebench-coordinator-load: plays a cluster of agents against a real coordinator over loopback
// HTTP and prints what the coordinator sustained: result records ingested per second (counted in
// its store afterwards), heartbeat latency, /metrics latency and size, and its memory over time.
// A benchmark program, not a test: it prints figures and judges nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "common/process.hpp"

namespace {
using namespace scalebench;
using Clock = std::chrono::steady_clock;

const char* kUsage = R"(usage: scalebench-coordinator-load [options]
  --agents N              agents to play (default 1000)
  --gpus N                GPUs per agent (default 8)
  --duration S            seconds of streaming and heartbeating (default 30)
  --batch N               records per POST, as the agent's outbox batches them (default 200)
  --record-threads N      connections posting records at once (default 2)
  --heartbeat-interval S  seconds between each agent's heartbeats (default 1)
  --coordinator URL       target a running coordinator (http://127.0.0.1:PORT) instead of starting one;
                          records are then counted through the API, and RSS needs --coordinator-pid
  --coordinator-pid PID   sample this process's RSS
  --db FILE               the store of the coordinator it starts (default: a fresh one in a temporary folder)
  --threads N             the started coordinator's --threads (default: its own default)
  --keep                  keep the temporary folder (store, coordinator log)
  --connection-close      send every request on a new connection (the agent's client before it kept
                          its connections alive) instead of keeping each agent's connections alive
)";

struct Options {
  int agents = 1000, gpus = 8, batch = 200, record_threads = 2;
  double duration_s = 30, heartbeat_interval_s = 1;
  std::string url, db;
  int threads = 0;
  pid_t pid = -1;
  bool keep = false;
  bool connection_close = false;
};

// A loopback connection with a 10 s deadline on every socket call.
int open_connection(unsigned short port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(std::string("socket: ") + std::strerror(errno));
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(std::string("connect: ") + std::strerror(e));
  }
  return fd;
}

// One agent's idle connections to the coordinator, kept alive between requests as the agent's
// HttpClient keeps them (common/http_client.cpp), and used by its heartbeats and record posts.
struct Connections {
  std::mutex mutex;
  std::vector<int> idle;
  ~Connections() {
    for (int fd : idle) ::close(fd);
  }
};

// One HTTP/1.1 request, on a connection from `pool` when it has one (else a new one), put back
// when the answer leaves it open. As the agent's client does, a kept connection that fails before
// any answer is replaced by a new one, once. Returns the status and fills `body`.
int http(unsigned short port, const std::string& method, const std::string& target, const std::string& payload,
         std::string* body, Connections* pool = nullptr) {
  int fd = -1;
  if (pool) {
    std::lock_guard lock(pool->mutex);
    if (!pool->idle.empty()) {
      fd = pool->idle.back();
      pool->idle.pop_back();
    }
  }
  bool reused = fd >= 0;
  if (fd < 0) fd = open_connection(port);
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } closer{fd};
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!pool) req += "Connection: close\r\n";
  if (!payload.empty() || method == "POST")
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(payload.size()) + "\r\n";
  req += "\r\n";
  req += payload;
  std::string in;
  std::size_t header_end = std::string::npos, length = std::string::npos;
  for (;;) {
    bool failed = false;
    for (std::size_t off = 0; off < req.size() && !failed;) {
      ssize_t n = ::send(closer.fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
      if (n <= 0 && !reused) throw Error(std::string("send: ") + std::strerror(errno));
      if (n <= 0) failed = true;
      off += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    char buf[65536];
    while (!failed) {
      ssize_t n = ::recv(closer.fd, buf, sizeof buf, 0);
      if (n <= 0 && reused && in.empty() && !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) {
        failed = true;  // the coordinator closed the kept connection
        break;
      }
      if (n < 0) throw Error(std::string("recv ") + target + ": " + std::strerror(errno));
      if (n == 0) break;
      in.append(buf, static_cast<std::size_t>(n));
      if (header_end == std::string::npos && (header_end = in.find("\r\n\r\n")) != std::string::npos) {
        auto cl = in.find("Content-Length: ");
        if (cl != std::string::npos && cl < header_end) length = std::stoul(in.substr(cl + 16));
      }
      if (length != std::string::npos && in.size() >= header_end + 4 + length) break;
    }
    if (!failed) break;
    ::close(closer.fd);
    closer.fd = open_connection(port);
    reused = false;
  }
  if (in.size() < 12 || header_end == std::string::npos) throw Error("short answer to " + target);
  if (body) *body = in.substr(header_end + 4, length);
  const bool complete = length != std::string::npos && in.size() == header_end + 4 + length;
  if (pool && complete && in.substr(0, header_end).find("Connection: close") == std::string::npos) {
    std::lock_guard lock(pool->mutex);
    pool->idle.push_back(closer.fd);
    closer.fd = -1;
  }
  return std::stoi(in.substr(9, 3));
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

// User + system CPU seconds the process has used so far (-1 when unknown).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i)
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

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

struct AgentState {
  std::string name;
  long long run_id = 0;
  int attempt = 0;
  long long next_seq = 0;
  Connections connections;
  Connections* pool = nullptr;  // &connections, or none with --connection-close
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--agents")
        o.agents = std::stoi(value());
      else if (a == "--gpus")
        o.gpus = std::stoi(value());
      else if (a == "--duration")
        o.duration_s = std::stod(value());
      else if (a == "--batch")
        o.batch = std::stoi(value());
      else if (a == "--record-threads")
        o.record_threads = std::stoi(value());
      else if (a == "--heartbeat-interval")
        o.heartbeat_interval_s = std::stod(value());
      else if (a == "--coordinator")
        o.url = value();
      else if (a == "--coordinator-pid")
        o.pid = std::stoi(value());
      else if (a == "--db")
        o.db = value();
      else if (a == "--threads")
        o.threads = std::stoi(value());
      else if (a == "--keep")
        o.keep = true;
      else if (a == "--connection-close")
        o.connection_close = true;
      else if (a == "-h" || a == "--help") {
        std::cout << kUsage;
        return 0;
      } else {
        std::cerr << "unknown option " << a << "\n" << kUsage;
        return 2;
      }
    } catch (const std::logic_error&) {
      std::cerr << "bad value for " << a << "\n";
      return 2;
    }
  }
  if (o.agents < 1 || o.gpus < 1 || o.batch < 1 || o.record_threads < 1 || o.duration_s <= 0) {
    std::cerr << "--agents, --gpus, --batch, --record-threads and --duration must be positive\n";
    return 2;
  }

  try {
    // The coordinator holds one connection per client in flight: give it (our child) room.
    rlimit nofile{};
    getrlimit(RLIMIT_NOFILE, &nofile);
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);

    std::filesystem::path work;
    std::optional<ChildProcess> coordinator;
    unsigned short port = 0;
    if (o.url.empty()) {
      char tmpl[] = "/tmp/scalebench-load.XXXXXX";
      if (!mkdtemp(tmpl)) throw Error("mkdtemp failed");
      work = tmpl;
      if (o.db.empty()) o.db = (work / "load.db").string();
      ChildProcess::Options copts;
      copts.output_file = (work / "coordinator.log").string();
      // The timeout is generous: on a loaded machine a heartbeat may come late, and a lost agent
      // would fail its run and end the stream.
      std::vector<std::string> argv{executable_dir() + "/scalebench-coordinator",
                                    "--port",
                                    "0",
                                    "--port-file",
                                    (work / "port").string(),
                                    "--db",
                                    o.db,
                                    "--heartbeat-interval",
                                    std::to_string(o.heartbeat_interval_s),
                                    "--heartbeat-timeout",
                                    "60"};
      if (o.threads > 0) {
        argv.push_back("--threads");
        argv.push_back(std::to_string(o.threads));
      }
      coordinator = ChildProcess::spawn(argv, copts);
      o.pid = coordinator->pid();
      for (int i = 0; i < 200 && !std::filesystem::exists(work / "port"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream pf(work / "port");
      int p = 0;
      if (!(pf >> p)) throw Error("the coordinator did not start; see " + (work / "coordinator.log").string());
      port = static_cast<unsigned short>(p);
    } else {
      auto colon = o.url.rfind(':');
      if (o.url.rfind("http://127.0.0.1:", 0) != 0 || colon == std::string::npos)
        throw Error("--coordinator must be http://127.0.0.1:PORT (loopback)");
      port = static_cast<unsigned short>(std::stoi(o.url.substr(colon + 1)));
    }
    std::printf(
        "coordinator on 127.0.0.1:%u, pid %d, %d agents x %d GPUs, batches of %d records, %d record streams, %s\n",
        port, o.pid, o.agents, o.gpus, o.batch, o.record_threads,
        o.connection_close ? "a new connection per request" : "connections kept alive");

    // Register every agent with its GPUs, then one experiment with a run for each of them.
    std::vector<AgentState> agents(static_cast<std::size_t>(o.agents));
    const auto t_register = Clock::now();
    for (int i = 0; i < o.agents; ++i) {
      auto& a = agents[static_cast<std::size_t>(i)];
      char name[32];
      std::snprintf(name, sizeof name, "load-%05d", i);
      a.name = name;
      a.pool = o.connection_close ? nullptr : &a.connections;
      Json gpus = Json::array();
      for (int g = 0; g < o.gpus; ++g)
        gpus.push_back({{"index", g}, {"name", "NVIDIA H200"}, {"uuid", "GPU-" + a.name + "-" + std::to_string(g)}});
      Json info{{"name", a.name},
                {"hostname", a.name},
                {"gpus", gpus},
                {"slots", o.gpus},
                {"capabilities", {"nccl", "mpi"}},
                {"version", "load"}};
      std::string body;
      int st = http(port, "POST", "/api/v1/agents/register", info.dump(), &body, a.pool);
      if (st != 200) throw Error("register " + a.name + ": HTTP " + std::to_string(st) + " " + body);
    }
    const double register_s = std::chrono::duration<double>(Clock::now() - t_register).count();
    std::string yaml =
        "name: load\nworkload: collective\nparams:\n  op: all_reduce\n  dtype: float32\n"
        "placement:\n  gpus_per_node: [" +
        std::to_string(o.gpus) + "]\nrounds: " + std::to_string(o.agents) + "\n";
    std::string body;
    int st = http(port, "POST", "/api/v1/experiments", yaml, &body);
    if (st != 201) throw Error("submit: HTTP " + std::to_string(st) + " " + body);
    // The first heartbeat of each agent takes a run: the queue handed out one run at a time.
    const auto t_assign = Clock::now();
    std::vector<double> first_ms;
    for (auto& a : agents) {
      const auto s = Clock::now();
      st = http(port, "POST", "/api/v1/agents/" + a.name + "/heartbeat", R"({"active":[]})", &body, a.pool);
      first_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
      Json answer = Json::parse(body);
      if (st != 200 || answer["runs"].empty())
        throw Error("heartbeat of " + a.name + " got no run: HTTP " + std::to_string(st) + " " + body);
      a.run_id = answer["runs"][0]["run_id"].get<long long>();
      a.attempt = answer["runs"][0]["attempt"].get<int>();
    }
    const double assign_s = std::chrono::duration<double>(Clock::now() - t_assign).count();
    std::printf(
        "registered %d agents in %.2f s (%.0f/s); their first heartbeats took the %d queued runs in %.2f s "
        "(p50 %.2f ms, max %.2f ms each)\n",
        o.agents, register_s, o.agents / register_s, o.agents, assign_s, percentile(first_ms, 0.5),
        percentile(first_ms, 1.0));

    std::atomic<bool> stop{false};
    std::atomic<long long> acknowledged{0}, posts{0}, errors{0}, late{0};
    std::atomic<Clock::rep> last_answer{0};
    std::mutex mu;
    std::vector<double> hb_ms, post_ms;
    std::vector<std::pair<double, std::size_t>> metrics_ms;  // latency, size
    std::vector<std::pair<double, long>> rss;                // time, KiB
    std::string first_error;
    auto note_error = [&](const std::string& e) {
      ++errors;
      std::lock_guard lock(mu);
      if (first_error.empty()) first_error = e;
    };

    const double cpu0 = o.pid > 0 ? cpu_seconds(o.pid) : -1;
    const double self_cpu0 = cpu_seconds(getpid());
    const auto t0 = Clock::now();
    const auto t_end = t0 + std::chrono::duration<double>(o.duration_s);
    std::vector<std::thread> threads;
    Connections scraper;  // Prometheus keeps its connection alive too
    // Heartbeats: every agent once per interval, spread evenly over it, from 16 threads so that
    // one slow answer does not delay the others' schedule.
    const int hb_threads = std::min(16, o.agents);
    for (int t = 0; t < hb_threads; ++t)
      threads.emplace_back([&, t] {
        std::vector<double> mine;
        const double step = o.heartbeat_interval_s / o.agents;
        for (long long tick = 0;; ++tick) {
          for (int i = t; i < o.agents; i += hb_threads) {
            auto due = t0 + std::chrono::duration<double>(tick * o.heartbeat_interval_s + i * step);
            if (due >= t_end || Clock::now() >= t_end) goto done;  // late ones are dropped, not sent after the end
            if (Clock::now() > due + std::chrono::duration<double>(o.heartbeat_interval_s)) ++late;
            std::this_thread::sleep_until(due);
            const auto& a = agents[static_cast<std::size_t>(i)];
            std::string answer;
            auto s = Clock::now();
            try {
              int code = http(port, "POST", "/api/v1/agents/" + a.name + "/heartbeat",
                              "{\"active\":[" + std::to_string(a.run_id) + "]}", &answer, a.pool);
              mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
              if (code != 200) note_error("heartbeat HTTP " + std::to_string(code) + ": " + answer);
            } catch (const std::exception& e) {
              note_error(e.what());
            }
          }
        }
      done:
        std::lock_guard lock(mu);
        hb_ms.insert(hb_ms.end(), mine.begin(), mine.end());
      });
    // Records: each stream posts batches for its share of the agents in turn, as fast as the
    // coordinator answers (each agent's seq numbers go up as its outbox's do).
    static const long long kSizes[] = {1024,    4096,    16384,    65536,    262144,   1048576,
                                       4194304, 8388608, 16777216, 33554432, 67108864, 134217728};
    static const char* kMetrics[] = {"time", "algbw", "busbw"};
    for (int t = 0; t < o.record_threads; ++t)
      threads.emplace_back([&, t] {
        std::vector<double> mine;
        std::string payload;
        for (int i = t; !stop.load() && Clock::now() < t_end;
             i = i + o.record_threads < o.agents ? i + o.record_threads : t) {
          auto& a = agents[static_cast<std::size_t>(i)];
          payload = "{\"attempt\":" + std::to_string(a.attempt) + ",\"records\":[";
          for (int k = 0; k < o.batch; ++k) {
            long long seq = a.next_seq + k;
            const int m = static_cast<int>(seq % 3);
            const long long size = kSizes[(seq / 3) % 12];
            payload += (k ? ",{\"seq\":" : "{\"seq\":") + std::to_string(seq) + ",\"record\":" +
                       record_json(a.run_id, o.gpus, kMetrics[m], size, 100.0 + static_cast<double>(seq % 97)) + "}";
          }
          payload += "]}";
          std::string answer;
          auto s = Clock::now();
          try {
            int code =
                http(port, "POST", "/api/v1/runs/" + std::to_string(a.run_id) + "/records", payload, &answer, a.pool);
            const auto now = Clock::now();
            mine.push_back(std::chrono::duration<double, std::milli>(now - s).count());
            ++posts;
            last_answer.store(std::max(last_answer.load(), now.time_since_epoch().count()));
            if (code == 200) {
              acknowledged += Json::parse(answer).value("stored", 0LL);
              a.next_seq += o.batch;
            } else {
              note_error("records HTTP " + std::to_string(code) + ": " + answer);
            }
          } catch (const std::exception& e) {
            note_error(e.what());
          }
        }
        std::lock_guard lock(mu);
        post_ms.insert(post_ms.end(), mine.begin(), mine.end());
      });
    // /metrics every 2 s and the coordinator's RSS every second.
    threads.emplace_back([&] {
      for (int k = 0; Clock::now() < t_end; ++k) {
        if (k % 2 == 0) {
          std::string text;
          auto s = Clock::now();
          try {
            int code = http(port, "GET", "/metrics", "", &text, o.connection_close ? nullptr : &scraper);
            double ms = std::chrono::duration<double, std::milli>(Clock::now() - s).count();
            if (code != 200) note_error("/metrics HTTP " + std::to_string(code));
            std::lock_guard lock(mu);
            metrics_ms.emplace_back(ms, text.size());
          } catch (const std::exception& e) {
            note_error(e.what());
          }
        }
        if (o.pid > 0) {
          std::lock_guard lock(mu);
          rss.emplace_back(std::chrono::duration<double>(Clock::now() - t0).count(), rss_kib(o.pid));
        }
        std::this_thread::sleep_until(t0 + std::chrono::seconds(k + 1));
      }
    });
    for (auto& th : threads) th.join();
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    // The ingest rate is over the streaming window only: from the start to the last answer.
    const double stream_s =
        std::chrono::duration<double>(Clock::time_point(Clock::duration(last_answer.load())) - t0).count();
    const double cpu = o.pid > 0 ? cpu_seconds(o.pid) - cpu0 : -1;
    const double self_cpu = cpu_seconds(getpid()) - self_cpu0;

    // What was stored, counted in the store itself (or through the API for a coordinator we did
    // not start): every acknowledged record must be there.
    long long stored = -1;
    if (coordinator) {
      sqlite3* db = nullptr;
      if (sqlite3_open_v2(o.db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* q = nullptr;
        if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM records", -1, &q, nullptr) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW)
          stored = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
      }
      sqlite3_close(db);
    } else {
      long long after = 0;
      stored = 0;
      for (;;) {
        http(port, "GET", "/api/v1/results?limit=10000&after=" + std::to_string(after), "", &body);
        Json page = Json::parse(body);
        stored += static_cast<long long>(page["records"].size());
        after = page["next_after"].get<long long>();
        if (page["complete"].get<bool>()) break;
      }
    }

    std::printf("\n%.1f s of load: %lld record POSTs, %lld records acknowledged, %lld in the store, %lld errors\n",
                elapsed, posts.load(), acknowledged.load(), stored, errors.load());
    if (!first_error.empty()) std::printf("first error: %s\n", first_error.c_str());
    std::printf(
        "ingest:    %.0f records/s stored over %.1f s of streaming (acknowledged %.0f/s); POST of %d records p50 %.2f "
        "ms, p99 %.2f ms\n",
        static_cast<double>(stored) / stream_s, stream_s, static_cast<double>(acknowledged.load()) / stream_s, o.batch,
        percentile(post_ms, 0.5), percentile(post_ms, 0.99));
    std::printf(
        "heartbeat: %zu answered (%.0f/s; %lld sent over a period late), p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
        hb_ms.size(), static_cast<double>(hb_ms.size()) / elapsed, late.load(), percentile(hb_ms, 0.5),
        percentile(hb_ms, 0.99), percentile(hb_ms, 1.0));
    if (cpu > 0)
      std::printf(
          "coordinator CPU: %.2f s over %.1f s (%.2f cores busy), all its work (records, heartbeats, /metrics): "
          "%.0f records stored per CPU-second\n",
          cpu, elapsed, cpu / elapsed, static_cast<double>(stored) / cpu);
    std::printf("this client's CPU: %.2f s (%.2f cores busy) on the same cores: building records and connecting\n",
                self_cpu, self_cpu / elapsed);
    std::vector<double> mms;
    std::size_t msize = 0;
    for (auto& [ms, size] : metrics_ms) {
      mms.push_back(ms);
      msize = std::max(msize, size);
    }
    std::printf("/metrics:  %zu scrapes, p50 %.1f ms, max %.1f ms, largest %zu bytes\n", mms.size(),
                percentile(mms, 0.5), percentile(mms, 1.0), msize);
    if (!rss.empty()) {
      std::printf("coordinator RSS (MiB) by second:");
      for (std::size_t i = 0; i < rss.size(); ++i)
        if (i % 5 == 0 || i + 1 == rss.size()) std::printf(" %.0fs:%.1f", rss[i].first, rss[i].second / 1024.0);
      std::printf("\n");
    }
    const bool lost = acknowledged.load() > stored;
    if (lost)
      std::printf("ERROR: %lld acknowledged records are missing from the store\n", acknowledged.load() - stored);
    if (coordinator) {
      coordinator->terminate_group(std::chrono::seconds(10));
      if (o.keep)
        std::printf("kept %s\n", work.c_str());
      else
        std::filesystem::remove_all(work);
    }
    return lost || errors.load() > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "scalebench-coordinator-load: " << e.what() << "\n";
    return 1;
  }
}
