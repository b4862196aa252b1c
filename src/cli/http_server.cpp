// The accept loop and one request's parsing. Requests are small (a probe or a scrape), so a
// request head larger than 8 KiB is refused rather than buffered.
#include "cli/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace bk::cli {
namespace {

constexpr std::size_t kMaxHead = 8192;

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

net::Fd bind_listener(const net::HostPort& where, const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(where.host.empty() ? nullptr : where.host.c_str(),
                               where.port.c_str(), &hints, &found);
  if (rc != 0) throw UsageError("--listen " + address + ": " + ::gai_strerror(rc));
  const std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, ::freeaddrinfo);
  std::string why = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    net::Fd fd(
        ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd) {
      why = std::strerror(errno);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), 64) != 0) {
      why = std::strerror(errno);
      continue;
    }
    return fd;
  }
  throw Error("--listen " + address + ": cannot listen: " + why);
}

}  // namespace

HttpServer::HttpServer(const std::string& address, Handler handler,
                       std::chrono::milliseconds client_timeout)
    : handler_(std::move(handler)), client_timeout_(client_timeout) {
  listener_ = bind_listener(net::parse_host_port(address, "--listen"), address);
  address_ = net::local_address(listener_.get());
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  wake_read_ = net::Fd(pipe_fds[0]);
  wake_write_ = net::Fd(pipe_fds[1]);
  thread_ = std::thread([this] { serve(); });
}

HttpServer::~HttpServer() {
  const char byte = 1;
  if (::write(wake_write_.get(), &byte, 1) < 0) {
    // The pipe cannot be full (one byte, once); nothing more to do.
  }
  if (thread_.joinable()) thread_.join();
}

void HttpServer::serve() {
  // Signals (SIGTERM, SIGINT) belong to the main thread, which stops the consumer.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    const int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN) != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    net::Fd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client) {
      // The peer gave up (try the next), or no descriptor is free: wait a moment.
      if (errno == EMFILE || errno == ENFILE) {
        std::this_thread::sleep_for(std::chrono::milliseconds{100});
      }
      continue;
    }
    try {
      answer(client.get());
    } catch (const std::exception& e) {
      spdlog::warn("http {}: {}", address_, e.what());
    }
  }
}

void HttpServer::answer(int client) {
  const net::Deadline deadline = std::chrono::steady_clock::now() + client_timeout_;
  const int wake = wake_read_.get();
  // The request head: up to the blank line that ends it.
  std::string head;
  std::size_t end = std::string::npos;
  int status = 0;
  while (end == std::string::npos) {
    const long n = net::receive_some(client, head, kMaxHead + 1 - head.size(), deadline, wake);
    if (n < 0) {
      status = 408;  // too slow (or stopping): answer if we can, then close
      break;
    }
    if (n == 0) return;  // closed before a full request: nothing to answer
    end = head.find("\r\n\r\n");
    if (end == std::string::npos) end = head.find("\n\n");
    if (end == std::string::npos && head.size() > kMaxHead) {
      status = 431;
      break;
    }
  }

  Response response;
  bool head_only = false;
  if (status == 0) {
    // Request line: METHOD SP TARGET SP HTTP/1.x
    const std::string line = head.substr(0, head.find_first_of("\r\n"));
    const auto sp1 = line.find(' ');
    const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
    const std::string method = line.substr(0, sp1);
    const std::string target =
        sp2 == std::string::npos ? std::string() : line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string version = sp2 == std::string::npos ? std::string() : line.substr(sp2 + 1);
    if (target.empty() || target[0] != '/' || version.rfind("HTTP/1.", 0) != 0 ||
        version.size() != 8) {
      status = 400;
    } else if (method != "GET" && method != "HEAD") {
      status = 405;
    } else {
      head_only = method == "HEAD";
      try {
        response = handler_(std::string_view(target).substr(0, target.find('?')));
      } catch (const std::exception& e) {
        spdlog::warn("http {}: {} failed: {}", address_, target, e.what());
        response = Response{500, "text/plain; charset=utf-8", "internal error\n"};
      }
    }
  }
  if (status != 0) {
    response =
        Response{status, "text/plain; charset=utf-8", std::string(reason_phrase(status)) + "\n"};
  }
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                    reason_phrase(response.status) + "\r\nContent-Type: " + response.content_type +
                    "\r\nContent-Length: " + std::to_string(response.body.size()) +
                    "\r\nConnection: close\r\n";
  if (response.status == 405) out += "Allow: GET, HEAD\r\n";
  out += "\r\n";
  if (!head_only) out += response.body;
  if (!net::send_all(client, out, deadline, wake)) return;
  ::shutdown(client, SHUT_WR);
  // Let the client read the answer before the close: wait briefly for its own close, so
  // unread request bytes do not turn our close into a reset that loses the response.
  std::string rest;
  const net::Deadline linger =
      std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds{200});
  while (net::receive_some(client, rest, 4096, linger, wake) > 0) rest.clear();
}

}  // namespace bk::cli
