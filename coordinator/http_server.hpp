#pragma once
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http.hpp>
#include <functional>
#include <memory>
#include <string>

namespace scalebench {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponseMsg = boost::beast::http::response<boost::beast::http::string_body>;
using HttpHandler = std::function<HttpResponseMsg(const HttpRequest&)>;

// Accepts connections and runs one session per connection. Each read has a deadline and the
// request body a size limit; the handler is called synchronously for each complete request.
// With a TLS context every connection is TLS (https only: plain HTTP fails the handshake).
class HttpServer : public std::enable_shared_from_this<HttpServer> {
 public:
  static constexpr std::size_t kBodyLimit = 8u << 20;
  static constexpr std::uint32_t kHeaderLimit = 16 * 1024;
  static constexpr int kReadTimeoutS = 30;

  HttpServer(boost::asio::io_context& ioc, const boost::asio::ip::tcp::endpoint& endpoint, HttpHandler handler,
             std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  void start();
  void stop();
  unsigned short port() const;

 private:
  void do_accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<HttpHandler> handler_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
};

}  // namespace scalebench
