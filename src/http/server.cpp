// HttpServer on Boost.Beast's HTTP parser and Asio's event loop. Why Beast: libmicrohttpd
// answers its own errors (413, 414, 431, timeouts) with bodies of its own, not our JSON, and
// bounds a client only by an idle timeout, never by a deadline for the whole head;
// cpp-httplib holds a thread per connection, so 32 slow clients stopped 32 workers. Beast
// gives the parser alone (limits, errors as codes): every byte written and every deadline
// is ours, and one I/O thread holds thousands of connections.
#include "http/server.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "core/json.h"
#include "core/percent.h"
#include "core/redact.h"
#include "http/net.h"
#include "http/parts.h"

namespace bk::http {
namespace {

namespace asio = boost::asio;
namespace beast_http = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Millis = std::chrono::milliseconds;

constexpr std::size_t kMaxRequestLine = std::size_t{8} * 1024;   // longer: 414
constexpr std::size_t kMaxHeaderBlock = std::size_t{16} * 1024;  // longer: 431
constexpr std::size_t kReadSize = std::size_t{4} * 1024;  // a connection's buffer to begin with
constexpr std::size_t kMaxBuffered = kMaxRequestLine + kMaxHeaderBlock + 2 * kReadSize;
constexpr Millis kStopGrace{4000};  // answers in progress at stop get this
constexpr Millis kLinger{1000};     // reading what a refused client still sends
constexpr std::size_t kMaxLinger = std::size_t{1024} * 1024;  // ... at most this much
constexpr std::size_t kMaxRefusing = 256;  // connections over the limit being answered
constexpr Millis kAcceptPause{100};        // out of descriptors: accept again after

using parts::block_signals;
using parts::Exchange;
using parts::header_safe;
using parts::http_date;
using parts::json_error;
using parts::seconds_text;
using parts::WorkerPool;

using parts::Refusal;

std::string_view view(boost::beast::string_view s) {
  return {s.data(), s.size()};
}

class Connection;
using Handler = HttpServer::Handler;
using Options = HttpServer::Options;
using Request = HttpServer::Request;
using Response = HttpServer::Response;

// The listening socket, the I/O thread and the workers; every connection lives on the I/O
// thread (none of their state is touched elsewhere).
struct Server {
  Server(Handler h, Options o) : handler(std::move(h)), options(std::move(o)) {}

  Handler handler;
  Options options;
  std::string address;
  std::string allow;  // the Allow header: methods served
  // Declared before io: connections that pending handlers still hold are released while io
  // is destroyed, and they leave this map then.
  std::unordered_map<Connection*, bool> live;  // -> counted against max_connections
  std::size_t counted = 0;
  bool stopping = false;  // (I/O thread)
  // stop() has begun (any thread): requests still queued for a worker are answered 503
  // instead of run, so that stopping is not held up by reads that may each wait seconds on
  // a backend.
  std::atomic<bool> winding_down{false};
  bool finished = false;  // the I/O thread has ended: only destructors run
  bool accept_failing = false;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_pause{io};
  asio::steady_timer stop_timer{io};
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::vector<std::unique_ptr<WorkerPool>> lanes;  // Options::lane_workers, or one of workers
  std::thread io_thread;
  std::once_flag stopped;

  void start_lanes() {
    std::vector<std::size_t> sizes = options.lane_workers;
    if (!options.lane || sizes.empty()) sizes = {options.workers};
    lanes = parts::start_pools(sizes, options.lane ? options.lane_nice : std::vector<int>{});
  }
  WorkerPool& lane_of(const Request& request) {
    if (lanes.size() == 1) return *lanes.front();
    return *lanes[std::min(options.lane(request), lanes.size() - 1)];
  }
  void listen(const std::string& text);
  void accept();
  void on_accept(const error_code& ec, tcp::socket socket);
  bool evict_longest_waiting();
  void begin_stop();
  void forget(Connection* c);
  void stop();

