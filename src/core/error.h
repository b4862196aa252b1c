// The error tree of boardkeeper. Every failure a user can cause or meet is one of these,
// and main() turns each into the exit code of the public contract.
//
// Each server has one base of its own (redis::RedisError, cold::PostgresError) and
// "unreachable" is UnavailableError whichever server it is, so a Redis connection error is
// both. bk::Error is a virtual base of those so that such an error is still one bk::Error:
// "which server, and is it worth retrying" is one call, `backend()` and `transient()`.
#pragma once
#include <stdexcept>
#include <string>

namespace bk {

enum class ExitCode : int { ok = 0, failed = 1, usage = 2, unavailable = 3 };

// The server a failure came from.
enum class Backend {
  none,  // not a server's failure (a config mismatch, a refused input, ...)
  redis,
  postgres,
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  virtual ExitCode exit_code() const noexcept { return ExitCode::failed; }
  virtual Backend backend() const noexcept { return Backend::none; }
  // The server could not be reached or cannot serve right now (exit 3): the same request,
  // after reconnecting and waiting a little, may succeed.
  bool transient() const noexcept { return exit_code() == ExitCode::unavailable; }
  // The server took the request but did not answer within its deadline (frozen, a stalled
  // disk, a partition that drops packets without a refusal): unavailable too, but told
  // apart from a refusal in answers and probes ("hung").
  virtual bool hung() const noexcept { return false; }
};

// Bad command line or configuration: the user must change what they wrote (exit 2).
class UsageError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::usage; }
};

// A read named something that does not exist: a board no config entry matches, a period the
// board does not use, a period with nothing to read. Exit 2 like any usage error; the HTTP
// read API answers it with 404 (other usage errors: 400).
class NotFoundError : public UsageError {
 public:
  using UsageError::UsageError;
};

// A server (Redis or PostgreSQL) cannot be reached or went away (exit 3). A class deriving
// from it initialises the virtual base itself: `D(const std::string& w) : Error(w), ...`.
class UnavailableError : public virtual Error {
 public:
  explicit UnavailableError(const std::string& what) : Error(what) {}
  ExitCode exit_code() const noexcept override { return ExitCode::unavailable; }
};

// Another operation holds what this one needs (a period's lock during a long spill or
// archive) for longer than the caller chose to wait (exit 3, like a server that cannot serve
// right now): the same request later may succeed. The message says what was done already.
class BusyError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::unavailable; }
};

// An input that is well formed but not acceptable: out of range, late, bad member (exit 1).
class RefusedError : public Error {
 public:
  using Error::Error;
};

// Points that cannot be represented by a board's score encoding.
class OutOfRangeError : public RefusedError {
 public:
  using RefusedError::RefusedError;
};

}  // namespace bk
