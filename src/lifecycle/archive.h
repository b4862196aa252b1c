// Archive (protocol 3): a period past end + grace is frozen in Redis, written to history
// in one PostgreSQL transaction (its hot members copied in, in chunks so memory stays flat,
// and merged with its cold rows by the database, which computes the ranks), and only then
// are its hot keys freed.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "hot/board_scripts.h"
#include "lifecycle/spill.h"
#include "redis/connection.h"

namespace bk::lifecycle {

struct ArchiveStats {
  enum class Outcome { archived, already, busy, lost, would_archive };
  Outcome outcome = Outcome::archived;
  std::int64_t hot = 0;   // rows taken from Redis
  std::int64_t cold = 0;  // rows taken from the cold tier
  // Archived, but Redis had lost the period's data (its hot key was gone, or a sync found
  // cold rows Redis did not know of): points that lived only in Redis are missing.
  bool hot_lost = false;
  // Members per tier of the board's tiers, as frozen in the history rows (empty without
  // tiers): cold::History::Counts::tiers.
  std::vector<cold::TierCount> tiers{};
};

// How far the archive of one period has come, for people watching a long one.
struct ArchiveProgress {
  const BoardPeriod* target = nullptr;
  std::int64_t hot_copied = 0;  // hot members copied into the archive's transaction so far
  std::int64_t hot_total = 0;   // the period's hot members (as frozen)
  // Its cold rows: an upper bound of what they add, as cold rows of members that are hot
  // again are skipped.
  std::int64_t cold_total = 0;
  bool merging = false;  // the hot members are in: PostgreSQL merges them with the cold rows
  bool done = false;     // the last call for this period (also after a failure)
};
// Called on the archiving thread at the start, after every chunk of hot members, once when
// the merge starts, and once at the end (done).
using ArchiveProgressFn = std::function<void(const ArchiveProgress&)>;

// Archives the period of `job` (job.chunk: hot members read from Redis at a time).
ArchiveStats archive_period(const PeriodJob& job, cold::History& archive,
                            const ArchiveProgressFn& progress = {});

}  // namespace bk::lifecycle
