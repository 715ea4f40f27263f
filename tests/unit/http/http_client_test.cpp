#include "http/http_client.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"

namespace scalebench {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// A loopback HTTP server that counts the connections it accepts and answers each request with
// its path, keeping the connection open while the client asks, or closing it after
// `answers_per_connection` answers without saying so (as a server's idle deadline does).
class CountingServer {
 public:
  explicit CountingServer(int answers_per_connection = 1000) : answers_per_connection_(answers_per_connection) {
    acceptor_.open(tcp::v4());
    acceptor_.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    thread_ = std::thread([this] { accept_loop(); });
  }
  ~CountingServer() {
    stopping_ = true;
    beast::error_code ignored;
    // Wakes the blocking accept with a connection of our own.
    tcp::socket poke(ioc_);
    poke.connect(acceptor_.local_endpoint(), ignored);
    thread_.join();
    std::lock_guard lock(mutex_);
    for (auto& s : sockets_) s->close(ignored);
    for (auto& t : sessions_) t.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
  int connections() const { return connections_.load(); }

 private:
  void accept_loop() {
    for (;;) {
      auto socket = std::make_shared<tcp::socket>(ioc_);
      beast::error_code ec;
      acceptor_.accept(*socket, ec);
      if (stopping_ || ec) return;
      ++connections_;
      std::lock_guard lock(mutex_);
      sockets_.push_back(socket);
      sessions_.emplace_back([this, socket] { serve(*socket); });
    }
  }
  void serve(tcp::socket& socket) {
    beast::flat_buffer buffer;
    for (int answered = 0; answered < answers_per_connection_; ++answered) {
      http::request<http::string_body> req;
      beast::error_code ec;
      http::read(socket, buffer, req, ec);
      if (ec) return;
      http::response<http::string_body> res{http::status::ok, 11};
      res.body() = std::string(req.target());
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec || !req.keep_alive()) break;
    }
    beast::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
  }

  const int answers_per_connection_;
  net::io_context ioc_;
  tcp::acceptor acceptor_{ioc_};
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::mutex mutex_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;
  std::vector<std::thread> sessions_;
  std::thread thread_;
};

TEST(HttpClient, KeepsItsConnectionAliveBetweenRequests) {
  CountingServer server;
  HttpClient client(server.url(), std::chrono::seconds(5));
  for (int i = 0; i < 5; ++i) {
    const HttpResponse r = client.request("GET", "/r" + std::to_string(i));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "/r" + std::to_string(i));
  }
  EXPECT_EQ(server.connections(), 1);
  HttpClient copy = client;  // copies share the idle connections
  EXPECT_EQ(copy.request("GET", "/copy").body, "/copy");
  EXPECT_EQ(server.connections(), 1);
}

// A kept connection the server has closed meanwhile (its idle deadline) costs nothing but a new
// connection: the request is answered.
TEST(HttpClient, SendsAgainOnANewConnectionWhenTheServerClosedTheKeptOne) {
  CountingServer server(/*answers_per_connection=*/1);
  HttpClient client(server.url(), std::chrono::seconds(5));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(client.request("POST", "/p" + std::to_string(i), "{}").body, "/p" + std::to_string(i));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the close reaches the client
  }
  EXPECT_EQ(server.connections(), 3);
}

TEST(HttpClient, RequestsFromSeveralThreadsEachHaveAConnection) {
  CountingServer server;
  HttpClient client(server.url(), std::chrono::seconds(5));
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string path = "/t" + std::to_string(t) + "/" + std::to_string(i);
        if (client.request("GET", path).body == path) ++right;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(right.load(), 80);
  EXPECT_LE(server.connections(), 8) << "connections are reused, not one per request";
}

// A reverse proxy's location: every request goes under the URL's path.
TEST(HttpClient, SendsEveryRequestUnderTheURLsPathPrefix) {
  CountingServer server;
  HttpClient client(server.url() + "/scalebench/", std::chrono::seconds(5));
  EXPECT_EQ(client.request("GET", "/api/v1/agents").body, "/scalebench/api/v1/agents");
  EXPECT_EQ(client.base_url(), server.url() + "/scalebench");
}

TEST(HttpClient, TakesAnIPv6AddressInBrackets) {
  EXPECT_EQ(HttpClient("http://[::1]:8470").base_url(), "http://[::1]:8470");
  EXPECT_EQ(HttpClient("http://[fe80::1]:80/p").base_url(), "http://[fe80::1]:80/p");
}

// A malformed URL is the input's fault (the CLI exits 2), never taken for an unreachable server.
TEST(HttpClient, AMalformedURLIsAnErrorNamingIt) {
  for (const std::string url : {"127.0.0.1", "http://127.0.0.1", "http://127.0.0.1:", "ftp://h:21", "http://::1:8470",
                                "http://[::1", "http://[::1]8470", "http://h:99999", "http://h:80x", "http://:8470"}) {
    try {
      HttpClient client(url);
      ADD_FAILURE() << url << " was taken";
    } catch (const UnreachableError&) {
      ADD_FAILURE() << url << ": unreachable instead of malformed";
    } catch (const RefusedError&) {
      ADD_FAILURE() << url << ": refused instead of malformed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + url + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(HttpClient, AServerThatIsNotThereIsUnreachable) {
  HttpClient client("http://127.0.0.1:1", std::chrono::seconds(2));
  EXPECT_THROW(client.request("GET", "/"), UnreachableError);
}

TEST(HttpClient, AnAnswerThatIsNotTheAPIsIsARefusal) {
  CountingServer server;
  HttpClient client(server.url(), std::chrono::seconds(5));
  try {
    client.get_json("/not-json");
    ADD_FAILURE() << "a text answer was taken for JSON";
  } catch (const RefusedError& e) {
    EXPECT_EQ(e.status(), 200);
  }
}

}  // namespace
}  // namespace scalebench
