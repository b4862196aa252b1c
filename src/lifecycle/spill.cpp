// The spill loop. Order matters for crash safety: mark spilled, enter the chunk in the
// stale set, commit the cold rows, then compare-and-remove from Redis. A kill anywhere
// leaves each member hot, or cold, or both with the hot value winning; the next tick
// finishes the job.
//
// Redis and PostgreSQL work overlap: while chunk i's rows are written and committed on a
// worker thread, this thread takes chunk i+1 (the members ranked right after it) from
// Redis. Once chunk i has committed, chunk i+1's commit starts, and chunk i is removed from
// Redis meanwhile (each chunk is removed only after its own commit); chunk i+1's positions
// then move up by the members removed (if anything else changed, its removal compares
// member by member). PostgreSQL, the slower side, so never waits for Redis.
#include "lifecycle/spill.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <memory>
#include <optional>

#include "cold/call_deadline.h"
#include "cold/member_rows.h"
#include "hot/moderation.h"

namespace bk::lifecycle {
namespace {

struct Chunk {
  std::int64_t start = 0;  // position of its first member in the hot key, as taken
  std::shared_ptr<const hot::BoardScripts::SpillTake> taken;  // shared with the worker
  std::future<void> committed;
};

std::vector<bool> known_absent(const hot::BoardScripts::SpillTake& taken) {
  std::vector<bool> out;
  out.reserve(taken.maybe_cold.size());
  for (const bool maybe : taken.maybe_cold) out.push_back(!maybe);
  return out;
}

// Decodes and upserts the chunk's rows (runs on the worker thread: touches nothing but the
// cold store, which this thread does not use meanwhile).
void commit_rows(cold::ColdStore& cold, const cold::PeriodKey& key, const ScoreCodec& codec,
                 Instant period_start, const hot::BoardScripts::SpillTake& taken) {
  std::vector<cold::ColdRow> rows;
  rows.reserve(taken.members.size());
  for (const ScoredMember& m : taken.members) {
    const Decoded d = codec.decode(m.encoded, period_start);
    rows.push_back({m.member, m.encoded, d.points, d.achieved_at});
  }
  cold.upsert(key, rows, known_absent(taken));
}

// The chunks of one spill: taken from Redis, committed on the worker, then removed.
class Spiller {
 public:
  Spiller(const PeriodJob& job, const hot::PeriodKeys& keys, Instant expire_at, SpillStats& stats)
      : job_(job),
        keys_(keys),
        expire_at_(expire_at),
        stats_(stats),
        codec_(job.target.config->layout_for(*job.target.spec)),
        cold_key_{job.target.board, job.target.spec->name, job.target.period.id} {}

  // Moves the members ranked past `keep`, one chunk committing while the next is taken.
  void run(std::int64_t keep) {
    std::optional<Chunk> pending;  // committing on the worker; still in Redis
    // Each pass removes members or counts those left in place, so it ends; the cap only
    // guards against writers adding members as fast as we move them.
    const std::int64_t max_passes = stats_.hot_before / job_.chunk + 100;
    for (std::int64_t pass = 0; pass < max_passes; ++pass) {
      Chunk next =
          take(pending ? pending->start + static_cast<std::int64_t>(pending->taken->members.size())
                       : keep + stats_.kept_in_place);
      if (pending) pending->committed.get();  // rethrows the commit's failure
      if (!next.taken->members.empty()) start_commit(next);
      if (pending) {
        // A failure here leaves next's commit running: the future's destructor waits for it
        // (its rows are then cold and still hot, as after a kill; the next spill cleans up).
        next.start -= remove_chunk(*pending);
        pending.reset();
      }
      if (next.taken->members.empty()) break;
      pending = std::move(next);
    }
    if (pending) {
      pending->committed.get();
      remove_chunk(*pending);
    }
  }

 private:
  const PeriodJob& job_;
  const hot::PeriodKeys& keys_;
  const Instant expire_at_;
  SpillStats& stats_;
  const ScoreCodec codec_;
  const cold::PeriodKey cold_key_;

  Chunk take(std::int64_t start) {
    Chunk c;
    c.start = start;
    c.taken = std::make_shared<const hot::BoardScripts::SpillTake>(
        job_.hot.take_for_spill(job_.redis, keys_, c.start, job_.chunk, expire_at_));
    return c;
  }

  void start_commit(Chunk& c) {
    // The commit's thread keeps this one's bound on PostgreSQL calls (tick's CallTimeout).
    c.committed = std::async(std::launch::async, [this, period_start = job_.target.period.start,
                                                  taken = c.taken, each = cold::call_timeout()] {
      const cold::CallTimeout bounded(each);
      commit_rows(job_.cold, cold_key_, codec_, period_start, *taken);
    });
  }

  // Removes a committed chunk from Redis. Returns how many members left the hot key.
  std::int64_t remove_chunk(const Chunk& c) {
    const auto& members = c.taken->members;
    const std::int64_t removed =
        std::max<std::int64_t>(0, job_.hot.remove_spilled(job_.redis, keys_, c.start, members));
    const auto n = static_cast<std::int64_t>(members.size());
    stats_.spilled += removed;
    stats_.kept_in_place += n - removed;
    const BoardPeriod& t = job_.target;
    spdlog::debug("spill {} {} {}: {} moved, {} stay hot", t.board, t.spec->name, t.period.id,
                  removed, n - removed);
    return removed;
  }
};

// Removed members' cold rows (tombstones: in :stale, not hot; see hot/moderation.h) are
// void: deleted first, under the period lock the caller holds, so a remove killed after its
// Redis step is finished here. Then the tombstones go (with a spill generation bump, so a
// writer holding a look-up made before the rows were deleted looks again): :stale keeps only
// members that may be hot and cold at once, and merged reads skip no more than those.
void drop_void_rows(const PeriodJob& job, const hot::PeriodKeys& keys) {
  hot::Moderation moderation(job.hot.key_prefix());
  const std::vector<std::string> tombstones = moderation.tombstones(job.redis, keys);
  if (tombstones.empty()) return;
  const BoardPeriod& t = job.target;
  const std::int64_t n = cold::MemberRows(job.cold.link())
                             .remove_void({t.board, t.spec->name, t.period.id}, tombstones);
  if (n > 0) moderation.touch_reads(job.redis, keys);  // merged reads in flight read again
  const std::int64_t cleared = moderation.clear_tombstones(job.redis, keys, tombstones);
  spdlog::debug("spill {} {} {}: {} cold rows of removed members deleted, {} tombstones cleared",
                t.board, t.spec->name, t.period.id, n, cleared);
}

}  // namespace

SpillStats spill_beyond(const PeriodJob& job, std::int64_t keep) {
  const BoardPeriod& target = job.target;
  // The caller holds the period lock (cold::History::try_lock_period): no other spill or
  // archive of this period runs meanwhile.
  const hot::BoardKeys board_keys(job.hot.key_prefix(), target.board);
  const hot::PeriodKeys keys(board_keys, target.spec->name, target.period.id);
  SpillStats stats;
  if (!job.dry_run) drop_void_rows(job, keys);
  stats.hot_before = job.hot.size(job.redis, keys.live);
  if (stats.hot_before <= keep) return stats;
  if (job.dry_run) {
    stats.spilled = stats.hot_before - keep;
    return stats;
  }
  const Instant expire_at = target.period.end + target.config->retention_for(*target.spec);
  if (job.hot.mark_spilled(job.redis, keys, expire_at) < 0) return SpillStats{};  // closed
  Spiller(job, keys, expire_at, stats).run(keep);
  return stats;
}

}  // namespace bk::lifecycle
