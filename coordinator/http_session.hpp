#pragma once
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>

#include "coordinator/http_server.hpp"

namespace scalebench {

// One client connection: read a request (deadline, size limit), answer it, repeat while the
// client keeps the connection alive.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<HttpHandler> handler);
  void run();

 private:
  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  void on_write(bool close, boost::beast::error_code ec, std::size_t bytes);
  void do_close();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::shared_ptr<HttpHandler> handler_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<HttpResponseMsg> response_;
};

}  // namespace scalebench
