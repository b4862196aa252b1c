// The HTTP server's connections (http/connection.h): a request's head and body read under
// their deadlines, checked before the body is read, answered inline or by a worker, the
// answer written, and a refused client's remaining bytes drained before the close.
#include "http/connection.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "core/percent.h"

namespace bk::http::detail {
namespace {

using parts::Exchange;
using parts::json_error;
using parts::Refusal;
using parts::seconds_text;
using parts::WorkerPool;

std::string_view view(boost::beast::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace

Connection::Connection(Server& server, tcp::socket socket)
    : server_(server), socket_(std::move(socket)), timer_(server.io), buffer_(kMaxBuffered) {
  error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);  // an answer goes out in one write
  socket_.non_blocking(true, ignored);               // for the 100 Continue, see expect_continue()
  const tcp::endpoint remote = socket_.remote_endpoint(ignored);
  if (!ignored) peer_ = remote.address().to_string();
}

Connection::~Connection() {
  release_share();
  if (phase_ != Phase::closed) server_.forget(this);
}

void Connection::start() {
  enter(Phase::head, server_.options.header_timeout);
  read();
}

void Connection::start_over_limit() {
  over_limit_ = true;
  enter(Phase::head, kOverLimitHead);
  read();
}

void Connection::refuse_over_limit() {
  refuse({503, "too many connections; try again shortly", {{"Retry-After", "1"}}});
}

void Connection::on_stop() {
  if (phase_ != Phase::working && phase_ != Phase::writing) close();
}

std::optional<std::chrono::steady_clock::time_point> Connection::waiting_since() const {
  if (phase_ != Phase::idle && phase_ != Phase::head) return std::nullopt;
  return since_;
}

void Connection::close() {
  if (phase_ == Phase::closed) return;
  phase_ = Phase::closed;
  ++generation_;
  timer_.cancel();
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  release_share();
  server_.forget(this);
}

void Connection::enter(Phase phase, Millis deadline) {
  phase_ = phase;
  since_ = std::chrono::steady_clock::now();
  const std::uint64_t armed = ++generation_;
  timer_.cancel();
  if (deadline.count() <= 0) return;
  timer_.expires_after(deadline);
  timer_.async_wait([self = shared_from_this(), armed](const error_code& ec) {
    if (!ec && armed == self->generation_) self->on_deadline();
  });
}

void Connection::on_deadline() {
  const auto& o = server_.options;
  switch (phase_) {
    case Phase::head:
      if (over_limit_) {
        refuse_over_limit();
      } else {
        refuse({408,
                "the request head did not arrive within " + seconds_text(o.header_timeout) + " s"});
      }
      break;
    case Phase::body:
      refuse(
          {408, "the request body did not arrive within " + seconds_text(o.body_timeout) + " s"});
      break;
    case Phase::idle:
    case Phase::writing:
    case Phase::lingering:
      close();
      break;
    case Phase::working:
    case Phase::closed:
      break;
  }
}

void Connection::read() {
  if (reading_ || phase_ == Phase::closed) return;
  const std::size_t room = std::min(kReadSize, buffer_.max_size() - buffer_.size());
  if (room == 0) {
    refuse(parts::head_too_large(kMaxHeaderBlock));
    return;
  }
  reading_ = true;
  socket_.async_read_some(
      buffer_.prepare(room),
      [self = shared_from_this()](const error_code& ec, std::size_t n) { self->on_read(ec, n); });
}

void Connection::on_read(const error_code& ec, std::size_t n) {
  reading_ = false;
  if (phase_ == Phase::closed) return;
  if (phase_ == Phase::lingering) {
    on_linger_read(ec, n);
    return;
  }
  // A read that completed before an answer (a 408 from the deadline, say) could cancel it
  // is dropped: the connection is answering now, and one answer is written at a time.
  if (phase_ != Phase::idle && phase_ != Phase::head && phase_ != Phase::body) return;
  if (ec == asio::error::operation_aborted) return;  // cancelled by whoever answers now
  if (ec) {
    close();  // the client went away (half a request is nothing to answer)
    return;
  }
  buffer_.commit(n);
  if (phase_ == Phase::idle) enter(Phase::head, server_.options.header_timeout);
  parse();
}

void Connection::parse() {
  for (;;) {
    if (!parser_) make_parser();
    if (buffer_.size() == 0) {
      read();
      return;
    }
    if (!line_ended_) line_ended_ = line_end_in_buffer();
    error_code ec;
    const std::size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec && ec != beast_http::error::need_more) {
      refuse(refusal_for(ec));
      return;
    }
    // (A chunked body can need more right after its head: the head is checked first.)
    if (parser_->is_header_done() && phase_ == Phase::head && !on_head()) return;
    if (parser_->is_done()) {
      // A chunked body that arrived with its head was read before on_head set its bound.
      if (parser_->get().body().size() > body_limit_) {
        refuse(parts::body_too_large(body_limit_));
        return;
      }
      dispatch();
      return;
    }
    if (ec || used == 0) {
      read();
      return;
    }
  }
}

bool Connection::line_end_in_buffer() const {
  const auto* data = static_cast<const char*>(buffer_.data().data());
  return parts::line_ends_within({data, buffer_.size()}, kMaxRequestLine);
}

void Connection::make_parser() {
  line_ended_ = false;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(kMaxRequestLine + kMaxHeaderBlock));
  parser_->body_limit(server_.options.max_body);
  body_limit_ = server_.options.max_body;
  parser_->eager(true);
}

