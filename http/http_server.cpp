#include "http/http_server.hpp"

#include <malloc.h>

#include <boost/asio/strand.hpp>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/thread_priority.hpp"
#include "http/http_session.hpp"

namespace scalebench {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
HttpResponseMsg json_answer(http::status status, const std::string& error) {
  HttpResponseMsg res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.body() = "{\"error\":\"" + error + "\"}";
  res.keep_alive(false);
  res.prepare_payload();
  return res;
}

std::string endpoint_text(beast::tcp_stream& stream) {
  beast::error_code ec;
  auto remote = stream.socket().remote_endpoint(ec);
  return ec ? std::string("a client") : remote.address().to_string() + ":" + std::to_string(remote.port());
}
}  // namespace

HttpServer::HttpServer(net::io_context& ioc, const tcp::endpoint& endpoint, HttpHandler handler,
                       std::shared_ptr<net::ssl::context> tls, std::vector<net::io_context*> workers,
                       std::function<bool(const HttpRequest&)> heavy, int heavy_threads)
    : ioc_(ioc),
      workers_(std::move(workers)),
      acceptor_(net::make_strand(ioc)),
      handler_(std::make_shared<HttpHandler>(std::move(handler))),
      tls_(std::move(tls)),
      heavy_(heavy ? std::make_shared<HeavyRequests>(
                         [when = std::move(heavy)](const HttpRequest& r) { return when(r) ? 0 : -1; },
                         std::vector<int>{heavy_threads})
                   : nullptr),
      backoff_(acceptor_.get_executor()) {
  beast::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw Error("cannot listen on " + endpoint.address().to_string() + ":" + std::to_string(endpoint.port()) + ": " +
                ec.message());
}

bool MemoryBudget::reserve(std::size_t n) {
  std::size_t now = used.load();
  do {
    if (n > small && now + n > limit) return false;
  } while (!used.compare_exchange_weak(now, now + n));
  return true;
}

void MemoryBudget::release(std::size_t n) {
  if (n == 0) return;
  used.fetch_sub(n);
  freed(n);
}

void MemoryBudget::freed(std::size_t n) {
  const std::size_t since = released_since_trim_.fetch_add(n) + n;
  // Trimming walks every arena: only once the last buffer of a burst is gone, not per buffer.
  if (used.load() == 0 && since >= (1u << 20) && released_since_trim_.exchange(0) > 0) malloc_trim(0);
}

void HttpServer::set_lanes(std::function<int(const HttpRequest&)> lane, const std::vector<int>& threads,
                           const std::vector<int>& nice) {
  heavy_ = std::make_shared<HeavyRequests>(std::move(lane), threads, nice);
}
void HttpServer::set_header_check(HeaderCheck check) {
  header_check_ = std::make_shared<HeaderCheck>(std::move(check));
}
void HttpServer::set_streams(StreamHandler streams) { streams_ = std::make_shared<StreamHandler>(std::move(streams)); }
void HttpServer::set_limits(std::size_t max_connections, std::size_t body_bytes, std::size_t answer_bytes) {
  budget_->max_connections = max_connections;
  budget_->bodies.limit = body_bytes;
  budget_->answers.limit = answer_bytes;
}

void HttpServer::start() { do_accept(); }

void HttpServer::stop() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ec;
    self->acceptor_.close(ec);
  });
}

void HttpServer::join() {
  if (heavy_)
    for (auto& pool : heavy_->pools) pool->join();
}

void HttpServer::log_limited(const std::string& what) {
  const auto t = std::chrono::steady_clock::now();
  if (t - last_log_ < std::chrono::seconds(1)) {
    ++unlogged_;
    return;
  }
  log::warn(what + (unlogged_ ? " (and " + std::to_string(unlogged_) + " more in the last second or more)" : ""));
  unlogged_ = 0;
  last_log_ = t;
}

