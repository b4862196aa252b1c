// Streaming replication as serve's reads need it: where the primary's WAL is now, and whether
// a replica has replayed up to a position. A read that begins by asking the first, and goes
// to the replica only when the second holds, sees every change the primary had committed
// when the read began, and so every change Redis could already reflect (writers commit in
// PostgreSQL before they tell Redis: spills, archives, erasures, profiles).
#pragma once
#include <string>

namespace bk::cold {

class ColdStore;

// Where the primary's WAL is now, e.g. "16/B374D848": at or past the commit record of every
// transaction that has returned from COMMIT. Its flush position (a commit returns once its
// record is flushed), or with synchronous_commit = off its insert position (such a commit
// returns before the flush).
std::string wal_position(ColdStore& primary);

// Whether `replica` is a standby that has replayed WAL up to `position`. False on a server
// that is not in recovery (a replica that was promoted, or a read_url naming a primary): it
// cannot say what it has seen of the primary's writes.
bool replayed(ColdStore& replica, const std::string& position);

}  // namespace bk::cold
