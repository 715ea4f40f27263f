#pragma once
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/http.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace scalebench {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponseMsg = boost::beast::http::response<boost::beast::http::string_body>;
using HttpHandler = std::function<HttpResponseMsg(const HttpRequest&)>;

// Which requests are handled off the connection threads, and the threads that handle them.
struct HeavyRequests {
  HeavyRequests(std::function<bool(const HttpRequest&)> w, int threads) : when(std::move(w)), pool(threads) {}
  std::function<bool(const HttpRequest&)> when;
  boost::asio::thread_pool pool;
};

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

  HttpServer(boost::asio::io_context& ioc, const boost::asio::ip::tcp::endpoint& endpoint, HttpHandler handler,
             std::shared_ptr<boost::asio::ssl::context> tls = nullptr,
             std::vector<boost::asio::io_context*> workers = {}, std::function<bool(const HttpRequest&)> heavy = {},
             int heavy_threads = 2);
  void start();
  void stop();
  // Waits for the heavy requests under way (after the executors stopped).
  void join();
  unsigned short port() const;

 private:
  void do_accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  std::vector<boost::asio::io_context*> workers_;
  std::size_t next_worker_ = 0;  // used on the acceptor's strand only
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<HttpHandler> handler_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  std::shared_ptr<HeavyRequests> heavy_;
};

}  // namespace scalebench
