// One PostgreSQL call watched against this thread's CallDeadline (internal to bk_cold; the
// deadline itself: cold/call_deadline.h).
#pragma once
#include <cstdint>
#include <string>

namespace bk::cold::pg {

// Arms the watchdog over a call on socket `fd` (-1: nothing to watch) to the server `where`
// with this thread's deadline: when it passes before end(), the socket is shut down both
// ways, so that libpq's wait returns and the call fails, and the server is shunned
// (call_deadline.h). Without a deadline it does nothing. The watchdog holds a duplicate of
// the descriptor until end(), so that a socket libpq closes meanwhile is never confused with
// one that gets its number since. Once the socket was cut (or the call was refused before it
// began: the socket is then cut at once, so that nothing more, not even a ROLLBACK, waits on
// it), `*broken` is set: the connection is not used again.
class WatchedCall {
 public:
  WatchedCall(int fd, const std::string& where, bool* broken = nullptr);
  ~WatchedCall() { end(); }
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

  // The deadline had passed, the server is shunned or every call was cut before the call
  // began: do not make it.
  bool expired() const { return fired_; }
  // Disarms; whether the deadline cut the socket (or had passed before). Idempotent.
  // `answered`: the server answered (its shun ends unless the socket was cut); false for a
  // step that the kernel alone completes, such as a TCP connect to a frozen server.
  bool end(bool answered = true);

 private:
  std::uint64_t ticket_ = 0;  // 0: not armed
  bool fired_ = false;
  bool* broken_ = nullptr;
};

}  // namespace bk::cold::pg
