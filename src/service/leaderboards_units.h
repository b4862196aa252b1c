// The units a Leaderboards owns (service/leaderboards.h), built in place over its members:
// the update path over its tiers, and the reads and profiles over theirs. Internal to
// leaderboards.cpp.
#pragma once
#include <optional>

#include "hot/idempotency.h"
#include "service/leaderboards.h"
#include "service/live_reads.h"
#include "service/profiles.h"
#include "service/reads.h"
#include "service/tier_adapters.h"
#include "service/update_tiers.h"
#include "service/updates.h"

namespace bk::service {

// The update path and the tiers it works over (the cold one only with a cold tier).
struct Leaderboards::UpdatePath {
  explicit UpdatePath(Leaderboards& lb);
  RedisUpdateTier hot;
  std::optional<PostgresUpdateTier> cold;
  Updates updates;
  hot::Idempotency idempotency;  // the fingerprints of keyed updates
};

// The units refer to each other and to the facade's connection, board scripts, cold store and
// counters: built in place, never moved.
struct Leaderboards::ReadUnits {
  explicit ReadUnits(Leaderboards& b)
      : redis(b.redis_, b.hot_),
        postgres([&b] { return b.has_cold(); },
                 [&b]() -> cold::ColdStore& { return b.cold_store(); }),
        profiles(b.config_.redis.key_prefix, redis, postgres),
        live(b.config_, b.clock_, redis, postgres, profiles, b.counters_.retries),
        reads(b.config_, b.clock_, live, postgres) {}

  RedisTier redis;
  PostgresTier postgres;
  Profiles profiles;
  LiveReads live;
  Reads reads;
};

}  // namespace bk::service
