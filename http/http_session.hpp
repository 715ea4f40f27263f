#pragma once
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <functional>
#include <memory>
#include <optional>

#include "http/http_server.hpp"

namespace scalebench {

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

// One client connection, plain or TLS: (TLS: the handshake, within the read deadline,) then read
// a request (deadline, size limit), answer it, repeat while the client keeps the connection alive.
template <class Stream>
class HttpSession : public std::enable_shared_from_this<HttpSession<Stream>> {
 public:
  // `tls` is the server's TLS context for a TlsStream, unused for a PlainStream.
  HttpSession(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<HttpHandler> handler,
              boost::asio::ssl::context* tls, std::shared_ptr<HeavyRequests> heavy,
              std::shared_ptr<HeaderCheck> header_check, std::shared_ptr<StreamHandler> streams,
              std::shared_ptr<ServerBudget> budget);
  ~HttpSession();
  void run();

 private:
  void on_handshake(boost::beast::error_code ec);
  void do_read();
  void on_header(boost::beast::error_code ec, std::size_t bytes);
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  // Makes the answer to the request read (on the thread of its lane), then answers on the
  // connection's executor.
  void handle();
  void respond(std::shared_ptr<HttpResponseMsg> res);
  // An answer in parts: its head, then each part made on the request's lane and written in turn.
  void start_stream(std::shared_ptr<StreamedAnswer> answer);
  void next_part(boost::beast::error_code ec, std::size_t bytes);
  void write_part(std::shared_ptr<std::string> part);
  // Runs `work` where the request is handled: its heavy pool, or here.
  void on_lane(std::function<void()> work);
  // Answers `res` and closes: a request refused before its body was read.
  void refuse(HttpResponseMsg res);
  void release_body();
  void release_answer();
  void on_write(bool close, boost::beast::error_code ec, std::size_t bytes);
  void do_close();
  boost::beast::tcp_stream& tcp() { return boost::beast::get_lowest_layer(stream_); }

  // The read buffer: kept at what headers take between requests, grown to kBodyBuffer while a
  // larger body is read (beast reads at most 64 KiB at once).
  static constexpr std::size_t kHeaderBuffer = HttpServer::kHeaderLimit;
  static constexpr std::size_t kBodyBuffer = 64 * 1024;

  Stream stream_;
  boost::beast::flat_buffer buffer_;
  std::shared_ptr<HttpHandler> handler_;
  std::shared_ptr<HeavyRequests> heavy_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<HttpResponseMsg> response_;
  std::shared_ptr<HeaderCheck> header_check_;
  std::shared_ptr<StreamHandler> streams_;
  std::shared_ptr<ServerBudget> budget_;
  std::size_t body_reserved_ = 0;    // of budget_->bodies, for the request being read or handled
  std::size_t answer_reserved_ = 0;  // of budget_->answers, for the answer being written
  int lane_ = -1;                    // the pool the request is handled on (-1: this connection's thread)
  // An answer in parts: the answer, the serializer of its head, and the part being written.
  std::shared_ptr<StreamedAnswer> stream_answer_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::string_body>> head_writer_;
  std::shared_ptr<std::string> part_;
};

}  // namespace scalebench
