// scalebench-coordinator: the HTTP API, scheduler, store and /metrics of a scalebench cluster.
#include <malloc.h>
#include <sys/resource.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/program_options.hpp"
#include "coordinator/access.hpp"
#include "coordinator/api.hpp"
#include "coordinator/coordinator.hpp"
#include "http/connection_limit.hpp"
#include "http/http_server.hpp"
#include "http/tls_context.hpp"
#include "store/store_integrity.hpp"

namespace {
constexpr int kExitStoreDamaged = 3;

// SQLite's check of an existing store before it is opened for writing (store_integrity.hpp): its
// findings and what to do, one log line each; none when the store is whole or new.
std::vector<std::string> store_damage_at_start(const std::string& path) {
  using namespace scalebench;
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == 0 || ec) return {};  // new (or empty): SQLite makes it
  const StoreIntegrity check = check_store_integrity(path, /*read_only=*/false);
  char took[32];
  std::snprintf(took, sizeof took, "%.2f", check.seconds);
  if (check.problems.empty()) {
    log::info("store " + path + ": " + check.check + " passed in " + took + " s");
    return {};
  }
  std::vector<std::string> lines;
  for (const auto& p : check.problems) lines.push_back("store " + path + " is damaged (" + check.check + "): " + p);
  lines.push_back("not starting on a damaged store (exit " + std::to_string(kExitStoreDamaged) +
                  "): read the records it still holds with `scalebench results --db " + path +
                  " --format json`, then start on a new store (or a backup)");
  return lines;
}

// The command line's values, with their defaults.
struct CommandLine {
  std::string listen = "127.0.0.1", port_file, token_file, tls_cert, tls_key;
  bool protect_metrics = false;
  int port = 8470, threads = 4, record_threads = 2, record_nice = 0;
  long long max_connections = 16384, body_budget_mib = 256, answer_budget_mib = 128;
  scalebench::Coordinator::Options options;  // the store and the heartbeats' timing
  CommandLine() { options.db_path = "scalebench.db"; }
};

void add_options(CLI::App& app, CommandLine& c) {
  app.add_option("--listen", c.listen, "address to listen on")->capture_default_str()->type_name("ADDR");
  app.add_option("--port", c.port, "port; 0 picks a free one")->capture_default_str()->check(CLI::Range(0, 65535));
  app.add_option("--port-file", c.port_file, "write the port actually used here once listening")->type_name("FILE");
  app.add_option("--db", c.options.db_path, "SQLite store")->capture_default_str()->type_name("FILE");
  app.add_option("--heartbeat-interval", c.options.heartbeat_interval_s, "seconds between agent heartbeats")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("--heartbeat-timeout", c.options.heartbeat_timeout_s,
                 "an agent silent this many seconds is lost, and its runs fail")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--token-file", c.token_file, "bearer tokens, one \"ROLE TOKEN\" a line (ROLE: agent, user, read)")
      ->type_name("FILE");
  app.add_flag("--protect-metrics", c.protect_metrics, "/metrics wants a read token too");
  app.add_option("--threads", c.threads, "threads serving connections, each its own share of them")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--record-threads", c.record_threads, "threads storing posted record batches")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--record-nice", c.record_nice,
                 "how much lower the record threads' CPU priority is (a nice increment): heartbeats then run first "
                 "on a core shared with other work, at some cost in records stored per CPU-second; 0 for the same")
      ->capture_default_str()
      ->check(CLI::Range(0, 19));
  app.add_option("--max-connections", c.max_connections,
                 "connections served at once, at most the descriptor limit less those in use; past them a 503 with "
                 "Retry-After")
      ->capture_default_str()
      ->check(CLI::Range(1LL, 1000000LL));
  // At least one largest body (8 MiB) fits.
  app.add_option("--body-budget-mib", c.body_budget_mib, "request bodies held at once, all connections together")
      ->capture_default_str()
      ->check(CLI::Range(8LL, 65536LL));
  // At least one largest page of runs (a few MiB) and one streamed answer's part fit.
  app.add_option("--answer-budget-mib", c.answer_budget_mib,
                 "answers made and not yet read by their clients, all connections together; past it a 503 "
                 "with Retry-After")
      ->capture_default_str()
      ->check(CLI::Range(8LL, 65536LL));
  auto* cert = app.add_option("--tls-cert", c.tls_cert, "serve https only, with this PEM certificate (chain)")
                   ->type_name("FILE");
  auto* key = app.add_option("--tls-key", c.tls_key, "... and its PEM private key")->type_name("FILE");
  cert->needs(key);
  key->needs(cert);
}