void HttpServer::refuse(tcp::socket& socket) {
  static const std::string answer =
      "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: 45\r\n\r\n{\"error\":\"too many connections; retry later\"}";
  static_assert(sizeof("{\"error\":\"too many connections; retry later\"}") - 1 == 45);
  beast::error_code ec;
  socket.non_blocking(true, ec);
  if (!ec) socket.write_some(net::buffer(answer), ec);  // a full send buffer drops it: the client sees a close
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

unsigned short HttpServer::port() const { return acceptor_.local_endpoint().port(); }

void HttpServer::do_accept() {
  net::io_context& on = workers_.empty() ? ioc_ : *workers_[next_worker_++ % workers_.size()];
  acceptor_.async_accept(net::make_strand(on), beast::bind_front_handler(&HttpServer::on_accept, shared_from_this()));
}

void HttpServer::on_accept(beast::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec == net::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
      ec == net::error::no_buffer_space || ec == net::error::no_memory) {
    // Out of descriptors (or memory): the pending connection stays queued, so accepting again at
    // once fails again at once. Wait a moment; connections that close meanwhile free some.
    log_limited("accept: " + ec.message() + "; accepting again in 100 ms");
    backoff_.expires_after(std::chrono::milliseconds(100));
    backoff_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (!wait_ec) self->do_accept();
    });
    return;
  }
  if (ec) {
    log_limited("accept: " + ec.message());
  } else if (budget_->connections.load() >= budget_->max_connections) {
    log_limited("refused a connection: " + std::to_string(budget_->max_connections) + " are open (the limit)");
    refuse(socket);
  } else if (tls_) {
    std::make_shared<HttpSession<TlsStream>>(std::move(socket), handler_, tls_.get(), heavy_, header_check_, streams_,
                                             budget_)
        ->run();
  } else {
    std::make_shared<HttpSession<PlainStream>>(std::move(socket), handler_, nullptr, heavy_, header_check_, streams_,
                                               budget_)
        ->run();
  }
  do_accept();
}

namespace {
template <class Stream>
Stream make_stream(tcp::socket&& socket, net::ssl::context* tls) {
  if constexpr (std::is_same_v<Stream, TlsStream>)
    return Stream(std::move(socket), *tls);
  else
    return Stream(std::move(socket));
}
}  // namespace

template <class Stream>
HttpSession<Stream>::HttpSession(tcp::socket&& socket, std::shared_ptr<HttpHandler> handler, net::ssl::context* tls,
                                 std::shared_ptr<HeavyRequests> heavy, std::shared_ptr<HeaderCheck> header_check,
                                 std::shared_ptr<StreamHandler> streams, std::shared_ptr<ServerBudget> budget)
    : stream_(make_stream<Stream>(std::move(socket), tls)),
      handler_(std::move(handler)),
      heavy_(std::move(heavy)),
      header_check_(std::move(header_check)),
      streams_(std::move(streams)),
      budget_(std::move(budget)) {
  ++budget_->connections;
}

template <class Stream>
HttpSession<Stream>::~HttpSession() {
  // What the budgets counted is freed before they are told (they give freed pages back).
  parser_.reset();
  response_.reset();
  stream_answer_.reset();
  part_.reset();
  release_body();
  release_answer();
  --budget_->connections;
}

template <class Stream>
void HttpSession<Stream>::release_body() {
  budget_->bodies.release(body_reserved_);
  body_reserved_ = 0;
}

template <class Stream>
void HttpSession<Stream>::release_answer() {
  budget_->answers.release(answer_reserved_);
  answer_reserved_ = 0;
}

template <class Stream>
void HttpSession<Stream>::refuse(HttpResponseMsg res) {
  res.keep_alive(false);
  res.prepare_payload();
  response_ = std::make_shared<HttpResponseMsg>(std::move(res));
  http::async_write(stream_, *response_,
                    beast::bind_front_handler(&HttpSession::on_write, this->shared_from_this(), true));
}

template <class Stream>
void HttpSession<Stream>::run() {
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    // The handshake is a read like any other: it has the same deadline.
    tcp().expires_after(std::chrono::seconds(HttpServer::kReadTimeoutS));
    stream_.async_handshake(net::ssl::stream_base::server,
                            beast::bind_front_handler(&HttpSession::on_handshake, this->shared_from_this()));
  } else {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&HttpSession::do_read, this->shared_from_this()));
  }
}

template <class Stream>
void HttpSession<Stream>::on_handshake(beast::error_code ec) {
  // Plain HTTP, a wrong protocol version or an untrusted client end here: the connection closes.
  if (ec) {
    log::info("TLS handshake with " + endpoint_text(tcp()) + " failed: " + ec.message());
    beast::error_code ignored;
    tcp().socket().close(ignored);
    return;
  }
  do_read();
}

