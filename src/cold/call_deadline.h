// Deadlines for PostgreSQL calls: a hung server (frozen, a stalled disk, a partition that
// drops packets without refusing them) costs a call its deadline, never its thread.
#pragma once
#include <chrono>
#include <optional>

namespace bk::cold {

using SteadyTime = std::chrono::steady_clock::time_point;

// Every PostgreSQL call this thread makes while a CallDeadline lives (connecting, sending,
// waiting for the answer) ends by `at`, or fails with PostgresTimeout (cold/error.h) and its
// connection is dropped: the store's next call connects afresh. libpq waits in poll() with
// no timeout of its own, so a watchdog thread shuts the call's socket down when its deadline
// passes; the server, once it runs again, finds its client gone and ends the statement
// (client_connection_check_interval, set on every connection). The server is then shunned
// (core/shun.h): calls to it under a deadline fail at once for a second, but one that tries.
// Nested deadlines: the nearer one holds. Calls with no deadline wait as before.
class CallDeadline {
 public:
  explicit CallDeadline(SteadyTime at);
  ~CallDeadline();
  CallDeadline(const CallDeadline&) = delete;
  CallDeadline& operator=(const CallDeadline&) = delete;

 private:
  std::optional<SteadyTime> outer_;
};

// Every PostgreSQL call this thread makes while a CallTimeout lives ends within `each` of its
// start, or fails as past a CallDeadline (with both: whichever comes first). For tick, whose
// calls may rightly run long (an archive's merge), but not forever: a hung server costs the
// call its timeout. nullopt: no bound of its own (an outer CallTimeout still holds).
class CallTimeout {
 public:
  explicit CallTimeout(std::optional<std::chrono::milliseconds> each);
  ~CallTimeout();
  CallTimeout(const CallTimeout&) = delete;
  CallTimeout& operator=(const CallTimeout&) = delete;

 private:
  std::optional<std::chrono::milliseconds> outer_;
};

// This thread's CallTimeout, if one lives (a thread of the caller's takes it on with its own).
std::optional<std::chrono::milliseconds> call_timeout();

// The deadline of a call this thread starts now: its CallDeadline's, or now + its CallTimeout,
// the nearer; nullopt without either.
std::optional<SteadyTime> call_deadline();

// Every call with a deadline that is in flight now, on any thread, fails at once, and so does
// every later one: a server stopping does not wait for its backends (serve's SIGTERM).
void cut_every_call();

}  // namespace bk::cold
