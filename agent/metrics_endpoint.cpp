#include "agent/metrics_endpoint.hpp"

#include <boost/asio/ip/address.hpp>

#include "common/error.hpp"
#include "common/log.hpp"
#include "http/http_server.hpp"

namespace scalebench {

namespace http = boost::beast::http;

namespace {

HttpResponseMsg answer(const HttpRequest& req, const std::function<std::string()>& text) {
  HttpResponseMsg res(http::status::ok, req.version());
  res.set(http::field::content_type, "text/plain");
  if (req.target() != "/metrics") {
    res.result(http::status::not_found);
    res.body() = "not found: the agent serves GET /metrics only\n";
  } else if (req.method() != http::verb::get) {
    res.result(http::status::method_not_allowed);
    res.set(http::field::allow, "GET");
    res.body() = "method not allowed: use GET\n";
  } else {
    res.set(http::field::content_type, "text/plain; version=0.0.4");
    res.body() = text();
  }
  return res;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(const std::string& address, unsigned short port, std::function<std::string()> text) {
  boost::system::error_code ec;
  auto ip = boost::asio::ip::make_address(address, ec);
  if (ec) throw Error("metrics address '" + address + "' is not an IP address: " + ec.message());
  server_ =
      std::make_shared<HttpServer>(ioc_, boost::asio::ip::tcp::endpoint(ip, port),
                                   [text = std::move(text)](const HttpRequest& req) { return answer(req, text); });
  server_->start();
  port_ = server_->port();
  thread_ = std::thread([this] {
    try {
      ioc_.run();
    } catch (const std::exception& e) {
      log::error(std::string("metrics endpoint: ") + e.what());
    }
  });
}

MetricsEndpoint::~MetricsEndpoint() {
  server_->stop();
  ioc_.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace scalebench
