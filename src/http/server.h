// The HTTP/1.1 server of serve's read API and of ingest's /metrics and probes: connections
// are held by an event loop (no thread per client), handlers that may block run on a fixed
// pool of workers, every read is bounded in size and time, and every error is JSON.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bk::http {

class HttpServer {
 public:
  struct Request {
    std::string method;             // GET, HEAD, POST, PUT, DELETE (OPTIONS: the server answers)
    std::string path;               // percent-decoded (as sent when it does not decode), no query
    std::string target;             // as sent: path and query, still percent-encoded
    std::string authorization;      // the Authorization header, "" when absent
    std::string body;               // POST, PUT
    std::string idempotency_key{};  // the Idempotency-Key header as sent, "" when absent
    std::string content_type{};     // the Content-Type header, "" when absent
    std::string peer{};             // the client's address (an IP), "" when unknown
  };
  struct Response {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    // Headers beyond the server's own (Date, Content-Type, Content-Length, Cache-Control,
    // Connection, CORS), as name and value: WWW-Authenticate, Retry-After...
    std::vector<std::pair<std::string, std::string>> headers{};
    // A successful read that clients may cache for Options::cache_max_age (else no-store).
    bool cacheable = false;
  };
  // Runs on a worker thread (several at once), or on the I/O thread for an inline path.
  using Handler = std::function<Response(const Request& request)>;

  struct Options {
    // Paths answered on the I/O thread: their handler must never block (probes, metrics).
    // Every other request goes to a worker.
    std::vector<std::string> inline_paths;
    std::size_t workers = 1;  // threads running handlers that may block
    // Lanes: with `lane` set, `lane_workers[i]` threads run the requests `lane` puts in lane
    // i (instead of `workers` threads for all), so that requests of one lane never wait for
    // a worker held by another's (serve: reads Redis alone answers, and PostgreSQL's).
    // Asked on the I/O thread once the whole request is there: must never block.
    std::vector<std::size_t> lane_workers;
    std::function<std::size_t(const Request& request)> lane;
    // Per lane, how much its threads' nice value is above the process's (missing: 0): a lane
    // of heavy requests at a lower CPU priority leaves the others their latency when it keeps
    // every core busy.
    std::vector<int> lane_nice;
    bool post = false;                              // POST too (else 405 like any other method)
    bool put_delete = false;                        // PUT and DELETE too (serve's admin routes)
    std::size_t max_write_body = 4096;              // larger PUT bodies get 413 (DELETE: none)
    std::size_t max_body = std::size_t{64} * 1024;  // larger bodies get 413
    // The request head must arrive within header_timeout of its first byte (of the
    // connection, for a new one), its body within body_timeout of the head: else 408.
    std::chrono::milliseconds header_timeout = std::chrono::seconds{10};
    std::chrono::milliseconds body_timeout = std::chrono::seconds{10};
    // A keep-alive connection with no request for this long is closed; also the time a
    // client has to take an answer.
    std::chrono::milliseconds idle_timeout = std::chrono::seconds{60};
    // Beyond max_connections (when no connection waiting for a request can make room), a
    // newcomer's head is read within a second: a probe (probe_paths) is answered, anything
    // else gets a JSON 503; then it is closed.
    std::size_t max_connections = 4096;
    // GET or HEAD of these (inline) paths is answered whatever is held: beyond
    // max_connections, and outside the shares below (liveness and readiness probes, metrics).
    std::vector<std::string> probe_paths;
    // What clients may hold at once, checked once a request's head has arrived (after `admit`),
    // before its body is read (http/admission.h): bytes of bodies in flight, counted from the
    // declared Content-Length (a chunked body: its bound, max_body or max_write_body) until
    // the request is answered or dropped, for all clients (beyond: 503) and per share key
    // (beyond: 429, as beyond requests_per_key requests in progress for one key); a body over
    // either alone is a 413. Every refusal says Retry-After.
    std::size_t body_bytes_in_flight = std::size_t{64} << 20;
    std::size_t body_bytes_per_key = std::size_t{16} << 20;
    std::size_t requests_per_key = 1024;
    // Whose share a request counts against (a token, say), asked on the I/O thread with the
    // head (after `admit`); must never block. Unset, or "": the client's address.
    std::function<std::string(const Request& head)> share_key;
    // Origins whose requests get Access-Control-Allow-Origin ("*": any); empty: none.
    std::vector<std::string> cors_origins;
    // > 0: cacheable answers say Cache-Control: max-age=N (else no-store).
    std::chrono::seconds cache_max_age{0};
    std::string flag = "--listen";  // names the address in messages
    // Asked on the I/O thread once a request's head has arrived, before its body is read
    // (`body` still empty): an answer refuses the request there (the connection then
    // closes), so that a request that will be refused anyway (no token, a POST where none
    // is taken) holds no body in memory. Must never block. Unset: every head is admitted.
    std::function<std::optional<Response>(const Request& head)> admit;
  };

  // Binds `address` (HOST:PORT; port 0 picks a free one) and starts serving. Throws
  // UsageError for a malformed address, bk::Error when it cannot be bound.
  HttpServer(const std::string& address, Handler handler, Options options);
  HttpServer(const std::string& address, Handler handler)
      : HttpServer(address, std::move(handler), Options{}) {}
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Stops accepting, closes idle and half-sent connections, lets requests in progress be
  // answered, and returns within 5 s whatever the clients do (a handler still running
  // is waited for). Idempotent.
  void stop();

  // The bound address, e.g. "127.0.0.1:39211".
  const std::string& address() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bk::http
