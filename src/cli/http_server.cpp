// The probes' and metrics' HTTP server on cpp-httplib (Debian's libcpp-httplib): a pool of
// worker threads, so a slow or idle client never holds up a probe; HTTP/1.1 with keep-alive.
#include "cli/http_server.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cli/net.h"
#include "core/error.h"

namespace bk::cli {

struct HttpServer::Impl {
  httplib::Server server;
  Handler handler_;
  std::string address_;
  std::thread thread_;
};

HttpServer::HttpServer(const std::string& address, Handler handler, Options options)
    : impl_(std::make_unique<Impl>()) {
  impl_->handler_ = std::move(handler);
  Impl* const impl = impl_.get();
  std::string& address_ = impl->address_;
  std::thread& thread_ = impl->thread_;
  const net::HostPort where = net::parse_host_port(address, options.flag);
  httplib::Server& s = impl_->server;
  s.set_read_timeout(options.header_timeout);
  s.set_write_timeout(options.header_timeout);
  s.set_payload_max_length(options.max_body);
  s.set_tcp_nodelay(true);  // headers and body go in two writes: no Nagle delay between them
  const std::size_t workers = std::max<std::size_t>(1, options.workers);
  s.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  const auto serve = [impl](const httplib::Request& request, httplib::Response& response) {
    Request in{request.method, request.path, request.target,
               request.get_header_value("Authorization"), request.body};
    Response r;
    try {
      r = impl->handler_(in);
    } catch (const std::exception& e) {
      spdlog::warn("http {}: {} {} failed: {}", impl->address_, request.method, request.path,
                   e.what());
      r = Response{500, "text/plain; charset=utf-8", "internal error\n"};
    }
    for (const auto& [name, value] : r.headers) response.set_header(name, value);
    response.status = r.status;
    response.set_content(r.body, r.content_type.c_str());
  };
  s.Get(".*", serve);
  const std::string allow = options.post ? "GET, HEAD, POST" : "GET, HEAD";
  const auto not_allowed = [allow](const httplib::Request&, httplib::Response& response) {
    response.status = 405;
    response.set_header("Allow", allow);
    response.set_content("Method Not Allowed\n", "text/plain; charset=utf-8");
  };
  if (options.post) {
    s.Post(".*", serve);
  } else {
    s.Post(".*", not_allowed);
  }
  s.Put(".*", not_allowed);
  s.Patch(".*", not_allowed);
  s.Delete(".*", not_allowed);
  s.Options(".*", not_allowed);

  const std::string host = where.host.empty() ? "0.0.0.0" : where.host;
  int port = std::stoi(where.port);
  errno = 0;
  const bool bound = port == 0 ? (port = s.bind_to_any_port(host)) > 0 : s.bind_to_port(host, port);
  if (!bound) {
    throw Error(options.flag + " " + address + ": cannot listen" +
                (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  }
  address_ =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  thread_ = std::thread([impl] {
    // Signals (SIGTERM, SIGINT) belong to the main thread, which stops the consumer; the
    // workers started from here inherit the mask (a SIGPIPE of theirs stays with them).
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    impl->server.listen_after_bind();
  });
}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::stop() {
  impl_->server.stop();
  if (impl_->thread_.joinable()) impl_->thread_.join();
}

const std::string& HttpServer::address() const {
  return impl_->address_;
}

}  // namespace bk::cli
