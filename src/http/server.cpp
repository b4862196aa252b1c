// HttpServer on Boost.Beast's HTTP parser and Asio's event loop. Why Beast: libmicrohttpd
// answers its own errors (413, 414, 431, timeouts) with bodies of its own, not our JSON, and
// bounds a client only by an idle timeout, never by a deadline for the whole head;
// cpp-httplib holds a thread per connection, so 32 slow clients stopped 32 workers. Beast
// gives the parser alone (limits, errors as codes): every byte written and every deadline
// is ours, and one I/O thread holds thousands of connections.
// Its connections are in http/connection.cpp; what they share, in http/server_core.h.
#include "http/server.h"

#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "http/connection.h"
#include "http/net.h"
#include "http/parts.h"
#include "http/server_core.h"

namespace bk::http {
namespace detail {

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
  } else if (live.size() - counted <= kMaxRefusing || evict_oldest_over_limit()) {
    c->start_over_limit();  // a probe is answered, anything else a 503
  } else {
    c->close();  // refusing too many already: not even an answer
  }
  note_held();
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

// Over the limit, a newcomer takes the place of the oldest connection over it still waiting
// for its head (such waits are short, kOverLimitHead): connections that send nothing cannot
// keep a probe from being read.
bool Server::evict_oldest_over_limit() {
  Connection* oldest = nullptr;
  std::chrono::steady_clock::time_point at;
  for (const auto& [c, counted_in] : live) {
    if (counted_in) continue;
    const auto since = c->waiting_since();
    if (since && (oldest == nullptr || *since < at)) {
      oldest = c;
      at = *since;
    }
  }
  if (oldest == nullptr) return false;
  oldest->close();
  return true;
}

void Server::note_held() {
  if (finished || stopping) return;
  if (flood.ended(admission.body_bytes() + live.size() * kConnectionBytes)) return_memory();
}

// glibc keeps what a flood freed (its arenas grow, and big blocks freed in the middle of a
// heap stay mapped): malloc_trim hands the free pages back. Measured with serve: 300 bodies
// of 1 MiB at once left 300 MB behind until it ran, 4000 slow bodies 26 MB. It runs on the
// I/O thread (it took 1 to 40 ms after those floods), once a flood has ended.
void Server::return_memory() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_trim < kTrimEvery) {
    if (trim_pending) return;
    trim_pending = true;
    trim_timer.expires_at(last_trim + kTrimEvery);
    trim_timer.async_wait([this](const error_code& ec) {
      trim_pending = false;
      if (!ec && !stopping) return_memory();
    });
    return;
  }
  last_trim = now;
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - now;
  spdlog::debug("http {}: a flood ended: free memory handed back in {:.1f} ms", address,
                took.count());
}

// Asio keeps a record for every socket it has watched (its reactor's descriptor state) in a
// pool that it reuses and never frees. Made one by one during a flood, between the flood's
// buffers, each pins a page of the heap the flood frees: 4000 slow bodies left 19 MB that
// malloc_trim could not return. So the records the server can need at once are made now, side
// by side (for descriptors dup'ed from one eventfd, closed at once): measured, 7 MB stayed.
void Server::make_socket_records() {
  const int base = ::eventfd(0, EFD_CLOEXEC);
  if (base < 0) return;
  const std::size_t wanted = std::min(options.max_connections + kMaxRefusing + 16, kMaxRecords);
  std::vector<asio::posix::stream_descriptor> records;
  records.reserve(wanted);
  error_code ec;
  while (records.size() < wanted) {
    const int fd = ::fcntl(base, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) break;  // out of descriptors: as many as there are
    records.emplace_back(io);
    records.back().assign(fd, ec);
    if (ec) {
      ::close(fd);
      break;
    }
  }
  records.clear();  // closes them: their records go back to asio's pool
  ::close(base);
}

void Server::forget(Connection* c) {
  const auto it = live.find(c);
  if (it == live.end()) return;
  if (it->second) --counted;
  live.erase(it);
  note_held();
  if (stopping && live.empty() && !finished) stop_timer.cancel();
}

void Server::begin_stop() {
  stopping = true;
  error_code ignored;
  acceptor.close(ignored);
  accept_pause.cancel();
  trim_timer.cancel();
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

}  // namespace detail

struct HttpServer::Impl {
  Impl(Handler handler, Options options) : server(std::move(handler), std::move(options)) {}
  detail::Server server;
};

HttpServer::HttpServer(const std::string& address, Handler handler, Options options)
    : impl_(std::make_unique<Impl>(std::move(handler), std::move(options))) {
  detail::Server& s = impl_->server;
  s.allow = std::string("GET, HEAD, ") + (s.options.post ? "POST, " : "") +
            (s.options.put_delete ? "PUT, DELETE, " : "") + "OPTIONS";
  s.listen(address);
  s.make_socket_records();
  s.start_lanes();
  s.accept();
  s.io_thread = std::thread([&s] {
    parts::block_signals();
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
