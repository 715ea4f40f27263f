// scalebench-coordinator: the HTTP API, scheduler, store and /metrics of a scalebench cluster.
#include <sys/resource.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "coordinator/access.hpp"
#include "coordinator/api.hpp"
#include "coordinator/coordinator.hpp"
#include "http/http_server.hpp"
#include "http/tls_context.hpp"

namespace {
const char* kUsage = R"(usage: scalebench-coordinator [options]
  --listen ADDR            address to listen on (default 127.0.0.1)
  --port N                 port (default 8470; 0 picks a free one)
  --port-file FILE         write the port actually used here once listening
  --db FILE                SQLite store (default scalebench.db)
  --heartbeat-interval S   seconds between agent heartbeats (default 1)
  --heartbeat-timeout S    an agent silent this long is lost, and its runs fail (default 10)
  --token-file FILE        bearer tokens, one "ROLE TOKEN" a line (ROLE: agent, user, read)
  --protect-metrics        /metrics wants a read token too
  --threads N              threads serving connections, each its own share of them (default 4)
  --record-threads N       threads storing posted record batches (default 2)
  --max-connections N      connections served at once; past them a 503 with Retry-After (default 16384)
  --body-budget-mib N      request bodies held at once, all connections together (default 256)
  --tls-cert FILE          serve https only, with this PEM certificate (chain) ...
  --tls-key FILE           ... and its PEM private key (both or neither)
  --version
)";

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "scalebench-coordinator: " << msg << "\n" << kUsage;
  std::exit(2);
}
}  // namespace

int main(int argc, char** argv) {
  using namespace scalebench;
  log::set_component("coordinator");
  std::string listen = "127.0.0.1", port_file, token_file, tls_cert, tls_key;
  bool protect_metrics = false;
  int port = 8470, threads_n = 4, record_threads = 2;
  long long max_connections = 16384, body_budget_mib = 256;
  Coordinator::Options options;
  options.db_path = "scalebench.db";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--listen")
        listen = value();
      else if (a == "--port")
        port = std::stoi(value());
      else if (a == "--port-file")
        port_file = value();
      else if (a == "--db")
        options.db_path = value();
      else if (a == "--heartbeat-interval")
        options.heartbeat_interval_s = std::stod(value());
      else if (a == "--token-file")
        token_file = value();
      else if (a == "--tls-cert")
        tls_cert = value();
      else if (a == "--tls-key")
        tls_key = value();
      else if (a == "--threads")
        threads_n = std::stoi(value());
      else if (a == "--record-threads")
        record_threads = std::stoi(value());
      else if (a == "--max-connections")
        max_connections = std::stoll(value());
      else if (a == "--body-budget-mib")
        body_budget_mib = std::stoll(value());
      else if (a == "--protect-metrics")
        protect_metrics = true;
      else if (a == "--heartbeat-timeout")
        options.heartbeat_timeout_s = std::stod(value());
      else if (a == "--version") {
        std::cout << "scalebench-coordinator " << kVersion << " (" << kGitRevision << ")\n";
        return 0;
      } else if (a == "-h" || a == "--help") {
        std::cout << kUsage;
        return 0;
      } else
        usage_error("unknown option " + a);
    } catch (const std::logic_error&) {
      usage_error("bad value for " + a);
    }
  }
  if (port < 0 || port > 65535) usage_error("--port must be 0..65535");
  if (threads_n < 1 || threads_n > 256) usage_error("--threads must be 1..256");
  if (record_threads < 1 || record_threads > 256) usage_error("--record-threads must be 1..256");
  if (tls_cert.empty() != tls_key.empty()) usage_error("--tls-cert and --tls-key go together");
  if (max_connections < 1 || max_connections > 1000000) usage_error("--max-connections must be 1..1000000");
  // At least one largest body (8 MiB) fits.
  if (body_budget_mib < 8 || body_budget_mib > 65536) usage_error("--body-budget-mib must be 8..65536");
  // A file-size limit reached (ulimit -f) is then a failed write, which the store reports like a
  // full disk, instead of a signal that kills the coordinator mid-transaction.
  signal(SIGXFSZ, SIG_IGN);
  bool serving = false;  // until then, an error is the configuration's (exit 2), after it the run's (1)
  try {
    AccessTokens tokens = load_access_tokens(token_file);
    tokens.protect_metrics = protect_metrics;
    // Certificate problems stop the start, before the store is opened.
    auto tls = tls_cert.empty() ? nullptr : make_tls_server_context(tls_cert, tls_key);
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
    // connection thread only ever runs heartbeats, which wait 20 ms at most.
    server->set_lanes(api_lane, {record_threads, 2});
    server->set_header_check([&](const HttpRequest& r) { return check_access(r, tokens); });
    server->set_limits(static_cast<std::size_t>(max_connections), static_cast<std::size_t>(body_budget_mib) << 20);
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
