#include "http/http_client.hpp"

#include <fcntl.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <cstdlib>
#include <mutex>
#include <optional>

#include "common/error.hpp"
#include "common/version.hpp"
#include "http/tls_context.hpp"

namespace scalebench {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// One connection to the server, plain or TLS, with its own io_context: the blocking calls run
// its asynchronous steps there so that the stream's deadline applies to each of them.
struct HttpClient::Connection {
  net::io_context ioc;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  bool connected = false;

  beast::tcp_stream& tcp() { return plain ? *plain : beast::get_lowest_layer(*tls); }
  ~Connection() {
    beast::error_code ignored;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);  // TLS: close_notify not waited for
  }
};

// Idle connections, most recent last. A client needs one per request in flight at once.
struct HttpClient::Pool {
  static constexpr std::size_t kMaxIdle = 4;
  std::mutex mutex;
  std::vector<std::unique_ptr<Connection>> idle;
};

HttpClient::HttpClient(std::string base_url, std::chrono::milliseconds timeout, std::size_t body_limit)
    : base_url_(std::move(base_url)), timeout_(timeout), body_limit_(body_limit), pool_(std::make_shared<Pool>()) {
  const std::string given = base_url_;
  auto bad = [&](const std::string& why) { return Error("coordinator URL '" + given + "': " + why); };
  std::string rest = base_url_;
  std::string scheme;
  for (const char* s : {"http://", "https://"})
    if (rest.rfind(s, 0) == 0) scheme = s;
  if (!scheme.empty())
    rest = rest.substr(scheme.size());
  else if (rest.find("://") != std::string::npos)
    throw bad("only http:// and https:// are supported");
  else
    scheme = "http://";
  // A path after HOST:PORT is a prefix every request goes under (a reverse proxy's location).
  auto slash = rest.find('/');
  if (slash != std::string::npos) {
    prefix_ = rest.substr(slash);
    rest = rest.substr(0, slash);
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
    if (prefix_.find_first_of("?#") != std::string::npos) throw bad("no query or fragment, only a path prefix");
  }
  std::size_t colon;
  if (!rest.empty() && rest.front() == '[') {  // IPv6: [ADDRESS]:PORT
    auto close = rest.find(']');
    if (close == std::string::npos) throw bad("an IPv6 address needs its closing ]");
    host_ = rest.substr(1, close - 1);
    colon = close + 1 < rest.size() && rest[close + 1] == ':' ? close + 1 : std::string::npos;
    if (close + 1 < rest.size() && colon == std::string::npos) throw bad("expected :PORT after ]");
  } else {
    colon = rest.find(':');
    if (colon != std::string::npos && rest.find(':', colon + 1) != std::string::npos)
      throw bad("write an IPv6 address in brackets, e.g. " + scheme + "[::1]:8470");
    host_ = rest.substr(0, colon);
  }
  if (host_.empty()) throw bad("missing HOST");
  if (colon == std::string::npos || colon + 1 == rest.size())
    throw bad("missing :PORT (e.g. " + scheme + "127.0.0.1:8470)");
  port_ = rest.substr(colon + 1);
  if (port_.find_first_not_of("0123456789") != std::string::npos || port_.size() > 5 || std::stoi(port_) > 65535)
    throw bad("port '" + port_ + "' is not a number from 0 to 65535");
  host_header_ = rest.substr(0, colon);  // with the brackets of an IPv6 address
  base_url_ = scheme + rest + prefix_;
  if (scheme == "https://") {
    const char* ca = std::getenv("SCALEBENCH_CA_FILE");
    set_ca_file(ca ? ca : "");
  }
}

void HttpClient::set_ca_file(const std::string& ca_file) {
  if (base_url_.rfind("https://", 0) != 0) return;  // plain http: nothing to check against
  tls_ = make_tls_client_context(ca_file);
  std::lock_guard lock(pool_->mutex);
  pool_->idle.clear();  // made with the previous trust
}

namespace {
// The server's certificate must name `host`: a DNS name (also sent as SNI) or an IP address.
void expect_host(SSL* ssl, const std::string& host) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  if (!ec) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    SSL_set_tlsext_host_name(ssl, host.c_str());
  }
}