// The command line read into `c`: nothing when the coordinator is to go on, else its exit code
// (0 after --help or --version, 2 for bad options).
std::optional<int> parse_command_line(int argc, char** argv, CommandLine& c) {
  CLI::App app("scalebench-coordinator: the HTTP API, scheduler, store and /metrics of a scalebench cluster.",
               "scalebench-coordinator");
  app.footer(
      "Examples:\n"
      "  scalebench-coordinator --db /var/lib/scalebench/scalebench.db\n"
      "  scalebench-coordinator --listen 0.0.0.0 --token-file tokens --tls-cert cert.pem --tls-key key.pem\n"
      "Exit codes: 0 stopped by SIGINT or SIGTERM; 1 failed while serving; 2 bad options, store, tokens,\n"
      "certificate or descriptor limit; 3 the store is damaged (SQLite's integrity check failed: read what it\n"
      "holds with `scalebench results --db FILE`).");
  scalebench::add_standard_options(app, "scalebench-coordinator");
  add_options(app, c);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return scalebench::parse_failure(app, e, "scalebench-coordinator");
  }
  return std::nullopt;
}

// Process-wide settings, before any thread or file is opened.
void set_process_limits() {
  // A file-size limit reached (ulimit -f) is then a failed write, which the store reports like a
  // full disk, instead of a signal that kills the coordinator mid-transaction.
  signal(SIGXFSZ, SIG_IGN);
  // Under an address-space limit (ulimit -v), two malloc arenas: each further thread's arena
  // reserves 64 MiB of address space, and the coordinator's threads held 550 MiB of a 1 GiB limit
  // with 12 MB in use, before any submission.
  if (rlimit as{}; getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) mallopt(M_ARENA_MAX, 2);
}

// Every agent keeps a connection open (its client keeps them alive): a cluster of a thousand
// agents needs more descriptors than the usual soft limit of 1,024.
void raise_descriptor_limit() {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
}

// The API served on `workers`' event loops, accepting on `ioc`, started; its limits follow the
// descriptor limit, so it is made after that was raised.
std::shared_ptr<scalebench::HttpServer> start_server(boost::asio::io_context& ioc,
                                                     const std::vector<boost::asio::io_context*>& workers,
                                                     const boost::asio::ip::address& address, const CommandLine& c,
                                                     scalebench::Coordinator& coordinator,
                                                     const scalebench::AccessTokens& tokens,
                                                     std::shared_ptr<boost::asio::ssl::context> tls) {
  using namespace scalebench;
  auto server = std::make_shared<HttpServer>(
      ioc, boost::asio::ip::tcp::endpoint(address, static_cast<unsigned short>(c.port)),
      [co = &coordinator, t = &tokens](const HttpRequest& r) { return handle_api(*co, r, *t); }, std::move(tls),
      workers);
  // Record batches on record_threads, every call that may wait on two more (api_lane): a
  // connection thread only ever runs heartbeats, which wait 20 ms at most. --record-nice lowers
  // the record threads' priority; off by default: on a quiet core it halved the records stored
  // per CPU-second in some runs (docs/results/2026-11-30-coordinator-record-nice).
  server->set_lanes(api_lane, {c.record_threads, 2}, {c.record_nice, 0});
  server->set_header_check([t = &tokens](const HttpRequest& r) { return check_access(r, *t); });
  server->set_streams([co = &coordinator, t = &tokens](const HttpRequest& r) { return stream_api(*co, r, *t); });
  // Past the descriptor limit new clients would wait unanswered; below it they get a 503.
  const ConnectionLimit connections = connection_limit(static_cast<std::size_t>(c.max_connections));
  if (connections.connections == 0)
    throw Error("the descriptor limit (ulimit -n) is " + std::to_string(connections.fd_limit) + ", " +
                std::to_string(connections.fds_open) + " are open and " + std::to_string(kSpareDescriptors) +
                " are kept spare: no room for a connection; raise the limit");
  if (connections.clamped) log::warn("--max-connections: " + connections.note);
  server->set_limits(connections.connections, static_cast<std::size_t>(c.body_budget_mib) << 20,
                     static_cast<std::size_t>(c.answer_budget_mib) << 20);
  server->start();
  return server;
}

void write_port_file(const std::string& port_file, unsigned short port) {
  if (port_file.empty()) return;
  std::string tmp = port_file + ".tmp";
  std::ofstream(tmp) << port << "\n";
  std::rename(tmp.c_str(), port_file.c_str());  // readers never see a half-written file
}

