#pragma once
#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace scalebench {

class HttpServer;

// The agent's Prometheus endpoint: GET /metrics answers `text()` in the text format, on a thread
// of its own. It serves with the HTTP server the coordinator uses too (http/http_server.hpp), so
// every request read has its deadline and size limits. The destructor stops listening and joins.
class MetricsEndpoint {
 public:
  // Listens on `address`:`port` (port 0: a free one, see port()). Throws Error when it cannot.
  MetricsEndpoint(const std::string& address, unsigned short port, std::function<std::string()> text);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  unsigned short port() const { return port_; }

 private:
  boost::asio::io_context ioc_;
  std::shared_ptr<HttpServer> server_;
  unsigned short port_ = 0;
  std::thread thread_;
};

}  // namespace scalebench
