// Member profiles in tick: Redis keeps the profiles (hot::BoardKeys::names / metadata) of
// members that may be hot; those of members hot in no live period of the board move to
// PostgreSQL (so Redis memory follows the hot members), and before a period of the board is
// archived every profile Redis holds is copied there too (the archive joins them into the
// history rows).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "hot/board_scripts.h"
#include "redis/connection.h"

namespace bk::lifecycle {

struct ProfileStats {
  std::int64_t copied = 0;  // profile fields written to PostgreSQL
  std::int64_t moved = 0;   // of those, fields removed from Redis (their member hot nowhere)
};

// One pass over the board's profile hashes. `live`: the board's live ZSETs (a member in none
// of them is hot nowhere). `copy_all`: write every field to PostgreSQL, not only those of
// members hot nowhere. A field set again while the pass runs stays in Redis (the newer one).
// Order: PostgreSQL commits before Redis forgets, so a crash anywhere loses nothing.
ProfileStats sync_profiles(redis::Connection& redis, hot::BoardScripts& hot, cold::ColdStore& cold,
                           const std::string& board, const std::vector<std::string>& live,
                           bool copy_all);

// After Redis lost data (restart, FLUSHALL, failover): sets each profile hash's marker again
// when PostgreSQL holds that field for some member of the board, so reads look there. One
// round trip per hash when it is set.
void mark_profiles(redis::Connection& redis, cold::ColdStore& cold, const std::string& board,
                   const std::string& key_prefix);

}  // namespace bk::lifecycle
