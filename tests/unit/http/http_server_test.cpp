#include "http/http_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <string_view>
#include <thread>

#include "http/http_client.hpp"

namespace scalebench {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

// A body's size and a checksum of its bytes (FNV-1a), as /echo answers.
std::string summary(std::string_view body) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : body) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return std::to_string(body.size()) + ":" + std::to_string(h);
}

// A server whose connections all share one serving thread, with POST /slow marked heavy: its
// handler holds on until the test lets it go (or 3 s pass).
class OneWorkerServer {
 public:
  OneWorkerServer() : guard_(boost::asio::make_work_guard(worker_)) {
    server_ = std::make_shared<HttpServer>(
        accept_, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0),
        [this](const HttpRequest& req) { return answer(req); }, nullptr, std::vector{&worker_},
        [](const HttpRequest& req) { return req.target() == "/slow"; }, 1);
    server_->start();
    accept_thread_ = std::thread([this] { accept_.run(); });
    worker_thread_ = std::thread([this] { worker_.run(); });
  }
  ~OneWorkerServer() {
    release_.store(true);
    accept_.stop();
    worker_.stop();
    accept_thread_.join();
    worker_thread_.join();
    server_->join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  std::atomic<bool> slow_started{false}, slow_finished{false};
  void release() { release_.store(true); }

 private:
  HttpResponseMsg answer(const HttpRequest& req) {
    HttpResponseMsg res{http::status::ok, 11};
    if (req.target() == "/slow") {
      slow_started.store(true);
      const auto until = std::chrono::steady_clock::now() + 3s;
      while (!release_.load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
      slow_finished.store(true);
      res.body() = "slow";
    } else if (req.target() == "/echo") {
      res.body() = summary(req.body());
    } else {
      res.body() = "fast";
    }
    return res;
  }
  boost::asio::io_context accept_, worker_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::shared_ptr<HttpServer> server_;
  std::thread accept_thread_, worker_thread_;
  std::atomic<bool> release_{false};
};

// A heavy request (a batch of records) does not hold back the other connections of its serving
// thread: a heartbeat on another connection is answered while the batch is still being handled,
// and the batch is answered on its own connection afterwards.
TEST(HttpServer, HeavyRequestLeavesItsThreadsOtherConnectionsServed) {
  OneWorkerServer server;
  auto slow = std::async(std::launch::async, [&] { return HttpClient(server.url()).request("POST", "/slow", "{}"); });
  for (int i = 0; i < 2000 && !server.slow_started.load(); ++i) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(server.slow_started.load());
  HttpResponse fast = HttpClient(server.url()).request("GET", "/fast");
  EXPECT_EQ(fast.status, 200);
  EXPECT_EQ(fast.body, "fast");
  EXPECT_FALSE(server.slow_finished.load()) << "the light request waited for the heavy one";
  server.release();
  HttpResponse answer = slow.get();
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "slow");
  // The server goes on serving after it.
  EXPECT_EQ(HttpClient(server.url()).request("GET", "/fast").body, "fast");
}

// Bodies larger than the read buffer (which grows for them and shrinks after) arrive whole, on a
// kept connection, between small requests, and with the next request already sent behind one.
TEST(HttpServer, LargeBodiesArriveWholeOnAKeptConnection) {
  OneWorkerServer server;
  auto body_of = [](std::size_t n) {
    std::string b(n, '\0');
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<char>((i * 2654435761u) >> 13);
    return b;
  };
  HttpClient client(server.url());
  for (const std::size_t n : {std::size_t{0}, std::size_t{300}, std::size_t{65536}, std::size_t{65537},
                              std::size_t{180000}, std::size_t{3} << 20, std::size_t{10}}) {
    const std::string body = body_of(n);
    const HttpResponse r = client.request("POST", "/echo", body, "application/octet-stream");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, summary(body)) << n << " bytes";
  }
  // A large request and a small one in one write: the small one waits in the buffer meanwhile.
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  const std::string port = server.url().substr(server.url().rfind(':') + 1);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(std::stoi(port))});
  const std::string big = body_of(200000);
  const std::string both = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(big.size()) +
                           "\r\n\r\n" + big + "GET /fast HTTP/1.1\r\nHost: t\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(both));
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> first, second;
  http::read(socket, buffer, first);
  http::read(socket, buffer, second);
  EXPECT_EQ(first.body(), summary(big));
  EXPECT_EQ(second.body(), "fast");
}

}  // namespace
}  // namespace scalebench