void log_listening(const CommandLine& c, unsigned short port, bool tls, const scalebench::AccessTokens& tokens,
                   const boost::asio::ip::address& address) {
  using namespace scalebench;
  log::info(std::string("listening on ") + (tls ? "https://" : "http://") + c.listen + ":" + std::to_string(port) +
            ", store " + c.options.db_path + ", " + (tls ? "TLS certificate " + c.tls_cert + ", " : std::string()) +
            (tokens.any() ? std::to_string(tokens.agent.size()) + " agent, " + std::to_string(tokens.user.size()) +
                                " user, " + std::to_string(tokens.read.size()) + " read token(s)"
                          : "no tokens"));
  if (!tokens.any() && !address.is_loopback())
    log::warn("listening beyond loopback without tokens: anyone who reaches " + c.listen +
              " may register agents and submit; see --token-file");
}

// The event loops run until SIGINT or SIGTERM: `ioc` on this thread (connections accepted, the
// liveness check every 0.5 s), each worker on a thread of its own. Then the server's last record
// batches are stored and the heartbeat times saved.
void run_until_signal(boost::asio::io_context& ioc, const std::vector<boost::asio::io_context*>& workers,
                      scalebench::HttpServer& server, scalebench::Coordinator& coordinator) {
  using namespace scalebench;
  boost::asio::steady_timer timer(ioc);
  std::function<void()> tick = [&] {
    timer.expires_after(std::chrono::milliseconds(500));
    timer.async_wait([&](boost::system::error_code ec) {
      if (ec) return;
      try {
        coordinator.check_liveness();
      } catch (const std::exception& e) {
        log::error(std::string("liveness check: ") + e.what());
      }
      tick();
    });
  };
  tick();
  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code, int sig) {
    log::info("signal " + std::to_string(sig) + ": shutting down");
    server.stop();
    timer.cancel();
    ioc.stop();
    for (auto* w : workers) w->stop();
  });
  std::vector<std::thread> threads;
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guards;
  for (auto* w : workers) {
    guards.push_back(boost::asio::make_work_guard(*w));
    threads.emplace_back([w] { w->run(); });
  }
  ioc.run();
  for (auto& t : threads) t.join();
  server.join();                 // the record batches under way are stored and answered (or their answer dropped)
  coordinator.save_last_seen();  // heartbeats keep them in memory between saves
}

// The coordinator from its start to its stop: the exit code. In phases, the checks of what the
// operator gave first (tokens, certificate, the store's integrity), so that a bad one stops the
// start before anything is written or served; then the store opened, the server started, its
// port made known, and the event loops run.
int serve(const CommandLine& c) {
  using namespace scalebench;
  bool serving = false;  // until then, an error is the configuration's (exit 2), after it the run's (1)
  try {
    AccessTokens tokens = load_access_tokens(c.token_file);
    tokens.protect_metrics = c.protect_metrics;
    // Certificate problems stop the start, before the store is opened.
    auto tls = c.tls_cert.empty() ? nullptr : make_tls_server_context(c.tls_cert, c.tls_key);
    // A damaged store is not written to (a write may spread the damage): the coordinator does not
    // start, says what SQLite's check found and how to read what the store still holds. Agents keep
    // their records in their journals meanwhile.
    if (auto damage = store_damage_at_start(c.options.db_path); !damage.empty()) {
      for (const auto& line : damage) log::error(line);
      return kExitStoreDamaged;
    }
    Coordinator coordinator(c.options);
    raise_descriptor_limit();
    boost::asio::io_context ioc;
    // Each serving thread has its own event loop and connections: a request is read, handled and
    // answered on the thread that saw it arrive, with no other thread woken to take it (those
    // hand-offs were a quarter of the coordinator's time under load). Record batches, which take
    // milliseconds, go to threads of their own, so that the heartbeats on a thread's other
    // connections do not wait for them. `ioc` accepts connections and runs the liveness timer.
    std::vector<std::unique_ptr<boost::asio::io_context>> worker_ctx;
    std::vector<boost::asio::io_context*> workers;
    for (int i = 0; i < c.threads; ++i) {
      worker_ctx.push_back(std::make_unique<boost::asio::io_context>(1));
      workers.push_back(worker_ctx.back().get());
    }
    const auto address = boost::asio::ip::make_address(c.listen);
    const std::shared_ptr<HttpServer> server = start_server(ioc, workers, address, c, coordinator, tokens, tls);
    serving = true;
    write_port_file(c.port_file, server->port());
    log_listening(c, server->port(), tls != nullptr, tokens, address);
    run_until_signal(ioc, workers, *server, coordinator);
    log::info("stopped");
    return 0;
  } catch (const std::exception& e) {
    // A store that cannot be opened or created, an unreadable token file or certificate, an
    // address in use: what the operator gave is wrong, 2, as for a bad option.
    log::error(e.what());
    return serving ? 1 : 2;
  }
}
}  // namespace

int main(int argc, char** argv) {
  scalebench::log::set_component("coordinator");
  CommandLine c;
  if (const std::optional<int> exit_code = parse_command_line(argc, argv, c)) return *exit_code;
  set_process_limits();
  return serve(c);
}