Refusal Connection::refusal_for(const error_code& ec) const {
  if (ec == beast_http::error::header_limit) {
    // The head never ended: the request line, or the headers after it, are too long. (The
    // parser may have taken the line out of the buffer already: line_ended_ remembers it.)
    return line_ended_ || line_end_in_buffer() ? parts::head_too_large(kMaxHeaderBlock)
                                               : parts::line_too_long(kMaxRequestLine);
  }
  if (ec == beast_http::error::body_limit) return parts::body_too_large(body_limit_);
  return {400, "malformed request: " + ec.message()};
}

bool Connection::on_head() {
  const auto& m = parser_->get();
  if (auto problem = head_problem(m)) {
    refuse(std::move(*problem));
    return false;
  }
  if (!admitted(m)) return false;
  exchange_ = Exchange{};
  exchange_.head = m.method() == beast_http::verb::head;
  exchange_.read = exchange_.head || m.method() == beast_http::verb::get;
  exchange_.version = m.version();
  exchange_.keep_alive = m.keep_alive();
  if (const auto it = m.find(beast_http::field::origin); it != m.end()) {
    exchange_.origin = std::string(it->value());
  }
  if (!parser_->is_done()) {
    expect_continue(m);
    enter(Phase::body, server_.options.body_timeout);
  }
  return true;
}

bool Connection::admitted(const Message& m) {
  if (m.method() == beast_http::verb::options) {
    if (over_limit_) refuse_over_limit();
    return !over_limit_;
  }
  const Request head = head_of(m);
  const bool probe = server_.is_probe(head);
  if (over_limit_ && !probe) {
    refuse_over_limit();
    return false;
  }
  close_after_write_ = over_limit_;  // a probe over the limit: answered, then closed
  if (server_.options.admit) {
    if (const std::optional<Response> refused = server_.options.admit(head)) {
      refuse_with(*refused);
      return false;
    }
  }
  if (probe) return true;  // it never blocks and holds nothing: no share
  if (auto refusal = take_share(head)) {
    refuse(std::move(*refusal));
    return false;
  }
  return true;
}

std::optional<Refusal> Connection::take_share(const Request& head) {
  const std::size_t bytes = parser_->chunked()
                                ? body_limit_
                                : static_cast<std::size_t>(parser_->content_length().value_or(0));
  std::string key = server_.share_key(head);
  const Admission::Verdict verdict = server_.admission.admit(key, bytes);
  if (verdict != Admission::Verdict::admitted) {
    return parts::share_refusal(verdict, bytes, server_.admission.limits());
  }
  share_ = Share{std::move(key), bytes};
  server_.note_held();
  return std::nullopt;
}

void Connection::release_share() {
  if (!share_) return;
  server_.admission.release(share_->key, share_->body_bytes);
  share_.reset();
  server_.note_held();
}

std::optional<Refusal> Connection::head_problem(const Message& m) {
  if (m.version() / 10 != 1) {
    return Refusal{400, "HTTP/" + std::to_string(m.version() / 10) + "." +
                            std::to_string(m.version() % 10) +
                            " is not spoken here: send HTTP/1.1"};
  }
  const std::string_view method = view(m.method_string());
  const bool post = server_.options.post && method == "POST";
  const bool write = server_.options.put_delete && (method == "PUT" || method == "DELETE");
  if (method != "GET" && method != "HEAD" && method != "OPTIONS" && !post && !write) {
    return Refusal{
        405, "method not allowed (allowed: " + server_.allow + ")", {{"Allow", server_.allow}}};
  }
  const std::string_view target = view(m.target());
  if (target.size() > kMaxRequestLine) return parts::line_too_long(kMaxRequestLine);
  if (target.empty() || (target[0] != '/' && !(target == "*" && method == "OPTIONS"))) {
    return Refusal{400, "the request target must be a path starting with /"};
  }
  const std::size_t hosts = m.count(beast_http::field::host);
  if (hosts > 1 || (hosts == 0 && m.version() >= 11)) {
    return Refusal{400, "an HTTP/1.1 request needs exactly one Host header"};
  }
  for (const auto* name : {"Authorization", "Idempotency-Key", "Content-Type"}) {
    if (m.count(name) > 1)
      return Refusal{400, std::string("a request carries one ") + name + " header at most"};
  }
  std::size_t header_bytes = 0;
  for (const auto& field : m) header_bytes += field.name_string().size() + field.value().size() + 4;
  if (header_bytes > kMaxHeaderBlock) return parts::head_too_large(kMaxHeaderBlock);
  return body_problem(m, post || (write && method == "PUT"));
}

