// The HTTP server's shared state (http/server.cpp) and its limits, as its connections
// (http/connection.cpp) see them. Internal to the server: nothing outside those two includes it.
#pragma once
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/json.h"
#include "core/redact.h"
#include "http/admission.h"
#include "http/parts.h"
#include "http/server.h"

namespace bk::http::detail {

namespace asio = boost::asio;
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
constexpr Millis kOverLimitHead{1000};     // a connection over the limit has this for its head
// Memory after a flood (FloodMark): a connection is counted as this much (its read buffer,
// parser and answer); a flood is one that held at least kFloodFloor; the allocator is asked
// to hand back free memory at most once every kTrimEvery.
constexpr std::size_t kConnectionBytes = std::size_t{8} * 1024;
constexpr std::size_t kFloodFloor = std::size_t{16} << 20;
constexpr Millis kTrimEvery{1000};
constexpr std::size_t kMaxRecords = 16384;  // socket records made at start (at most)

using Handler = HttpServer::Handler;
using Options = HttpServer::Options;
using Request = HttpServer::Request;
using Response = HttpServer::Response;

class Connection;

// The listening socket, the I/O thread and the workers; every connection lives on the I/O
// thread (none of their state is touched elsewhere).
struct Server {
  Server(Handler h, Options o)
      : handler(std::move(h)),
        options(std::move(o)),
        admission(
            {options.body_bytes_in_flight, options.body_bytes_per_key, options.requests_per_key}) {}

  Handler handler;
  Options options;
  std::string address;
  std::string allow;  // the Allow header: methods served
  // Declared before io: connections that pending handlers still hold are released while io
  // is destroyed, and they leave this map then.
  std::unordered_map<Connection*, bool> live;  // -> counted against max_connections
  std::size_t counted = 0;
  Admission admission;  // what requests in progress hold (before io too, for the same reason)
  FloodMark flood{kFloodFloor};
  bool trim_pending = false;
  std::chrono::steady_clock::time_point last_trim{};
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
  asio::steady_timer trim_timer{io};
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::vector<std::unique_ptr<parts::WorkerPool>> lanes;  // lane_workers, or one of workers
  std::thread io_thread;
  std::once_flag stopped;

  void start_lanes() {
    std::vector<std::size_t> sizes = options.lane_workers;
    if (!options.lane || sizes.empty()) sizes = {options.workers};
    lanes = parts::start_pools(sizes, options.lane ? options.lane_nice : std::vector<int>{});
  }
  parts::WorkerPool& lane_of(const Request& request) {
    if (lanes.size() == 1) return *lanes.front();
    return *lanes[std::min(options.lane(request), lanes.size() - 1)];
  }
  void listen(const std::string& text);
  void accept();
  void on_accept(const error_code& ec, tcp::socket socket);
  bool evict_longest_waiting();
  bool evict_oldest_over_limit();
  // What connections and bodies in flight hold changed: after a flood, memory goes back.
  void note_held();
  void make_socket_records();
  void return_memory();
  void begin_stop();
  void forget(Connection* c);
  void stop();

  bool is_inline(const std::string& path) const {
    const auto& paths = options.inline_paths;
    return std::find(paths.begin(), paths.end(), path) != paths.end();
  }
  // A GET or HEAD of a probe path: answered whatever is held.
  bool is_probe(const Request& head) const {
    const auto& paths = options.probe_paths;
    return (head.method == "GET" || head.method == "HEAD") &&
           std::find(paths.begin(), paths.end(), head.path) != paths.end();
  }
  std::string share_key(const Request& head) const {
    std::string key = options.share_key ? options.share_key(head) : std::string();
    return key.empty() ? address_share(head.peer) : key;
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
    return parts::json_error(500, "internal error (logged)");
  }
  std::string serialize(const Response& r, const parts::Exchange& x, bool close) const {
    return parts::serialize(r, x, close, options);
  }
  Response options_answer(const parts::Exchange& x) const {
    return parts::options_answer(x, options, allow);
  }
};

}  // namespace bk::http::detail
