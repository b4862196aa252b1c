// Keys' expiry times as tick re-asserts them: which keys exist without one, and setting one,
// so callers above `hot` spell no PTTL or PEXPIREAT.
#pragma once
#include <string>
#include <vector>

#include "core/time.h"
#include "redis/connection.h"

namespace bk::hot {

// Of `keys`, those that exist without an expiry time (a missing key has none to fix), in
// order, in one round trip. Throws redis errors.
std::vector<std::string> keys_without_expiry(redis::Connection& conn,
                                             const std::vector<std::string>& keys);

// Each of `keys` expires at `at` (PEXPIREAT), in one round trip. Throws redis errors.
void expire_keys_at(redis::Connection& conn, const std::vector<std::string>& keys, Instant at);

}  // namespace bk::hot