std::optional<Refusal> Connection::body_problem(const Message& m, bool post) {
  std::vector<std::string_view> codings;
  for (auto [it, end] = m.equal_range(beast_http::field::transfer_encoding); it != end; ++it)
    codings.push_back(view(it->value()));
  if (auto refusal = parts::transfer_coding_refusal(codings, m.version(), parser_->chunked()))
    return refusal;
  const bool has_body = parser_->chunked() || parser_->content_length().value_or(0) > 0;
  if (has_body && !post) {
    return Refusal{400, "a " + std::string(m.method_string()) + " request carries no body"};
  }
  if (m.method() == beast_http::verb::put) {  // a small body: its bound is checked now
    body_limit_ = server_.options.max_write_body;
    if (parser_->content_length().value_or(0) > body_limit_)
      return parts::body_too_large(body_limit_);
    parser_->body_limit(body_limit_);  // a chunked one
  }
  return std::nullopt;
}

void Connection::expect_continue(const Message& m) {
  const auto it = m.find(beast_http::field::expect);
  if (it == m.end() || !boost::beast::iequals(it->value(), "100-continue")) return;
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  error_code ec;
  const std::size_t n = socket_.write_some(asio::buffer(kContinue.data(), kContinue.size()), ec);
  if (ec || n != kContinue.size()) close_after_write_ = true;
}

void Connection::dispatch() {
  enter(Phase::working, Millis{0});
  Request request = take_request();
  if (request.method == "OPTIONS") {
    answer(server_.options_answer(exchange_));
  } else if (server_.is_inline(request.path)) {
    answer(server_.run(request));
  } else {
    WorkerPool& lane = server_.lane_of(request);
    lane.submit([self = shared_from_this(), request = std::move(request)]() mutable {
      Response response = self->server_.winding_down.load()
                              ? json_error(503, "the server is shutting down; try again")
                              : self->server_.run(request);
      asio::io_context& io = self->server_.io;
      asio::post(
          io, [self = std::move(self), response = std::move(response)] { self->answer(response); });
    });
  }
}

Request Connection::take_request() {
  beast_http::request<beast_http::string_body> m = parser_->release();
  parser_.reset();
  Request r = head_of(m);
  r.body = std::move(m.body());
  return r;
}

Request Connection::head_of(const Message& m) const {
  Request r;
  r.method = std::string(m.method_string());
  r.target = std::string(m.target());
  const std::string raw_path = r.target.substr(0, r.target.find('?'));
  r.path = percent_decode(raw_path).value_or(raw_path);
  const auto field = [&m](const char* name) {
    const auto it = m.find(name);
    return it == m.end() ? std::string() : std::string(it->value());
  };
  r.authorization = field("Authorization");
  r.idempotency_key = field("Idempotency-Key");
  r.content_type = field("Content-Type");
  r.peer = peer_;
  return r;
}

void Connection::answer(const Response& response) {
  if (phase_ == Phase::closed) return;  // closed at the end of the stop's grace
  release_share();
  const bool close = close_after_write_ || !exchange_.keep_alive || server_.stopping;
  write(server_.serialize(response, exchange_, close), close);
}

void Connection::refuse(Refusal refusal) {
  Response r = json_error(refusal.status, refusal.message);
  r.headers = std::move(refusal.headers);
  refuse_with(r);
}

void Connection::refuse_with(const Response& r) {
  if (phase_ == Phase::closed) return;
  release_share();
  if (reading_) {
    error_code ignored;
    socket_.cancel(ignored);  // the read in progress ends (operation_aborted)
  }
  write(server_.serialize(r, Exchange{}, true), true);
}

void Connection::write(std::string text, bool close) {
  close_after_write_ = close;
  out_ = std::move(text);
  enter(Phase::writing, server_.options.idle_timeout);
  asio::async_write(socket_, asio::buffer(out_),
                    [self = shared_from_this()](const error_code& ec, std::size_t /*n*/) {
                      self->on_written(ec);
                    });
}

void Connection::on_written(const error_code& ec) {
  if (phase_ == Phase::closed) return;
  if (ec) {
    close();
    return;
  }
  std::string().swap(out_);  // an idle connection keeps no answer's memory
  if (server_.stopping) {    // no further request on this connection: it is answered
    close();
    return;
  }
  if (close_after_write_) {
    linger();
    return;
  }
  // The next request, maybe already buffered (pipelined).
  if (buffer_.size() > 0) {
    enter(Phase::head, server_.options.header_timeout);
    parse();
  } else {
    if (buffer_.capacity() > 2 * kReadSize) buffer_.shrink_to_fit();
    enter(Phase::idle, server_.options.idle_timeout);
    read();
  }
}

void Connection::linger() {
  if (server_.stopping) {
    close();
    return;
  }
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  buffer_.consume(buffer_.size());
  enter(Phase::lingering, kLinger);
  read();
}

void Connection::on_linger_read(const error_code& ec, std::size_t n) {
  if (ec == asio::error::operation_aborted) {
    read();  // the read that refuse() cancelled: drain with a new one
    return;
  }
  lingered_ += n;
  if (ec || n == 0 || lingered_ > kMaxLinger) {
    close();
    return;
  }
  buffer_.commit(n);
  buffer_.consume(buffer_.size());
  read();
}

}  // namespace bk::http::detail