template <class Stream>
void HttpSession<Stream>::do_read() {
  parser_.reset();  // the previous request's body is freed, then its reservation given back
  release_body();
  parser_.emplace();
  parser_->body_limit(HttpServer::kBodyLimit);
  parser_->header_limit(HttpServer::kHeaderLimit);
  // A buffer of one request's headers is enough, unless a large body follows (on_header).
  if (buffer_.capacity() > kHeaderBuffer) buffer_.shrink_to_fit();
  // One deadline for the whole request, headers and body.
  tcp().expires_after(std::chrono::seconds(HttpServer::kReadTimeoutS));
  http::async_read_header(stream_, buffer_, *parser_,
                          beast::bind_front_handler(&HttpSession::on_header, this->shared_from_this()));
}

template <class Stream>
void HttpSession<Stream>::on_header(beast::error_code ec, std::size_t bytes) {
  if (ec) return on_read(ec, bytes);
  // Access is checked on the headers: a client without a valid token sends no body we keep.
  if (header_check_)
    if (auto refused = (*header_check_)(parser_->get())) return refuse(std::move(*refused));
  // The body's memory comes from one budget for all connections: past it, come back later.
  const auto length = parser_->content_length();
  const std::size_t need = length ? static_cast<std::size_t>(*length) : parser_->chunked() ? HttpServer::kBodyLimit : 0;
  if (need > HttpServer::kBodyLimit) return on_read(http::error::body_limit, bytes);
  if (need > 0) {
    if (!budget_->bodies.reserve(need)) {
      HttpResponseMsg res = json_answer(http::status::service_unavailable,
                                        "the server holds as many request bodies as it may; retry later");
      res.set(http::field::retry_after, "1");
      return refuse(std::move(res));
    }
    body_reserved_ = need;
    parser_->body_limit(need);  // a chunked body is held to what was reserved for it
  }
  // Beast reads a body no more at a time than the buffer holds already (512 bytes after the
  // headers): a batch of records of 180 KB took 350 reads, each a system call, a wake-up of the
  // event loop and a timer update. A large body is read in parts of up to kBodyBuffer instead.
  if (length && *length > buffer_.capacity())
    buffer_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*length, kBodyBuffer)));
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&HttpSession::on_read, this->shared_from_this()));
}

template <class Stream>
void HttpSession<Stream>::on_read(beast::error_code ec, std::size_t) {
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::connection_reset ||
      ec == net::ssl::error::stream_truncated)
    return do_close();
  if (ec) {
    // Too large or malformed: say so once, then close.
    const bool body_big = ec == http::error::body_limit, header_big = ec == http::error::header_limit;
    response_ =
        std::make_shared<HttpResponseMsg>(json_answer(body_big     ? http::status::payload_too_large
                                                      : header_big ? http::status::request_header_fields_too_large
                                                                   : http::status::bad_request,
                                                      body_big     ? "request body over 8 MiB"
                                                      : header_big ? "request headers over 16 KiB"
                                                                   : "malformed HTTP request"));
    return http::async_write(stream_, *response_,
                             beast::bind_front_handler(&HttpSession::on_write, this->shared_from_this(), true));
  }
  const HttpRequest& req = parser_->get();
  lane_ = heavy_ ? heavy_->lane(req) : -1;
  if (lane_ >= static_cast<int>(heavy_ ? heavy_->pools.size() : 0)) lane_ = -1;
  on_lane([self = this->shared_from_this()] { self->handle(); });
}

template <class Stream>
void HttpSession<Stream>::on_lane(std::function<void()> work) {
  // A heavy request is handled on a pool thread; its answer is written back on this connection's
  // executor (dispatch: at once when already there).
  if (lane_ >= 0) {
    const auto pool = static_cast<std::size_t>(lane_);
    return net::post(*heavy_->pools[pool], [nice = heavy_->nice[pool], work = std::move(work)] {
      lower_this_thread_priority(nice);  // the pool's threads run nothing else: once each
      work();
    });
  }
  work();
}

template <class Stream>
void HttpSession<Stream>::handle() {
  const HttpRequest& req = parser_->get();
  if (streams_)
    if (auto answer = (*streams_)(req)) {
      auto shared = std::make_shared<StreamedAnswer>(std::move(*answer));
      return net::dispatch(stream_.get_executor(),
                           [self = this->shared_from_this(), shared] { self->start_stream(shared); });
    }
  auto res = std::make_shared<HttpResponseMsg>((*handler_)(req));
  net::dispatch(stream_.get_executor(),
                [self = this->shared_from_this(), res = std::move(res)]() mutable { self->respond(std::move(res)); });
}

