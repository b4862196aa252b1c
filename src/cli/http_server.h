// An HTTP/1.1 server (cpp-httplib) for ingest's /metrics and probes and for serve's read
// API: GET and HEAD, POST when asked (other methods 405),
// keep-alive, clients served by a pool of threads (an idle or slow client does not hold up
// the others), every client bounded by a timeout. Garbage gets a 4xx, never a crash.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace bk::cli {

class HttpServer {
 public:
  struct Request {
    std::string method;         // GET, HEAD or POST
    std::string path;           // decoded, without the query
    std::string target;         // as sent: path and query, still percent-encoded
    std::string authorization;  // the Authorization header, "" when absent
    std::string body;           // POST
  };
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  // Called on a worker thread (several at once).
  using Handler = std::function<Response(const Request& request)>;

  struct Options {
    std::chrono::milliseconds client_timeout = std::chrono::seconds{5};
    std::size_t workers = 8;                        // threads serving clients (one client each)
    bool post = false;                              // POST too (else 405 like any other method)
    std::size_t max_body = std::size_t{64} * 1024;  // larger requests get 413
    std::string flag = "--listen";                  // names the address in messages
  };

  // Binds `address` (HOST:PORT; port 0 picks a free one) and starts serving. Throws
  // UsageError for a malformed address, bk::Error when it cannot be bound.
  HttpServer(const std::string& address, Handler handler, Options options);
  HttpServer(const std::string& address, Handler handler)
      : HttpServer(address, std::move(handler), Options{}) {}
  ~HttpServer();  // stops accepting, lets requests in progress finish, joins the threads
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound address, e.g. "127.0.0.1:39211".
  const std::string& address() const { return address_; }

 private:
  struct Impl;  // the cpp-httplib server
  Handler handler_;
  std::unique_ptr<Impl> impl_;
  std::string address_;
  std::thread thread_;
};

}  // namespace bk::cli
