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
}  // namespace

int main(int argc, char** argv) {
  using namespace scalebench;
  log::set_component("coordinator");
  std::string listen = "127.0.0.1", port_file, token_file, tls_cert, tls_key;
  bool protect_metrics = false;
  int port = 8470, threads_n = 4, record_threads = 2, record_nice = 5;
  long long max_connections = 16384, body_budget_mib = 256, answer_budget_mib = 128;
  Coordinator::Options options;
  options.db_path = "scalebench.db";
  CLI::App app("scalebench-coordinator: the HTTP API, scheduler, store and /metrics of a scalebench cluster.",
               "scalebench-coordinator");
  app.footer(
      "Examples:\n"
      "  scalebench-coordinator --db /var/lib/scalebench/scalebench.db\n"
      "  scalebench-coordinator --listen 0.0.0.0 --token-file tokens --tls-cert cert.pem --tls-key key.pem\n"
      "Exit codes: 0 stopped by SIGINT or SIGTERM; 1 failed while serving; 2 bad options, store, tokens,\n"
      "certificate or descriptor limit; 3 the store is damaged (SQLite's integrity check failed: read what it\n"
      "holds with `scalebench results --db FILE`).");
  add_standard_options(app, "scalebench-coordinator");
  app.add_option("--listen", listen, "address to listen on")->capture_default_str()->type_name("ADDR");
  app.add_option("--port", port, "port; 0 picks a free one")->capture_default_str()->check(CLI::Range(0, 65535));
  app.add_option("--port-file", port_file, "write the port actually used here once listening")->type_name("FILE");
  app.add_option("--db", options.db_path, "SQLite store")->capture_default_str()->type_name("FILE");
  app.add_option("--heartbeat-interval", options.heartbeat_interval_s, "seconds between agent heartbeats")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("--heartbeat-timeout", options.heartbeat_timeout_s,
                 "an agent silent this many seconds is lost, and its runs fail")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--token-file", token_file, "bearer tokens, one \"ROLE TOKEN\" a line (ROLE: agent, user, read)")
      ->type_name("FILE");
  app.add_flag("--protect-metrics", protect_metrics, "/metrics wants a read token too");
  app.add_option("--threads", threads_n, "threads serving connections, each its own share of them")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--record-threads", record_threads, "threads storing posted record batches")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--record-nice", record_nice,
                 "how much lower the record threads' CPU priority is (a nice increment): on a busy core, heartbeats "
                 "then run first; 0 for the same")
      ->capture_default_str()
      ->check(CLI::Range(0, 19));
  app.add_option("--max-connections", max_connections,
                 "connections served at once, at most the descriptor limit less those in use; past them a 503 with "
                 "Retry-After")
      ->capture_default_str()
      ->check(CLI::Range(1LL, 1000000LL));
  // At least one largest body (8 MiB) fits.
  app.add_option("--body-budget-mib", body_budget_mib, "request bodies held at once, all connections together")
      ->capture_default_str()
      ->check(CLI::Range(8LL, 65536LL));
  // At least one largest page of runs (a few MiB) and one streamed answer's part fit.
  app.add_option("--answer-budget-mib", answer_budget_mib,
                 "answers made and not yet read by their clients, all connections together; past it a 503 "
                 "with Retry-After")
      ->capture_default_str()
      ->check(CLI::Range(8LL, 65536LL));
  auto* cert =
      app.add_option("--tls-cert", tls_cert, "serve https only, with this PEM certificate (chain)")->type_name("FILE");
  auto* key = app.add_option("--tls-key", tls_key, "... and its PEM private key")->type_name("FILE");
  cert->needs(key);
  key->needs(cert);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e, "scalebench-coordinator");
  }
  // A file-size limit reached (ulimit -f) is then a failed write, which the store reports like a
  // full disk, instead of a signal that kills the coordinator mid-transaction.
  signal(SIGXFSZ, SIG_IGN);
  // Under an address-space limit (ulimit -v), two malloc arenas: each further thread's arena
  // reserves 64 MiB of address space, and the coordinator's threads held 550 MiB of a 1 GiB limit
  // with 12 MB in use, before any submission.
  if (rlimit as{}; getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) mallopt(M_ARENA_MAX, 2);
  bool serving = false;  // until then, an error is the configuration's (exit 2), after it the run's (1)
  try {
    AccessTokens tokens = load_access_tokens(token_file);
    tokens.protect_metrics = protect_metrics;
    // Certificate problems stop the start, before the store is opened.
    auto tls = tls_cert.empty() ? nullptr : make_tls_server_context(tls_cert, tls_key);
    // A damaged store is not written to (a write may spread the damage): the coordinator does not
    // start, says what SQLite's check found and how to read what the store still holds. Agents keep
    // their records in their journals meanwhile.
    if (auto damage = store_damage_at_start(options.db_path); !damage.empty()) {
      for (const auto& line : damage) log::error(line);
      return kExitStoreDamaged;
    }
    Coordinator coordinator(options);
    // Every agent keeps a connection open (its client keeps them alive): a cluster of a thousand
    // agents needs more descriptors than the usual soft limit of 1,024.
    rlimit nofile{};
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
      nofile.rlim_cur = nofile.rlim_max;
      setrlimit(RLIMIT_NOFILE, &nofile);
    }
    boost::asio::io_context ioc;
    // Each serving thread has its own event loop and connections: a request is read, handled and
    // answered on the thread that saw it arrive, with no other thread woken to take it (those
    // hand-offs were a quarter of the coordinator's time under load). Record batches, which take
    // milliseconds, go to threads of their own, so that the heartbeats on a thread's other
    // connections do not wait for them. `ioc` accepts connections and runs the liveness timer.
    std::vector<std::unique_ptr<boost::asio::io_context>> worker_ctx;
    std::vector<boost::asio::io_context*> workers;
    for (int i = 0; i < threads_n; ++i) {
      worker_ctx.push_back(std::make_unique<boost::asio::io_context>(1));
      workers.push_back(worker_ctx.back().get());
    }
    auto address = boost::asio::ip::make_address(listen);
    auto server = std::make_shared<HttpServer>(
        ioc, boost::asio::ip::tcp::endpoint(address, static_cast<unsigned short>(port)),
        [&](const HttpRequest& r) { return handle_api(coordinator, r, tokens); }, tls, workers);
    // Record batches on record_threads, every call that may wait on two more (api_lane): a
    // connection thread only ever runs heartbeats, which wait 20 ms at most. The record threads
    // run at a lower priority: on a core they share, a heartbeat that arrives while a batch is
    // stored is answered first instead of after the scheduler's time slice.
    server->set_lanes(api_lane, {record_threads, 2}, {record_nice, 0});
    server->set_header_check([&](const HttpRequest& r) { return check_access(r, tokens); });
    server->set_streams([&](const HttpRequest& r) { return stream_api(coordinator, r, tokens); });
    // Past the descriptor limit new clients would wait unanswered; below it they get a 503.
    const ConnectionLimit connections = connection_limit(static_cast<std::size_t>(max_connections));
    if (connections.connections == 0)
      throw Error("the descriptor limit (ulimit -n) is " + std::to_string(connections.fd_limit) + ", " +
                  std::to_string(connections.fds_open) + " are open and " + std::to_string(kSpareDescriptors) +
                  " are kept spare: no room for a connection; raise the limit");
    if (connections.clamped) log::warn("--max-connections: " + connections.note);
    server->set_limits(connections.connections, static_cast<std::size_t>(body_budget_mib) << 20,
                       static_cast<std::size_t>(answer_budget_mib) << 20);
    server->start();
    serving = true;
    const unsigned short actual = server->port();
    if (!port_file.empty()) {
      std::string tmp = port_file + ".tmp";
      std::ofstream(tmp) << actual << "\n";
      std::rename(tmp.c_str(), port_file.c_str());  // readers never see a half-written file
    }
    log::info(std::string("listening on ") + (tls ? "https://" : "http://") + listen + ":" + std::to_string(actual) +
              ", store " + options.db_path + ", " + (tls ? "TLS certificate " + tls_cert + ", " : std::string()) +
              (tokens.any() ? std::to_string(tokens.agent.size()) + " agent, " + std::to_string(tokens.user.size()) +
                                  " user, " + std::to_string(tokens.read.size()) + " read token(s)"
                            : "no tokens"));
    if (!tokens.any() && !address.is_loopback())
      log::warn("listening beyond loopback without tokens: anyone who reaches " + listen +
                " may register agents and submit; see --token-file");

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
      server->stop();
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
    server->join();                // the record batches under way are stored and answered (or their answer dropped)
    coordinator.save_last_seen();  // heartbeats keep them in memory between saves
    log::info("stopped");
    return 0;
  } catch (const std::exception& e) {
    // A store that cannot be opened or created, an unreadable token file or certificate, an
    // address in use: what the operator gave is wrong, 2, as for a bad option.
    log::error(e.what());
    return serving ? 1 : 2;
  }
}
