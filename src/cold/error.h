// Errors from talking to PostgreSQL, one tree under PostgresError so that callers (metrics,
// logs, retries) tell them from Redis's with one call (`backend()`): "unavailable" is exit 3
// as for every server, the rest a failure (exit 1).
#pragma once
#include "core/error.h"

namespace bk::cold {

// Every PostgreSQL error; thrown as such when a statement failed (rolled back, refused by
// the server, a commit in doubt...).
class PostgresError : public virtual Error {
 public:
  explicit PostgresError(const std::string& what) : Error(what) {}
  Backend backend() const noexcept override { return Backend::postgres; }
};

// The server cannot be reached, or the connection broke.
class PostgresUnavailable : public PostgresError, public UnavailableError {
 public:
  explicit PostgresUnavailable(const std::string& what)
      : Error(what), PostgresError(what), UnavailableError(what) {}
};

// No answer within the caller's deadline (cold/call_deadline.h): the connection was cut and
// is not used again.
class PostgresTimeout : public PostgresUnavailable {
 public:
  explicit PostgresTimeout(const std::string& what) : Error(what), PostgresUnavailable(what) {}
  bool hung() const noexcept override { return true; }
};

}  // namespace bk::cold
