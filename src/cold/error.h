// Errors from talking to PostgreSQL, typed so that callers (metrics, logs) can tell them
// from Redis's: "unavailable" is exit 3 as for every server, the rest a failure (exit 1).
#pragma once
#include "core/error.h"

namespace bk::cold {

// The server cannot be reached, or the connection broke.
class PostgresUnavailable : public UnavailableError {
 public:
  using UnavailableError::UnavailableError;
};

// A statement failed (rolled back, refused by the server, a commit in doubt...).
class PostgresError : public Error {
 public:
  using Error::Error;
};

}  // namespace bk::cold
