#include "coordinator/http_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "common/http_client.hpp"

namespace scalebench {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

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

}  // namespace
}  // namespace scalebench
