// Streaming replication as serve's reads need it: where the primary's WAL is now, and whether
// a replica has replayed up to a position. A read that begins by asking the first, and goes
// to the replica only when the second holds, sees every change the primary had committed
// when the read began, and so every change Redis could already reflect (writers commit in
// PostgreSQL before they tell Redis: spills, archives, erasures, profiles).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace bk::cold {

class ColdStore;

// The primary's current WAL write position (pg_current_wal_lsn()), e.g. "16/B374D848".
std::string wal_position(ColdStore& primary);

// Whether `replica` is a standby that has replayed WAL up to `position`. False on a server
// that is not in recovery (a replica that was promoted, or a read_url naming a primary): it
// cannot say what it has seen of the primary's writes.
bool replayed(ColdStore& replica, const std::string& position);

// How far `replica` is behind `primary_position`: bytes of WAL not yet replayed, and the age
// of the last transaction it replayed (nullopt before it replayed any). nullopt when the
// server is not a standby.
struct ReplicaLag {
  std::int64_t bytes = 0;
  std::optional<double> seconds;
};
std::optional<ReplicaLag> replica_lag(ColdStore& replica, const std::string& primary_position);

}  // namespace bk::cold
