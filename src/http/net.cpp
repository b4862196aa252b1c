// Sockets are non-blocking and every wait is a poll() with the time left, so no peer can
// hold us past a deadline.
#include "http/net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace bk::http::net {
namespace {

int millis_left(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, 60000));
}

std::string describe(const HostPort& where) {
  return (where.host.find(':') != std::string::npos ? "[" + where.host + "]" : where.host) + ":" +
         where.port;
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

HostPort parse_host_port(std::string_view text, std::string_view what) {
  const auto bad = [&](const std::string& why) {
    return UsageError(std::string(what) + " '" + std::string(text) + "': " + why +
                      " (expected HOST:PORT, [IPv6]:PORT or :PORT)");
  };
  HostPort out;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw bad("unclosed IPv6 address");
    }
    out.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) throw bad("no port");
    out.host = std::string(text.substr(0, colon));
    if (out.host.find(':') != std::string::npos) throw bad("put an IPv6 address in brackets");
    port = text.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string_view::npos ||
      std::stoi(std::string(port)) > 65535) {
    throw bad("port must be 0 to 65535");
  }
  out.port = std::string(port);
  return out;
}

Fd connect_to(const HostPort& where, Deadline deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(where.host.empty() ? "localhost" : where.host.c_str(),
                               where.port.c_str(), &hints, &found);
  if (rc != 0) throw Error(describe(where) + ": cannot resolve: " + ::gai_strerror(rc));
  const std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, ::freeaddrinfo);
  std::string why = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd) {
      why = std::strerror(errno);
      continue;
    }
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) return fd;
    if (errno != EINPROGRESS) {
      why = std::strerror(errno);
      continue;
    }
    if (!wait_for(fd.get(), true, deadline)) {
      why = "timed out";
      continue;
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err == 0) return fd;
    why = std::strerror(err);
  }
  throw Error(describe(where) + ": cannot connect: " + why);
}

bool wait_for(int fd, bool write, Deadline deadline, int wake) {
  while (true) {
    pollfd fds[2] = {{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0}, {wake, POLLIN, 0}};
    const int n = ::poll(fds, wake >= 0 ? 2 : 1, millis_left(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (wake >= 0 && (fds[1].revents & POLLIN) != 0) return false;
    return true;  // ready, or an error that the next call reports
  }
}

bool send_all(int fd, std::string_view data, Deadline deadline, int wake) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd, true, deadline, wake)) {
      continue;
    }
    return false;
  }
  return true;
}

long receive_some(int fd, std::string& into, std::size_t max, Deadline deadline, int wake) {
  char buf[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buf, std::min(sizeof buf, max), 0);
    if (n >= 0) {
      into.append(buf, static_cast<std::size_t>(n));
      return static_cast<long>(n);
    }
    if (errno == EINTR) continue;
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd, false, deadline, wake)) continue;
    return -1;
  }
}

}  // namespace bk::http::net