// (Unless `connected`: resolve, connect and, for TLS, handshake, checking the certificate against
// the CA and the host name,) send `req`, read the answer into `parser`; all on `ioc`, run here to
// the end, under the stream's deadline. The first error, or success, lands in `result`.
template <class Stream>
void exchange(net::io_context& ioc, Stream& stream, bool connected, const std::string& host, const std::string& port,
              http::request<http::string_body>& req, http::response_parser<http::string_body>& parser,
              beast::flat_buffer& buffer, beast::error_code& result) {
  auto send = [&] {
    http::async_write(stream, req, [&](beast::error_code ec, std::size_t) {
      if (ec) return void(result = ec);
      http::async_read(stream, buffer, parser, [&](beast::error_code ec, std::size_t) { result = ec; });
    });
  };
  tcp::resolver resolver(ioc);
  if (connected) {
    send();
  } else {
    resolver.async_resolve(host, port, [&, send](beast::error_code ec, tcp::resolver::results_type results) {
      if (ec) return void(result = ec);
      beast::get_lowest_layer(stream).async_connect(results, [&, send](beast::error_code ec, const tcp::endpoint&) {
        if (ec) return void(result = ec);
        // Not inherited by the workloads the agent starts.
        ::fcntl(beast::get_lowest_layer(stream).socket().native_handle(), F_SETFD, FD_CLOEXEC);
        if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
          send();
        } else {
          stream.async_handshake(net::ssl::stream_base::client, [&, send](beast::error_code ec) {
            if (ec) return void(result = ec);
            send();
          });
        }
      });
    });
  }
  ioc.restart();
  ioc.run();
}
}  // namespace

HttpResponse HttpClient::request(std::string_view method, const std::string& target, const std::string& body,
                                 const std::string& content_type, const Headers& headers) const {
  http::request<http::string_body> req{http::string_to_verb(boost::beast::string_view(method.data(), method.size())),
                                       prefix_ + target, 11};
  req.set(http::field::host, host_header_ + ":" + port_);
  req.set(http::field::user_agent, std::string("scalebench/") + kVersion);
  if (!bearer_token_.empty()) req.set(http::field::authorization, "Bearer " + bearer_token_);
  for (const auto& [name, value] : headers) req.set(name, value);
  if (!body.empty() || method == "POST") {
    req.set(http::field::content_type, content_type);
    req.body() = body;
    req.prepare_payload();
  }
  const std::string where = std::string(method) + " " + base_url_ + target;

  std::unique_ptr<Connection> conn;
  {
    std::lock_guard lock(pool_->mutex);
    if (!pool_->idle.empty()) {
      conn = std::move(pool_->idle.back());
      pool_->idle.pop_back();
    }
  }
  std::optional<http::response_parser<http::string_body>> parser;
  beast::error_code result;
  for (;;) {
    const bool reused = conn != nullptr;
    if (!conn) {
      conn = std::make_unique<Connection>();
      if (tls_) {
        conn->tls.emplace(conn->ioc, *tls_);
        expect_host(conn->tls->native_handle(), host_);
      } else {
        conn->plain.emplace(conn->ioc);
      }
    }
    parser.emplace();
    parser->body_limit(body_limit_);
    result = {};
    conn->tcp().expires_after(timeout_);
    if (conn->tls)
      exchange(conn->ioc, *conn->tls, conn->connected, host_, port_, req, *parser, conn->buffer, result);
    else
      exchange(conn->ioc, *conn->plain, conn->connected, host_, port_, req, *parser, conn->buffer, result);
    conn->connected = true;
    // A kept connection the server closed meanwhile (its idle deadline, a restart) fails before
    // any answer: the request goes once more on a new connection. A deadline is not retried.
    if (result && reused && result != beast::error::timeout && !parser->got_some()) {
      conn.reset();
      continue;
    }
    break;
  }
  if (result == beast::error::timeout)
    throw UnreachableError(where + ": no answer within " + std::to_string(timeout_.count()) + " ms");
  if (result) throw UnreachableError(where + ": " + result.message());
  HttpResponse answer{static_cast<int>(parser->get().result_int()), std::move(parser->get().body())};
  if (parser->get().keep_alive() && !parser->need_eof()) {
    conn->tcp().expires_never();
    std::lock_guard lock(pool_->mutex);
    if (pool_->idle.size() < Pool::kMaxIdle) pool_->idle.push_back(std::move(conn));
  }
  return answer;
}

Json HttpClient::parse_answer(const std::string& method, const std::string& target, const HttpResponse& r) const {
  Json j;
  try {
    j = r.body.empty() ? Json::object() : Json::parse(r.body);
  } catch (const std::exception&) {
    throw RefusedError(
        method + " " + base_url_ + target + ": answer is not JSON (HTTP " + std::to_string(r.status) + ")", r.status);
  }
  if (r.status < 200 || r.status >= 300) {
    std::string msg = j.is_object() && j.contains("error") ? j["error"].get<std::string>() : r.body;
    throw RefusedError(msg + " (HTTP " + std::to_string(r.status) + " from " + base_url_ + target + ")", r.status);
  }
  return j;
}

Json HttpClient::get_json(const std::string& target) const {
  return parse_answer("GET", target, request("GET", target));
}

Json HttpClient::post_json(const std::string& target, const Json& body) const {
  return parse_answer("POST", target, request("POST", target, body.dump()));
}

}  // namespace scalebench
