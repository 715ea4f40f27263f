#include "common/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/error.hpp"
#include "common/version.hpp"

namespace scalebench {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

HttpClient::HttpClient(std::string base_url, std::chrono::milliseconds timeout, std::size_t body_limit)
    : base_url_(std::move(base_url)), timeout_(timeout), body_limit_(body_limit) {
  std::string rest = base_url_;
  const std::string scheme = "http://";
  if (rest.rfind(scheme, 0) == 0)
    rest = rest.substr(scheme.size());
  else if (rest.find("://") != std::string::npos)
    throw Error("coordinator URL '" + base_url_ + "': only http:// is supported");
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos)
    throw Error("coordinator URL '" + base_url_ + "': give only http://HOST:PORT");
  auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon + 1 == rest.size())
    throw Error("coordinator URL '" + base_url_ + "': missing :PORT (e.g. http://127.0.0.1:8470)");
  host_ = rest.substr(0, colon);
  port_ = rest.substr(colon + 1);
  base_url_ = "http://" + rest;
}

HttpResponse HttpClient::request(std::string_view method, const std::string& target, const std::string& body,
                                 const std::string& content_type, const Headers& headers) const {
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  http::request<http::string_body> req{http::string_to_verb(boost::beast::string_view(method.data(), method.size())),
                                       target, 11};
  req.set(http::field::host, host_);
  req.set(http::field::user_agent, std::string("scalebench/") + kVersion);
  req.set(http::field::connection, "close");
  if (!bearer_token_.empty()) req.set(http::field::authorization, "Bearer " + bearer_token_);
  for (const auto& [name, value] : headers) req.set(name, value);
  if (!body.empty() || method == "POST") {
    req.set(http::field::content_type, content_type);
    req.body() = body;
    req.prepare_payload();
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(body_limit_);
  beast::flat_buffer buffer;
  beast::error_code result;
  const std::string where = std::string(method) + " " + base_url_ + target;

  // All steps run asynchronously on a private io_context so that the stream's deadline applies.
  tcp::resolver resolver(ioc);
  stream.expires_after(timeout_);
  resolver.async_resolve(host_, port_, [&](beast::error_code ec, tcp::resolver::results_type results) {
    if (ec) return void(result = ec);
    stream.async_connect(results, [&](beast::error_code ec, const tcp::endpoint&) {
      if (ec) return void(result = ec);
      http::async_write(stream, req, [&](beast::error_code ec, std::size_t) {
        if (ec) return void(result = ec);
        http::async_read(stream, buffer, parser, [&](beast::error_code ec, std::size_t) { result = ec; });
      });
    });
  });
  ioc.run();
  if (result == beast::error::timeout)
    throw Error(where + ": no answer within " + std::to_string(timeout_.count()) + " ms");
  if (result) throw Error(where + ": " + result.message());
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return {static_cast<int>(parser.get().result_int()), parser.get().body()};
}

Json HttpClient::parse_answer(const std::string& method, const std::string& target, const HttpResponse& r) const {
  Json j;
  try {
    j = r.body.empty() ? Json::object() : Json::parse(r.body);
  } catch (const std::exception&) {
    throw Error(method + " " + base_url_ + target + ": answer is not JSON (HTTP " + std::to_string(r.status) + ")");
  }
  if (r.status < 200 || r.status >= 300) {
    std::string msg = j.is_object() && j.contains("error") ? j["error"].get<std::string>() : r.body;
    throw Error(msg + " (HTTP " + std::to_string(r.status) + " from " + base_url_ + target + ")");
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
