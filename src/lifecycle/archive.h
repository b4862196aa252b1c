// Archive (protocol 3): a period past end + grace is frozen in Redis, written to history
// in one PostgreSQL transaction (hot and cold members merged, ranks computed, streamed in
// chunks so memory stays flat), and only then are its hot keys freed.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "cold/archive.h"
#include "cold/cold_store.h"
#include "hot/hot_board.h"
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
};

// How far the archive of one period has come, for people watching a long one.
struct ArchiveProgress {
  const SpillTarget* target = nullptr;
  std::int64_t written = 0;  // history rows streamed so far
  // Hot members plus cold rows: an upper bound, as cold rows of members that are hot again
  // are skipped.
  std::int64_t total = 0;
  bool done = false;  // the last call for this period (also after a failure)
};
// Called on the archiving thread at the start (written 0), every 512 rows, and once at
// the end (done).
using ArchiveProgressFn = std::function<void(const ArchiveProgress&)>;

ArchiveStats archive_period(redis::Connection& redis, hot::HotBoard& hot, cold::ColdStore& cold,
                            cold::Archive& archive, const SpillTarget& target, std::int64_t chunk,
                            bool dry_run, const ArchiveProgressFn& progress = {});

}  // namespace bk::lifecycle
