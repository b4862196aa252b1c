// Small POSIX socket helpers for the Pushgateway client: an owned descriptor, host:port
// parsing (also for --listen), and sends and receives bounded by a deadline.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace bk::http::net {

using Deadline = std::chrono::steady_clock::time_point;

// Owns a file descriptor; closes it when destroyed. Moves, never copies.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release();

 private:
  int fd_ = -1;
};

struct HostPort {
  std::string host;  // without IPv6 brackets; empty means every interface
  std::string port;  // digits
};
// "HOST:PORT", "[::1]:PORT" or ":PORT". Throws UsageError naming `what` when malformed.
HostPort parse_host_port(std::string_view text, std::string_view what);

// Connects to host:port (any of its addresses) before the deadline. Throws bk::Error
// naming the address and the reason.
Fd connect_to(const HostPort& where, Deadline deadline);

// Waits until fd is readable (or writable) or `wake` (if >= 0) is readable. False when
// the deadline passed or `wake` fired first.
bool wait_for(int fd, bool write, Deadline deadline, int wake = -1);
// Sends everything; false on an error, a timeout or a wake.
bool send_all(int fd, std::string_view data, Deadline deadline, int wake = -1);
// Appends what arrives; returns bytes read, 0 at EOF, -1 on an error, a timeout or a wake.
long receive_some(int fd, std::string& into, std::size_t max, Deadline deadline, int wake = -1);

}  // namespace bk::http::net
