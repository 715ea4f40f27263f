#pragma once
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

struct HttpResponse {
  int status = 0;
  std::string body;
};

// A small blocking HTTP/1.1 client (Boost.Beast) for the agent and the CLI, over http:// or
// https:// (OpenSSL: the server's certificate is checked against the CA file, by default
// $SCALEBENCH_CA_FILE, else the system's trusted certificates, and must name the URL's host).
// The base URL is SCHEME://HOST:PORT[/PREFIX]: HOST may be an IPv6 address in brackets, and every
// target is sent under PREFIX (a reverse proxy's location). A malformed URL throws Error; a server
// that cannot be reached in time UnreachableError; a non-2xx answer to the JSON helpers RefusedError.
// Every request has a deadline and a response-size limit; failures throw Error naming the URL.
// Connections are kept alive between requests (a few idle ones, shared by copies of the client
// and safe to use from several threads); a request on a connection the server has closed
// meanwhile is sent once more on a new one, as an agent's outbox resends what was not answered.
class HttpClient {
 public:
  explicit HttpClient(std::string base_url, std::chrono::milliseconds timeout = std::chrono::seconds(10),
                      std::size_t body_limit = 64u << 20);

  using Headers = std::vector<std::pair<std::string, std::string>>;
  HttpResponse request(std::string_view method, const std::string& target, const std::string& body = "",
                       const std::string& content_type = "application/json", const Headers& headers = {}) const;
  // JSON helpers: throw Error with the server's message on a non-2xx answer.
  Json get_json(const std::string& target) const;
  Json post_json(const std::string& target, const Json& body) const;

  const std::string& base_url() const { return base_url_; }
  // Sent as "Authorization: Bearer TOKEN" with every request (never logged).
  void set_bearer_token(std::string token) { bearer_token_ = std::move(token); }
  // https:// only: trust the certificates in this PEM file ("" = the system's). Throws Error
  // naming a file that cannot be used.
  void set_ca_file(const std::string& ca_file);

 private:
  struct Connection;
  struct Pool;
  Json parse_answer(const std::string& method, const std::string& target, const HttpResponse& r) const;
  std::string base_url_;
  std::string host_;         // as resolved: an IPv6 address without its brackets
  std::string host_header_;  // as the Host header writes it
  std::string port_;
  std::string prefix_;  // a path every request goes under ("" or "/scalebench")
  std::chrono::milliseconds timeout_;
  std::size_t body_limit_;
  std::string bearer_token_;
  std::shared_ptr<boost::asio::ssl::context> tls_;  // set for https://
  std::shared_ptr<Pool> pool_;                      // idle connections to the server
};

}  // namespace scalebench
