// The HTTP server's parts that need no connection (http/server.cpp): the worker pool
// that runs handlers, and the texts of answers (status line and headers, OPTIONS, errors).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/admission.h"
#include "http/server.h"

namespace bk::http::parts {

// Blocks every signal in the calling thread: signals (SIGTERM, SIGINT) belong to the main
// thread, which stops the server.
void block_signals();

// The IMF-fixdate of now ("Sun, 06 Nov 1994 08:49:37 GMT"), made once a second per thread.
const std::string& http_date();

// {"error": message} with the status.
HttpServer::Response json_error(int status, const std::string& message);

// Whole seconds, with tenths when there are any: "4", "0.5", "1.2".
std::string seconds_text(std::chrono::milliseconds d);

// No CR or LF: the text may go into a header line.
bool header_safe(const std::string& s);

// A request the HTTP layer answers itself, with a JSON error, then closes the connection.
struct Refusal {
  int status;
  std::string message;
  std::vector<std::pair<std::string, std::string>> headers{};
};
// The 414 of a request line longer than `max` bytes; the 431 of headers over `max` bytes; the
// 413 of a body over `max` bytes.
Refusal line_too_long(std::size_t max);
Refusal head_too_large(std::size_t max);
Refusal body_too_large(std::size_t max);
// What a request Admission did not admit is told (not `admitted`): 413 for a body of
// `body_bytes` over a limit alone; 503 (the server's bodies) or 429 (the client's share of
// bodies or of requests in progress) with Retry-After: 1.
Refusal share_refusal(Admission::Verdict verdict, std::size_t body_bytes,
                      const Admission::Limits& limits);

// What a request's Transfer-Encoding fields (their values, in order) allow: 0 when the body
// is chunked alone; 400 when chunked is not the last coding (the body's end is unknown), in
// an HTTP/1.0 request (`version` 10: faulty framing), or when the parser did not take the
// body as chunked (`parsed_chunked`: it and we must agree); 501 when another coding comes
// before chunked (gzip, ...), which nothing here undoes (RFC 9112 6.1).
int transfer_coding_status(const std::vector<std::string_view>& values, unsigned version = 11,
                           bool parsed_chunked = true);

// The refusal of those fields (none when there are none, or the status is 0).
std::optional<Refusal> transfer_coding_refusal(const std::vector<std::string_view>& values,
                                               unsigned version, bool parsed_chunked);

// Whether `buffered` (the start of a request) holds the end of a request line of at most
// `max_line` bytes.
bool line_ends_within(std::string_view buffered, std::size_t max_line);

// What an answer needs to know of its request.
struct Exchange {
  bool head = false;        // HEAD: the answer has no body
  bool read = false;        // GET or HEAD: an answer the handler calls cacheable may be cached
  bool keep_alive = false;  // as the client asked (HTTP/1.1 default, 1.0 only when asked)
  unsigned version = 11;
  std::string origin;  // the Origin header, "" without
};

// A non-empty origin serve.cors_origins lists (or "*").
bool origin_allowed(const HttpServer::Options& options, const std::string& origin);

// The answer's bytes: status line, Date, content headers, caching, connection, CORS, the
// handler's headers (those without CR or LF) and the body (none for HEAD, 204, 304).
std::string serialize(const HttpServer::Response& r, const Exchange& x, bool close,
                      const HttpServer::Options& options);

// OPTIONS: a CORS preflight from a listed origin is allowed (204 with what may be sent),
// from another origin refused (403); without an Origin, the methods served (`allow`).
HttpServer::Response options_answer(const Exchange& x, const HttpServer::Options& options,
                                    const std::string& allow);

// A fixed set of threads running tasks in the order given; finish() runs what is queued.
class WorkerPool {
 public:
  // `nice` > 0: the threads run that much lower in CPU priority than the process (Linux's
  // per-thread nice, at most 19).
  void start(std::size_t threads, int nice = 0);
  void submit(std::function<void()> task);
  void finish();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool finishing_ = false;
  std::vector<std::thread> threads_;

  void run();
};

// Pools of sizes[i] threads each (at least one), pool i's `nice[i]` lower in CPU priority
// (0 where `nice` has no entry).
std::vector<std::unique_ptr<WorkerPool>> start_pools(const std::vector<std::size_t>& sizes,
                                                     const std::vector<int>& nice);

}  // namespace bk::http::parts