  bool is_inline(const std::string& path) const {
    const auto& paths = options.inline_paths;
    return std::find(paths.begin(), paths.end(), path) != paths.end();
  }
  // The handler's answer; an exception becomes a 500 whose text is logged, not sent.
  Response run(const Request& request) const {
    try {
      return handler(request);
    } catch (const std::exception& e) {
      spdlog::error("http {}: {} {} failed: {}", address, request.method,
                    escape_control(request.path, false), redact(e.what()));
    } catch (...) {
      spdlog::error("http {}: {} {} failed", address, request.method,
                    escape_control(request.path, false));
    }
    return json_error(500, "internal error (logged)");
  }
  std::string serialize(const Response& r, const Exchange& x, bool close) const {
    return parts::serialize(r, x, close, options);
  }
  Response options_answer(const Exchange& x) const {
    return parts::options_answer(x, options, allow);
  }
};

// One client connection: reads a request (head, then body, each under its deadline), has it
// answered (inline or by a worker), writes the answer, and goes on with the next request on
// the same connection, pipelined ones included, until either side closes.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), timer_(server.io), buffer_(kMaxBuffered) {
    error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);  // an answer goes out in one write
    socket_.non_blocking(true, ignored);  // for the 100 Continue, see expect_continue()
  }
  ~Connection() {
    if (phase_ != Phase::closed) server_.forget(this);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void start() {
    enter(Phase::head, server_.options.header_timeout);
    read();
  }
  // Over the connection limit: a 503 at once, then closed.
  void refuse_at_once() {
    refuse({503, "too many connections; try again shortly", {{"Retry-After", "1"}}});
  }
  // The server stops: a connection with nothing to answer closes now, the others after
  // their answer (which says Connection: close).
  void on_stop() {
    if (phase_ != Phase::working && phase_ != Phase::writing) close();
  }
  // Since when it has been waiting for a request (idle after an answer, or a head still
  // arriving); nullopt while it reads a body, works, writes or lingers.
  std::optional<std::chrono::steady_clock::time_point> waiting_since() const {
    if (phase_ != Phase::idle && phase_ != Phase::head) return std::nullopt;
    return since_;
  }

  void close() {
    if (phase_ == Phase::closed) return;
    phase_ = Phase::closed;
    ++generation_;
    timer_.cancel();
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    server_.forget(this);
  }

 private:
  enum class Phase { idle, head, body, working, writing, lingering, closed };
  using Parser = beast_http::request_parser<beast_http::string_body>;

  Server& server_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  std::uint64_t generation_ = 0;  // of the deadline armed last
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  std::size_t body_limit_ = 0;  // the body bound of the request being read
  bool line_ended_ = false;     // the request being read has its request line whole
  Phase phase_ = Phase::head;
  bool reading_ = false;
  bool close_after_write_ = false;
  std::size_t lingered_ = 0;
  Exchange exchange_;
  std::string out_;  // the answer being written
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();  // of phase_

  // A phase and its deadline (none: zero).
  void enter(Phase phase, Millis deadline) {
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
  void on_deadline() {
    const auto& o = server_.options;
    switch (phase_) {
      case Phase::head:
        refuse({408,
                "the request head did not arrive within " + seconds_text(o.header_timeout) + " s"});
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

  void read() {
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
  void on_read(const error_code& ec, std::size_t n) {
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

  // Feeds the parser what the buffer holds, as far as it goes.
  void parse() {
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
  bool line_end_in_buffer() const {
    const auto* data = static_cast<const char*>(buffer_.data().data());
    return parts::line_ends_within({data, buffer_.size()}, kMaxRequestLine);
  }
  void make_parser() {
    line_ended_ = false;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(kMaxRequestLine + kMaxHeaderBlock));
    parser_->body_limit(server_.options.max_body);
    body_limit_ = server_.options.max_body;
    parser_->eager(true);
  }
  Refusal refusal_for(const error_code& ec) const {
    if (ec == beast_http::error::header_limit) {
      // The head never ended: the request line, or the headers after it, are too long. (The
      // parser may have taken the line out of the buffer already: line_ended_ remembers it.)
      return line_ended_ || line_end_in_buffer() ? parts::head_too_large(kMaxHeaderBlock)
                                                 : parts::line_too_long(kMaxRequestLine);
    }
    if (ec == beast_http::error::body_limit) return parts::body_too_large(body_limit_);
    return {400, "malformed request: " + ec.message()};
  }

  // The head arrived: checked, then the body is waited for. False when refused.
  bool on_head() {
    const auto& m = parser_->get();
    if (auto problem = head_problem(m)) {
      refuse(std::move(*problem));
      return false;
    }
    if (m.method() != beast_http::verb::options && server_.options.admit) {
      if (const std::optional<Response> refused = server_.options.admit(head_of(m))) {
        refuse_with(*refused);
        return false;
      }
    }
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
  std::optional<Refusal> head_problem(const beast_http::request<beast_http::string_body>& m) {
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
    for (const auto& field : m)
      header_bytes += field.name_string().size() + field.value().size() + 4;
    if (header_bytes > kMaxHeaderBlock) return parts::head_too_large(kMaxHeaderBlock);
    return body_problem(m, post || (write && method == "PUT"));
  }
  std::optional<Refusal> body_problem(const beast_http::request<beast_http::string_body>& m,
                                      bool post) {
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
  // A client that waits for "100 Continue" before it sends the body (curl does, above 1 KiB)
  // gets it at once; the socket is fresh and non-blocking, so a short write would be odd.
  void expect_continue(const beast_http::request<beast_http::string_body>& m) {
    const auto it = m.find(beast_http::field::expect);
    if (it == m.end() || !boost::beast::iequals(it->value(), "100-continue")) return;
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    error_code ec;
    const std::size_t n = socket_.write_some(asio::buffer(kContinue.data(), kContinue.size()), ec);
    if (ec || n != kContinue.size()) close_after_write_ = true;
  }

  void dispatch() {
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
        asio::post(io, [self = std::move(self), response = std::move(response)] {
          self->answer(response);
        });
      });
    }
  }
  Request take_request() {
    beast_http::request<beast_http::string_body> m = parser_->release();
    parser_.reset();
    Request r = head_of(m);
    r.body = std::move(m.body());
    return r;
  }
  static Request head_of(const beast_http::request<beast_http::string_body>& m) {
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
    return r;
  }

  void answer(const Response& response) {
    if (phase_ == Phase::closed) return;  // closed at the end of the stop's grace
    const bool close = close_after_write_ || !exchange_.keep_alive || server_.stopping;
    write(server_.serialize(response, exchange_, close), close);
  }
  // An error of the HTTP layer: answered as JSON, then the connection closes (what is left
  // of the request cannot be told from the next one).
  void refuse(Refusal refusal) {
    Response r = json_error(refusal.status, refusal.message);
    r.headers = std::move(refusal.headers);
    refuse_with(r);
  }
  void refuse_with(const Response& r) {
    if (phase_ == Phase::closed) return;
    if (reading_) {
      error_code ignored;
      socket_.cancel(ignored);  // the read in progress ends (operation_aborted)
    }
    write(server_.serialize(r, Exchange{}, true), true);
  }
  void write(std::string text, bool close) {
    close_after_write_ = close;
    out_ = std::move(text);
    enter(Phase::writing, server_.options.idle_timeout);
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this()](const error_code& ec, std::size_t /*n*/) {
                        self->on_written(ec);
                      });
  }
  void on_written(const error_code& ec) {
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

  // Closing right after an answer would reset the connection while the client still sends
  // (the rest of a refused body), and a reset can destroy the answer before it is read:
  // so the sending side is shut, and what still arrives is read and dropped for a while.
  void linger() {
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
  void on_linger_read(const error_code& ec, std::size_t n) {
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
};

void Server::listen(const std::string& text) {
  const net::HostPort where = net::parse_host_port(text, options.flag);
  const std::string host = where.host.empty() ? "0.0.0.0" : where.host;
  const auto fail = [&](const error_code& ec) {
    throw Error(options.flag + " " + text + ": cannot listen: " + ec.message());
  };
  error_code ec;
  tcp::resolver resolver(io);
  const auto found = resolver.resolve(host, where.port, tcp::resolver::passive, ec);
  if (ec || found.empty()) fail(ec);
  const tcp::endpoint endpoint = found.begin()->endpoint();
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail(ec);
  const tcp::endpoint bound = acceptor.local_endpoint();
  const std::string ip = bound.address().to_string();
  address = (bound.address().is_v6() ? "[" + ip + "]" : ip) + ":" + std::to_string(bound.port());
}

void Server::accept() {
  acceptor.async_accept(
      [this](const error_code& ec, tcp::socket socket) { on_accept(ec, std::move(socket)); });
}

void Server::on_accept(const error_code& ec, tcp::socket socket) {
  if (stopping || ec == asio::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors (EMFILE) or memory: the pending connection stays queued; wait a
    // little rather than spin (and say so once, not at every try).
    if (!accept_failing) {
      spdlog::warn("http {}: accepting a connection failed: {} (retrying)", address, ec.message());
    }
    accept_failing = true;
    accept_pause.expires_after(kAcceptPause);
    accept_pause.async_wait([this](const error_code& e) {
      if (!e && !stopping) accept();
    });
    return;
  }
  accept_failing = false;
  const bool within = counted < options.max_connections || evict_longest_waiting();
  auto c = std::make_shared<Connection>(*this, std::move(socket));
  live.emplace(c.get(), within);
  if (within) {
    ++counted;
    c->start();
  } else if (live.size() - counted <= kMaxRefusing) {
    c->refuse_at_once();
  } else {
    c->close();  // refusing too many already: not even an answer
  }
  accept();
}

// At the limit, the connection that has waited longest for a request (idle, or a head that
// does not come) makes room: one client holding every slot with silent or trickling
// connections cannot keep others out. Only connections whose requests are all in progress
// make a newcomer wait for a 503.
bool Server::evict_longest_waiting() {
  Connection* oldest = nullptr;
  std::chrono::steady_clock::time_point at;
  for (const auto& [c, counted_in] : live) {
    if (!counted_in) continue;
    const auto since = c->waiting_since();
    if (since && (oldest == nullptr || *since < at)) {
      oldest = c;
      at = *since;
    }
  }
  if (oldest == nullptr) return false;
  oldest->close();  // forget() gives its slot back
  return counted < options.max_connections;
}

void Server::forget(Connection* c) {
  const auto it = live.find(c);
  if (it == live.end()) return;
  if (it->second) --counted;
  live.erase(it);
  if (stopping && live.empty() && !finished) stop_timer.cancel();
}

void Server::begin_stop() {
  stopping = true;
  error_code ignored;
  acceptor.close(ignored);
  accept_pause.cancel();
  std::vector<Connection*> all;
  all.reserve(live.size());
  for (const auto& [c, counted_in] : live) all.push_back(c);
  for (Connection* c : all) c->on_stop();
  if (live.empty()) return;
  // Answers still being made or written get the grace; then every connection closes.
  stop_timer.expires_after(kStopGrace);
  stop_timer.async_wait([this](const error_code& ec) {
    if (ec) return;
    std::vector<Connection*> left;
    for (const auto& [c, counted_in] : live) left.push_back(c);
    for (Connection* c : left) c->close();
  });
}

void Server::stop() {
  std::call_once(stopped, [this] {
    winding_down.store(true);
    asio::post(io, [this] { begin_stop(); });
    for (auto& lane : lanes) lane->finish();  // their requests are answered (posted to io)
    work.reset();                             // the I/O thread ends when its connections have
    if (io_thread.joinable()) io_thread.join();
    finished = true;
  });
}

}  // namespace

struct HttpServer::Impl {
  Impl(Handler handler, Options options) : server(std::move(handler), std::move(options)) {}
  Server server;
};

HttpServer::HttpServer(const std::string& address, Handler handler, Options options)
    : impl_(std::make_unique<Impl>(std::move(handler), std::move(options))) {
  Server& s = impl_->server;
  s.allow = std::string("GET, HEAD, ") + (s.options.post ? "POST, " : "") +
            (s.options.put_delete ? "PUT, DELETE, " : "") + "OPTIONS";
  s.listen(address);
  s.start_lanes();
  s.accept();
  s.io_thread = std::thread([&s] {
    block_signals();
    s.io.run();
  });
}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::stop() {
  impl_->server.stop();
}

const std::string& HttpServer::address() const {
  return impl_->server.address;
}

}  // namespace bk::http
