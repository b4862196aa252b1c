// A backend that took a call but did not answer it in time is shunned for a short while:
// calls to it then fail at once instead of each spending its own deadline, so that a hung
// server costs one call its deadline, not every call that touches it (and the calls that can
// do without it degrade at once, as they do when it refuses). After kShunFor one call tries
// again while the others still fail at once; a call that gets any answer ends the shun.
// Shared by the threads that call one server (Shuns: one per server); used by
// redis::Connection (Options::shuns) and by cold's call deadlines (cold/call_deadline.h).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace bk {

inline constexpr std::chrono::milliseconds kShunFor{1000};

class Shun {
 public:
  using Time = std::chrono::steady_clock::time_point;

  // A call ran out its deadline at `now`.
  void shun(Time now = std::chrono::steady_clock::now()) { until_.store(ticks(now + kShunFor)); }
  // A call got an answer.
  void end() { until_.store(0); }
  // Whether a call may go to the server now: not shunned, or the shun is over and this call
  // is the one that tries (the shun is renewed for the others until it has an answer).
  bool may_try(Time now = std::chrono::steady_clock::now()) {
    std::int64_t until = until_.load();
    if (until == 0) return true;
    if (ticks(now) < until) return false;
    return until_.compare_exchange_strong(until, ticks(now + kShunFor));
  }

 private:
  std::atomic<std::int64_t> until_{0};  // steady_clock ticks; 0: not shunned
  static std::int64_t ticks(Time t) {
    return static_cast<std::int64_t>(t.time_since_epoch().count());
  }
};

// A Shun per server, by name ("127.0.0.1:6379"): a hung node of a cluster shuns that node,
// not the others. A Shun, once made, stays where it is.
class Shuns {
 public:
  Shun& of(const std::string& server) {
    const std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<Shun>& s = by_server_[server];
    if (!s) s = std::make_unique<Shun>();
    return *s;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Shun>> by_server_;
};

}  // namespace bk
