// The deadline of this thread's PostgreSQL calls and the one watchdog thread that cuts a
// call's socket when its deadline passes.
#include "cold/call_deadline.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "cold/watched_call.h"
#include "core/shun.h"

namespace bk::cold {
namespace {

thread_local std::optional<SteadyTime> t_deadline;
thread_local std::optional<std::chrono::milliseconds> t_timeout;

// Armed calls, at most one a thread, and the servers shunned; a thread of its own, started by
// the first call armed (a process that never sets a deadline has none). Shutting a socket down from
// another thread is safe: the calling thread's poll() returns and libpq reads the end of the
// connection.
class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog w;
    return w;
  }

  // 0 when the call must not be made (the deadline passed, the server is shunned, or calls
  // were cut); nullopt when it cannot be watched (no descriptor left to duplicate).
  std::optional<std::uint64_t> arm(int fd, SteadyTime at, const std::string& where) {
    const std::lock_guard<std::mutex> lock(mu_);
    const SteadyTime now = std::chrono::steady_clock::now();
    if (cut_ || at <= now) return 0;
    if (!shuns_.of(where).may_try(now)) return 0;
    const int held = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (held < 0) return std::nullopt;
    if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
    const std::uint64_t ticket = next_++;
    armed_.emplace(ticket, Armed{held, at, where, false});
    wake_.notify_one();
    return ticket;
  }

  // Whether the watchdog cut the call's socket. A call that ended in time (whatever its
  // answer) ends its server's shun.
  bool disarm(std::uint64_t ticket, bool answered) {
    const std::lock_guard<std::mutex> lock(mu_);
    const auto it = armed_.find(ticket);
    if (it == armed_.end()) return false;
    const bool fired = it->second.fired;
    if (!fired && answered) shuns_.of(it->second.where).end();
    ::close(it->second.fd);
    armed_.erase(it);
    return fired;
  }

  void cut_all() {
    const std::lock_guard<std::mutex> lock(mu_);
    cut_ = true;
    for (auto& [ticket, a] : armed_) fire(a);
  }

  ~Watchdog() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Armed {
    int fd;  // a duplicate, held until disarmed
    SteadyTime at;
    std::string where;
    bool fired;
  };
  std::mutex mu_;
  std::condition_variable wake_;
  std::unordered_map<std::uint64_t, Armed> armed_;
  Shuns shuns_;  // by server ("postgresql at host:port/db")
  std::uint64_t next_ = 1;
  bool cut_ = false;
  bool quit_ = false;
  std::thread thread_;

  static void fire(Armed& a) {
    if (a.fired) return;
    ::shutdown(a.fd, SHUT_RDWR);
    a.fired = true;
  }

  void watch() {
    sigset_t all;  // signals are the main thread's
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::unique_lock<std::mutex> lock(mu_);
    while (!quit_) {
      std::optional<SteadyTime> next;
      const SteadyTime now = std::chrono::steady_clock::now();
      for (auto& [ticket, a] : armed_) {
        if (a.fired) continue;
        if (a.at <= now) {
          fire(a);
          shuns_.of(a.where).shun(now);
        } else if (!next || a.at < *next) {
          next = a.at;
        }
      }
      if (next) {
        wake_.wait_until(lock, *next);
      } else {
        wake_.wait(lock);
      }
    }
  }
};

}  // namespace

CallDeadline::CallDeadline(SteadyTime at) : outer_(t_deadline) {
  if (!t_deadline || at < *t_deadline) t_deadline = at;
}

CallDeadline::~CallDeadline() {
  t_deadline = outer_;
}

CallTimeout::CallTimeout(std::optional<std::chrono::milliseconds> each) : outer_(t_timeout) {
  if (each && (!t_timeout || *each < *t_timeout)) t_timeout = each;
}

CallTimeout::~CallTimeout() {
  t_timeout = outer_;
}

std::optional<std::chrono::milliseconds> call_timeout() {
  return t_timeout;
}

std::optional<SteadyTime> call_deadline() {
  if (!t_timeout) return t_deadline;
  const SteadyTime each = std::chrono::steady_clock::now() + *t_timeout;
  return t_deadline && *t_deadline < each ? t_deadline : each;
}

void cut_every_call() {
  Watchdog::instance().cut_all();
}

namespace pg {

WatchedCall::WatchedCall(int fd, const std::string& where, bool* broken) : broken_(broken) {
  const std::optional<SteadyTime> deadline = call_deadline();
  if (fd < 0 || !deadline) return;
  const std::optional<std::uint64_t> ticket = Watchdog::instance().arm(fd, *deadline, where);
  if (!ticket) return;  // unwatched: as without a deadline
  ticket_ = *ticket;
  if (ticket_ != 0) return;
  fired_ = true;
  ::shutdown(fd, SHUT_RDWR);  // refused: nothing more waits on this connection
  if (broken_ != nullptr) *broken_ = true;
}

bool WatchedCall::end(bool answered) {
  if (ticket_ != 0) {
    fired_ = Watchdog::instance().disarm(ticket_, answered);
    ticket_ = 0;
    if (fired_ && broken_ != nullptr) *broken_ = true;
  }
  return fired_;
}

}  // namespace pg
}  // namespace bk::cold
