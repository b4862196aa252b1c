// One PostgreSQL call watched against this thread's CallDeadline (internal to bk_cold; the
// deadline itself: cold/call_deadline.h).
#pragma once
#include <cstdint>
#include <string>

namespace bk::cold::pg {

// Arms the watchdog over a call on socket `fd` (-1: nothing to watch) to the server `where`
// with this thread's deadline: when it passes before end(), the socket is shut down both
// ways, so that libpq's wait returns and the call fails, and the server is shunned
// (call_deadline.h). Without a deadline it does nothing. The socket must stay
// open until end() (or the destructor): the watchdog never touches a descriptor it no longer
// holds, so it never cuts one that the number was given to since.
class WatchedCall {
 public:
  WatchedCall(int fd, const std::string& where);
  ~WatchedCall() { end(); }
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

  // The deadline had passed, the server is shunned or every call was cut before the call
  // began: do not make it.
  bool expired() const { return fired_; }
  // Disarms; whether the deadline cut the socket (or had passed before). Idempotent.
  bool end();

 private:
  std::uint64_t ticket_ = 0;  // 0: not armed
  bool fired_ = false;
};

}  // namespace bk::cold::pg
