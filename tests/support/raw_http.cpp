// A minimal HTTP/1.1 answer reader on a blocking socket polled against a deadline.
#include "raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>

namespace bk::test {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The status and headers of a head; status 0 when it is not an HTTP/1.x status line.
RawAnswer parse_head(const std::string& head) {
  RawAnswer a;
  a.head = head;
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12) return a;
  a.status = std::atoi(head.substr(9, 3).c_str());
  for (std::size_t at = head.find("\r\n"); at != std::string::npos;) {
    const std::size_t start = at + 2;
    const std::size_t end = std::min(head.find("\r\n", start), head.size());
    const std::string line = head.substr(start, end - start);
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      a.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
    }
    at = end < head.size() ? end : std::string::npos;
  }
  return a;
}

}  // namespace

std::string RawAnswer::header(const std::string& lower_case_name) const {
  const auto it = headers.find(lower_case_name);
  return it == headers.end() ? std::string() : it->second;
}

RawConnection::RawConnection(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) close();
}

RawConnection::~RawConnection() {
  close();
}

RawConnection::RawConnection(RawConnection&& other) noexcept
    : fd_(other.fd_), pending_(std::move(other.pending_)) {
  other.fd_ = -1;
}

void RawConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawConnection::send(std::string_view data) {
  while (!data.empty() && fd_ >= 0) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return fd_ >= 0;
}

std::optional<RawAnswer> RawConnection::send_expecting_continue(std::string_view head,
                                                                std::chrono::milliseconds timeout) {
  const std::string_view without_end = head.substr(0, head.size() - 2);  // the blank line
  if (!send(std::string(without_end) + "Expect: 100-continue\r\n\r\n")) return std::nullopt;
  return answer(timeout);
}

long RawConnection::receive(std::chrono::steady_clock::time_point deadline) {
  if (fd_ < 0) return 0;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return -1;
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return -1;
    char buf[65536];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 0;  // reset: as good as closed
    pending_.append(buf, static_cast<std::size_t>(n));
    return n;
  }
}

std::optional<RawAnswer> RawConnection::answer(std::chrono::milliseconds timeout,
                                               bool head_request) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t split = 0;
  while ((split = pending_.find("\r\n\r\n")) == std::string::npos) {
    if (receive(deadline) <= 0) return std::nullopt;
  }
  RawAnswer a = parse_head(pending_.substr(0, split));
  const std::string length = a.header("content-length");
  const std::size_t body =
      head_request || length.empty() ? 0 : static_cast<std::size_t>(std::stoul(length));
  while (pending_.size() < split + 4 + body) {
    if (receive(deadline) <= 0) return std::nullopt;
  }
  a.body = pending_.substr(split + 4, body);
  pending_.erase(0, split + 4 + body);
  return a;
}

bool RawConnection::closed_within(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const long n = receive(deadline);
    if (n == 0) return true;
    if (n < 0) return false;
  }
}

std::optional<RawAnswer> raw_exchange(int port, std::string_view request,
                                      std::chrono::milliseconds timeout) {
  RawConnection c(port);
  if (!c.connected() || !c.send(request)) return std::nullopt;
  return c.answer(timeout);
}

}  // namespace bk::test
