// A minimal HTTP/1.1 server for /metrics and health probes: GET and HEAD only, one request
// per connection (Connection: close), clients served one after another on a thread of its
// own, every client bounded by a timeout. Garbage gets a 4xx, never a crash.
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "cli/net.h"

namespace bk::cli {

class HttpServer {
 public:
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  // Called on the server's thread with the request path (query string removed).
  using Handler = std::function<Response(std::string_view path)>;

  // Binds `address` (HOST:PORT; port 0 picks a free one) and starts serving. Throws
  // UsageError for a malformed address, bk::Error when it cannot be bound.
  HttpServer(const std::string& address, Handler handler,
             std::chrono::milliseconds client_timeout = std::chrono::seconds{5});
  ~HttpServer();  // stops serving (a client being served is cut off) and joins the thread
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound address, e.g. "127.0.0.1:39211".
  const std::string& address() const { return address_; }

 private:
  void serve();
  void answer(int client);

  Handler handler_;
  std::chrono::milliseconds client_timeout_;
  net::Fd listener_;
  net::Fd wake_read_, wake_write_;  // a byte written here stops the thread
  std::string address_;
  std::thread thread_;
};

}  // namespace bk::cli
