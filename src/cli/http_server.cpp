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
};

HttpServer::HttpServer(const std::string& address, Handler handler, Options options)
    : handler_(std::move(handler)), impl_(std::make_unique<Impl>()) {
  const net::HostPort where = net::parse_host_port(address, options.flag);
  httplib::Server& s = impl_->server;
  s.set_read_timeout(options.client_timeout);
  s.set_write_timeout(options.client_timeout);
  s.set_payload_max_length(options.max_body);
  s.set_tcp_nodelay(true);  // headers and body go in two writes: no Nagle delay between them
  const std::size_t workers = std::max<std::size_t>(1, options.workers);
  s.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  const auto serve = [this](const httplib::Request& request, httplib::Response& response) {
    Request in{request.method, request.path, request.target,
               request.get_header_value("Authorization"), request.body};
    Response r;
    try {
      r = handler_(in);
    } catch (const std::exception& e) {
      spdlog::warn("http {}: {} {} failed: {}", address_, request.method, request.path, e.what());
      r = Response{500, "text/plain; charset=utf-8", "internal error\n"};
    }
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
  thread_ = std::thread([this] {
    // Signals (SIGTERM, SIGINT) belong to the main thread, which stops the consumer; the
    // workers started from here inherit the mask (a SIGPIPE of theirs stays with them).
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    impl_->server.listen_after_bind();
  });
}

HttpServer::~HttpServer() {
  impl_->server.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace bk::cli
