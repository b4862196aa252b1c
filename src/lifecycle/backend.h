// Which server an error came from, for counting failures per backend (metrics) without
// parsing messages.
#pragma once
#include <exception>

namespace bk::lifecycle {

enum class Backend {
  none,      // not a server's error (a config mismatch, a refused input, ...)
  redis,     // redis::ConnectionError, redis::ReplyError
  postgres,  // cold::PostgresUnavailable, cold::PostgresError
};

Backend backend_of(const std::exception& error);

}  // namespace bk::lifecycle
