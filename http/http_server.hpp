#pragma once
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/http.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scalebench {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponseMsg = boost::beast::http::response<boost::beast::http::string_body>;
using HttpHandler = std::function<HttpResponseMsg(const HttpRequest&)>;

// Which requests are handled off the connection threads, and the threads that handle them: `lane`
// says -1 (on the connection's thread) or the index of the pool that takes the request. A pool's
// `nice` (0 by default) lowers its threads' CPU priority by that much, for bulk work that should
// give way to the connection threads' short requests on a busy core.
struct HeavyRequests {
  HeavyRequests(std::function<int(const HttpRequest&)> l, const std::vector<int>& threads,
                std::vector<int> nice_by_pool = {})
      : lane(std::move(l)), nice(std::move(nice_by_pool)) {
    for (int n : threads) pools.push_back(std::make_unique<boost::asio::thread_pool>(n));
    nice.resize(pools.size(), 0);
  }
  std::function<int(const HttpRequest&)> lane;
  std::vector<std::unique_ptr<boost::asio::thread_pool>> pools;
  std::vector<int> nice;
};

// Memory that one kind of buffer (request bodies, answers) may take, all connections together.
struct MemoryBudget {
  MemoryBudget(std::size_t limit_bytes, std::size_t small_bytes) : limit(limit_bytes), small(small_bytes) {}
  std::size_t limit;
  // Buffers this small are always let in, so that large ones cannot starve the agents' small ones
  // (a heartbeat, a run's end): they are bounded by the connections' cap, and counted.
  const std::size_t small;
  std::atomic<std::size_t> used{0};
  // Reserves `n` bytes; false (nothing reserved) when the budget has no room.
  bool reserve(std::size_t n);
  // Gives `n` reserved bytes back. Once none are held and a MiB or more was given back since, the
  // freed pages go back to the system: glibc keeps them otherwise (200 unfinished 8 MiB bodies,
  // or a few 50 MB answers, stayed over a GB for good).
  void release(std::size_t n);
  // Counts `n` bytes freed that were never reserved (an answer refused once made).
  void freed(std::size_t n);

 private:
  std::atomic<std::size_t> released_since_trim_{0};
};

// What all connections of a server share: their count and the memory of their bodies and answers.
struct ServerBudget {
  std::size_t max_connections = 16384;
  std::atomic<std::size_t> connections{0};
  MemoryBudget bodies{256u << 20, 64 * 1024};   // request bodies being read or handled
  MemoryBudget answers{128u << 20, 64 * 1024};  // answers made and not yet written
};

// An answer sent in parts as they are made (chunked), for one too large to hold at once: `head`
// (its status and headers; its body is ignored) first, then each part `next` returns, until it
// returns an empty one. `next` runs where the request was handled (a heavy pool, see set_lanes);
// an exception from it ends the connection, so the client sees a chunked body cut short.
struct StreamedAnswer {
  HttpResponseMsg head;
  std::function<std::string()> next;
};
// Called before the handler: a StreamedAnswer takes the request, nullopt leaves it to the handler.
using StreamHandler = std::function<std::optional<StreamedAnswer>(const HttpRequest&)>;

// Called once a request's headers are read, before its body: an answer refuses the request
// (the body is never read), nullopt lets it through.
using HeaderCheck = std::function<std::optional<HttpResponseMsg>(const HttpRequest&)>;

// Accepts connections and runs one session per connection. Each read has a deadline and the
// request body a size limit; the handler is called synchronously for each complete request.
// With a TLS context every connection is TLS (https only: plain HTTP fails the handshake).
// Connections are served on `ioc`, or, given `workers`, each on one of them in turn (a connection
// stays on the worker it was given, so no other thread is woken to serve it). Requests for which
// `heavy` says true are handled on `heavy_threads` threads of their own, so that their
// connection's worker goes on serving the other connections meanwhile.
class HttpServer : public std::enable_shared_from_this<HttpServer> {
 public:
  static constexpr std::size_t kBodyLimit = 8u << 20;
  static constexpr std::uint32_t kHeaderLimit = 16 * 1024;
  static constexpr int kReadTimeoutS = 30;
  // What an answer in parts holds of the answer budget while it is written: one part at a time.
  static constexpr std::size_t kStreamReserve = 4u << 20;

  HttpServer(boost::asio::io_context& ioc, const boost::asio::ip::tcp::endpoint& endpoint, HttpHandler handler,
             std::shared_ptr<boost::asio::ssl::context> tls = nullptr,
             std::vector<boost::asio::io_context*> workers = {}, std::function<bool(const HttpRequest&)> heavy = {},
             int heavy_threads = 2);
  // Before start(): the pools that take requests off the connection threads (replacing `heavy`;
  // `nice`: see HeavyRequests), the check of each request's headers, the requests answered in
  // parts, and the limits on connections, buffered bodies and answers held at once.
  void set_lanes(std::function<int(const HttpRequest&)> lane, const std::vector<int>& threads,
                 const std::vector<int>& nice = {});
  void set_header_check(HeaderCheck check);
  void set_streams(StreamHandler streams);
  void set_limits(std::size_t max_connections, std::size_t body_bytes, std::size_t answer_bytes);
  void start();
  void stop();
  // Waits for the heavy requests under way (after the executors stopped).
  void join();
  unsigned short port() const;

 private:
  void do_accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);
  // Past max_connections: a 503 with Retry-After, written without waiting, and the socket closed.
  void refuse(boost::asio::ip::tcp::socket& socket);

  boost::asio::io_context& ioc_;
  std::vector<boost::asio::io_context*> workers_;
  std::size_t next_worker_ = 0;  // used on the acceptor's strand only
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<HttpHandler> handler_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  std::shared_ptr<HeavyRequests> heavy_;
  std::shared_ptr<HeaderCheck> header_check_;
  std::shared_ptr<StreamHandler> streams_;
  std::shared_ptr<ServerBudget> budget_ = std::make_shared<ServerBudget>();
  boost::asio::steady_timer backoff_;  // out of descriptors: accepting waits a moment
  // Repeated accept errors and refusals are logged once a second at most, with a count.
  std::chrono::steady_clock::time_point last_log_{};
  std::size_t unlogged_ = 0;
  void log_limited(const std::string& what);
};

}  // namespace scalebench
