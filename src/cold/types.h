// The values the cold tier stores and returns: board periods, spilled rows, profiles and the
// deployment a schema belongs to. No libpqxx here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/time.h"

namespace bk::cold {

// One board period in the cold tier.
struct PeriodKey {
  std::string board;
  std::string period;     // "daily", "cup", ...
  std::string period_id;  // "2026-11-22", ...
};

// How many members of an archived period one tier holds (History::Counts::tiers, a close
// notice's counts).
struct TierCount {
  std::string tier;
  std::int64_t members = 0;
};

// A member as a spill writes it.
struct ColdRow {
  std::string member;
  std::int64_t encoded = 0;
  std::int64_t points = 0;
  std::optional<Instant> achieved_at;
};

// A member as found in the cold tier.
struct ColdHit {
  std::string member;
  std::int64_t encoded = 0;
  std::int64_t points = 0;
  std::optional<Instant> achieved_at;
  std::int64_t version = 0;
};

struct MemberKey {
  PeriodKey period;
  std::string member;
};

// A member's profile on a board, as PostgreSQL keeps it (sql/008_profiles.sql).
struct Profile {
  std::string member;
  std::optional<std::string> name;
  std::optional<std::string> metadata;  // compact JSON text
};

// Which field of a profile a write sets or a check asks about.
enum class ProfileField { name, metadata };

// The deployment a schema belongs to (sql/003_deployment.sql): one Redis data set.
struct Deployment {
  std::string id;  // the data set's marker (<key_prefix>:deployment in Redis)
  std::string key_prefix;
  std::string redis_address;  // host:port/db or socket path/db, never a password
};

}  // namespace bk::cold
