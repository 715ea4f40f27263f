// libFuzzer target: raw bytes as one HTTP request, parsed with the limits the server's sessions
// set, then answered by the coordinator's API (a real coordinator on an in-memory store, with an
// agent registered and a run in flight, so that record posts reach the store). Any answer of 500
// or more to client input, any exception out of the handler, a crash or a sanitizer report is a
// bug: bad input must get a 4xx that says what is wrong.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "coordinator/api.hpp"
#include "coordinator/coordinator.hpp"
#include "http/http_server.hpp"

namespace {
using namespace scalebench;
namespace http = boost::beast::http;

Coordinator& coordinator() {
  static Coordinator* c = [] {
    auto* c = new Coordinator(Coordinator::Options{":memory:", 1.0, 1e9});
    c->register_agent(Json{{"name", "fuzz-agent"}, {"gpus", Json::array()}, {"slots", 2}});
    c->submit("name: fuzz\nworkload: collective\nparams: {op: all_reduce, max_bytes: 4KiB}\nrounds: 1000\n",
              "fuzz.yaml");
    c->heartbeat("fuzz-agent", Json{{"active", Json::array()}});  // run 1, attempt 1 starts
    return c;
  }();
  return *c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(HttpServer::kBodyLimit);
  parser.header_limit(HttpServer::kHeaderLimit);
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t used = 0;
  while (!ec && !parser.is_done() && used < size) {
    std::size_t n = parser.put(boost::asio::buffer(data + used, size - used), ec);
    if (n == 0) break;
    used += n;
  }
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  if (ec || !parser.is_done()) return 0;  // the session answers 400/413 and closes
  HttpResponseMsg res = handle_api(coordinator(), parser.get());
  if (res.result_int() >= 500) {
    std::fprintf(stderr, "HTTP %d to client input: %s\n", res.result_int(), res.body().c_str());
    std::abort();
  }
  return 0;
}
