// HTTP/1.1 over a raw loopback socket, for tests that must send exactly what they mean
// (half requests, pipelined requests, malformed ones) and see exactly what comes back.
#pragma once
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace bk::test {

// One answer as it came: status, head (lower-case header names), body.
struct RawAnswer {
  int status = 0;
  std::string head;                            // status line and headers, without the blank line
  std::map<std::string, std::string> headers;  // name (lower case) -> value (last one wins)
  std::string body;

  // "" when the header is absent.
  std::string header(const std::string& lower_case_name) const;
};

class RawConnection {
 public:
  // Connects to 127.0.0.1:port; connected() says whether it did.
  explicit RawConnection(int port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  RawConnection(RawConnection&& other) noexcept;
  RawConnection& operator=(RawConnection&& other) = delete;

  bool connected() const { return fd_ >= 0; }
  // Sends everything; false when the peer is gone.
  bool send(std::string_view data);
  // Sends a request head (ending in its blank line) with "Expect: 100-continue" added and
  // waits for the server to admit it: the answer it got (100 when admitted, a refusal
  // otherwise), or nullopt when none came within `timeout`.
  std::optional<RawAnswer> send_expecting_continue(std::string_view head,
                                                   std::chrono::milliseconds timeout);
  // The next answer, read within `timeout`; nullopt when the connection closed or the time
  // ran out first. `head_request`: the answer to a HEAD has no body whatever its length.
  std::optional<RawAnswer> answer(std::chrono::milliseconds timeout, bool head_request = false);
  // Whether the peer closes the connection (EOF or reset) within `timeout`; bytes that
  // arrive meanwhile are kept for answer().
  bool closed_within(std::chrono::milliseconds timeout);
  void close();

 private:
  int fd_ = -1;
  std::string pending_;  // received, not yet returned
  // Reads what is there within the deadline: > 0 bytes, 0 at EOF, -1 on timeout or error.
  long receive(std::chrono::steady_clock::time_point deadline);
};

// One request on a connection of its own, `request` sent as it is; the answer, or nullopt.
std::optional<RawAnswer> raw_exchange(int port, std::string_view request,
                                      std::chrono::milliseconds timeout);

}  // namespace bk::test
