// An HTTP/1.1 server for /metrics and health probes: GET and HEAD (other methods 405),
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
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  // Called on a worker thread (several at once) with the request path (no query string).
  using Handler = std::function<Response(std::string_view path)>;

  // Binds `address` (HOST:PORT; port 0 picks a free one) and starts serving. Throws
  // UsageError for a malformed address, bk::Error when it cannot be bound.
  HttpServer(const std::string& address, Handler handler,
             std::chrono::milliseconds client_timeout = std::chrono::seconds{5});
  ~HttpServer();  // stops serving and joins the threads
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
