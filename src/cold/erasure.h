// The right to erasure in PostgreSQL (step E2 of `erase`, docs/architecture.md): one member's
// cold rows of any period, archived history rows of every period (history_rows and the
// history_large partitions), profile and ban of one board, in one transaction; and the audit
// table (sql/012_erasures.sql), which keeps the member only as a keyed hash.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cold/types.h"

namespace bk::cold {

namespace pg {
struct Link;
}

// What erasing one member took from one board period (or would take, with a dry run).
struct ErasedPeriod {
  PeriodKey key;
  bool archived = false;     // the period is in history (periods.status = 'archived')
  std::int64_t cold = 0;     // cold rows (cold_members)
  std::int64_t history = 0;  // history rows (history_rows or the period's history_large part)
};

// What erasing one member took from one board in PostgreSQL.
struct ErasedBoard {
  std::vector<ErasedPeriod> periods;  // sorted by (period, period_id)
  std::int64_t profiles = 0;          // profile rows
  std::int64_t bans = 0;              // ban rows
  std::int64_t league = 0;            // a league board's division, seat and result rows
};

// The hex HMAC-SHA256 of `member` under `key` (raw bytes): the audit's member_hash.
std::string keyed_hash(const std::string& key, const std::string& member);

class ErasureStore {
 public:
  explicit ErasureStore(std::shared_ptr<pg::Link> link);

  // The boards PostgreSQL holds rows of (cold rows, periods, profiles, bans), sorted. Cheap
  // on big tables: it skips from board to board along each table's primary key.
  std::vector<std::string> boards();

  // E2: removes the member's rows of `board` in one transaction, each cold row under its
  // period's lock (the one a spill holds for its whole run and an archive's claim takes), so
  // a running spill or archive of that period finishes first; page counts and the archived
  // periods' member counts follow. With `dry_run` it only counts. Idempotent.
  ErasedBoard erase(const std::string& board, const std::string& member, bool dry_run);

  // The audit. `begin` returns the id of the request's row: an unfinished row of the same
  // hash (a killed request, which this run finishes) or a new one. `earlier` counts the rows
  // of the same hash before `id`. `record` adds a board's figures to the row as they are
  // done (so a killed request leaves what it did); `finish` completes it.
  std::int64_t begin(const std::string& member_hash, Instant now);
  std::int64_t earlier(const std::string& member_hash, std::int64_t id);
  void record(std::int64_t id, const std::string& board, std::int64_t rows);
  void finish(std::int64_t id, std::int64_t dead_letters, Instant now);

 private:
  std::shared_ptr<pg::Link> link_;
};

}  // namespace bk::cold
