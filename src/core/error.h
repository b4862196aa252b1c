// The error tree of boardkeeper. Every failure a user can cause or meet is one of these,
// and main() turns each into the exit code of the public contract.
#pragma once
#include <stdexcept>
#include <string>

namespace bk {

enum class ExitCode : int { ok = 0, failed = 1, usage = 2, unavailable = 3 };

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  virtual ExitCode exit_code() const noexcept { return ExitCode::failed; }
};

// Bad command line or configuration: the user must change what they wrote (exit 2).
class UsageError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::usage; }
};

// A server (Redis or PostgreSQL) cannot be reached or went away (exit 3).
class UnavailableError : public Error {
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
