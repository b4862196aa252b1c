// Which server an error came from, for counting failures per backend (metrics) without
// parsing messages: the error tree says it (bk::Error::backend()).
#pragma once
#include <exception>

#include "core/error.h"

namespace bk::lifecycle {

using Backend = bk::Backend;

// The server of a bk::Error (redis::RedisError, cold::PostgresError); none for the rest.
Backend backend_of(const std::exception& error);

}  // namespace bk::lifecycle