namespace {
HttpResponseMsg answers_full() {
  HttpResponseMsg res =
      json_answer(http::status::service_unavailable, "the server holds as many answers as it may; retry later");
  res.set(http::field::retry_after, "1");
  return res;
}
}  // namespace

template <class Stream>
void HttpSession<Stream>::respond(std::shared_ptr<HttpResponseMsg> res) {
  const HttpRequest& req = parser_->get();
  // The answer waits in memory until the client has read it: past the budget, the client comes
  // back later (and the answer's memory is given back at once).
  if (!budget_->answers.reserve(res->body().size())) {
    const std::size_t made = res->body().size();
    res = std::make_shared<HttpResponseMsg>(answers_full());
    budget_->answers.freed(made);
  } else {
    answer_reserved_ = res->body().size();
  }
  res->keep_alive(req.keep_alive());
  res->prepare_payload();
  bool close = res->need_eof();
  // The read's deadline ran from the request's first byte; the answer gets its own: the read
  // deadline again, and a second more per MiB (a 50 MB answer to a slow reader was cut off).
  tcp().expires_after(std::chrono::seconds(HttpServer::kReadTimeoutS) + std::chrono::seconds(res->body().size() >> 20));
  response_ = res;
  http::async_write(stream_, *response_,
                    beast::bind_front_handler(&HttpSession::on_write, this->shared_from_this(), close));
}

template <class Stream>
void HttpSession<Stream>::start_stream(std::shared_ptr<StreamedAnswer> answer) {
  if (!budget_->answers.reserve(HttpServer::kStreamReserve))
    return respond(std::make_shared<HttpResponseMsg>(answers_full()));
  answer_reserved_ = HttpServer::kStreamReserve;
  stream_answer_ = std::move(answer);
  response_ = std::make_shared<HttpResponseMsg>(std::move(stream_answer_->head));
  response_->body().clear();
  response_->keep_alive(parser_->get().keep_alive());
  response_->chunked(true);
  head_writer_.emplace(*response_);
  tcp().expires_after(std::chrono::seconds(HttpServer::kReadTimeoutS));
  http::async_write_header(stream_, *head_writer_,
                           beast::bind_front_handler(&HttpSession::next_part, this->shared_from_this()));
}

template <class Stream>
void HttpSession<Stream>::next_part(beast::error_code ec, std::size_t) {
  if (ec) return do_close();
  part_.reset();
  on_lane([self = this->shared_from_this()] {
    auto part = std::make_shared<std::string>();
    try {
      *part = self->stream_answer_->next();
    } catch (const std::exception& e) {
      log::error("an answer in parts ended early: " + std::string(e.what()));
      return net::dispatch(self->stream_.get_executor(), [self] {
        beast::error_code ignored;
        self->tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
        self->tcp().socket().close(ignored);
      });
    }
    net::dispatch(self->stream_.get_executor(), [self, part] { self->write_part(part); });
  });
}

template <class Stream>
void HttpSession<Stream>::write_part(std::shared_ptr<std::string> part) {
  // Each part has the read deadline, and a second more per MiB, like a whole answer.
  tcp().expires_after(std::chrono::seconds(HttpServer::kReadTimeoutS) + std::chrono::seconds(part->size() >> 20));
  if (part->empty()) {
    stream_answer_.reset();
    head_writer_.reset();
    return net::async_write(
        stream_, http::make_chunk_last(),
        beast::bind_front_handler(&HttpSession::on_write, this->shared_from_this(), !parser_->get().keep_alive()));
  }
  part_ = std::move(part);
  net::async_write(stream_, http::make_chunk(net::buffer(*part_)),
                   beast::bind_front_handler(&HttpSession::next_part, this->shared_from_this()));
}

template <class Stream>
void HttpSession<Stream>::on_write(bool close, beast::error_code ec, std::size_t) {
  // The answer freed first, then its reservation: the pages it held can then go back.
  response_.reset();
  release_answer();
  if (ec || close) return do_close();
  do_read();
}

template <class Stream>
void HttpSession<Stream>::do_close() {
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    // TLS close_notify, within a short deadline; the socket closes either way.
    tcp().expires_after(std::chrono::seconds(5));
    stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
      beast::error_code ignored;
      self->tcp().socket().close(ignored);
    });
  } else {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }
}

template class HttpSession<PlainStream>;
template class HttpSession<TlsStream>;

}  // namespace scalebench
