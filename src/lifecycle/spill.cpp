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

namespace bk::lifecycle {
namespace {

struct Chunk {
  std::int64_t start = 0;  // position of its first member in the hot key, as taken
  std::shared_ptr<const hot::HotBoard::SpillTake> taken;  // shared with the worker
  std::future<void> committed;
};

std::vector<bool> known_absent(const hot::HotBoard::SpillTake& taken) {
  std::vector<bool> out;
  out.reserve(taken.maybe_cold.size());
  for (const bool maybe : taken.maybe_cold) out.push_back(!maybe);
  return out;
}

// Decodes and upserts the chunk's rows (runs on the worker thread: touches nothing but the
// cold store, which this thread does not use meanwhile).
void commit_rows(cold::ColdStore& cold, const cold::PeriodKey& key, const ScoreCodec& codec,
                 Instant period_start, const hot::HotBoard::SpillTake& taken) {
  std::vector<cold::ColdRow> rows;
  rows.reserve(taken.members.size());
  for (const ScoredMember& m : taken.members) {
    const Decoded d = codec.decode(m.encoded, period_start);
    rows.push_back({m.member, m.encoded, d.points, d.achieved_at});
  }
  cold.upsert(key, rows, known_absent(taken));
}

}  // namespace

SpillStats spill_beyond(const PeriodJob& job, std::int64_t keep) {
  redis::Connection& redis = job.redis;
  hot::HotBoard& hot = job.hot;
  cold::ColdStore& cold = job.cold;
  const BoardPeriod& target = job.target;
  const std::int64_t chunk = job.chunk;
  // The caller holds the period lock (cold::Archive::try_lock_period): no other spill or
  // archive of this period runs meanwhile.
  const hot::BoardKeys board_keys(hot.key_prefix(), target.board);
  const hot::PeriodKeys keys(board_keys, target.spec->name, target.period.id);
  SpillStats stats;
  stats.hot_before = hot.size(redis, keys.live);
  if (stats.hot_before <= keep) return stats;
  if (job.dry_run) {
    stats.spilled = stats.hot_before - keep;
    return stats;
  }
  const Instant expire_at = target.period.end + target.config->retention_for(*target.spec);
  if (hot.mark_spilled(redis, keys, expire_at) < 0) return SpillStats{};  // closed
  const ScoreCodec codec(target.config->layout_for(*target.spec));
  const cold::PeriodKey cold_key{target.board, target.spec->name, target.period.id};

  // Removes a committed chunk from Redis. Returns how many members left the hot key.
  auto remove_chunk = [&](const Chunk& c) {
    const auto& members = c.taken->members;
    const std::int64_t removed =
        std::max<std::int64_t>(0, hot.remove_spilled(redis, keys, c.start, members));
    const auto n = static_cast<std::int64_t>(members.size());
    stats.spilled += removed;
    stats.kept_in_place += n - removed;
    spdlog::debug("spill {} {} {}: {} moved, {} stay hot", target.board, target.spec->name,
                  target.period.id, removed, n - removed);
    return removed;
  };

  const Instant period_start = target.period.start;
  auto start_commit = [&](Chunk& c) {
    c.committed =
        std::async(std::launch::async, [&cold, &cold_key, &codec, period_start, taken = c.taken] {
          commit_rows(cold, cold_key, codec, period_start, *taken);
        });
  };
  std::optional<Chunk> pending;  // committing on the worker; still in Redis
  // Each pass removes members or counts those left in place, so it ends; the cap only
  // guards against writers adding members as fast as we move them.
  const std::int64_t max_passes = stats.hot_before / chunk + 100;
  for (std::int64_t pass = 0; pass < max_passes; ++pass) {
    Chunk next;
    next.start = pending
                     ? pending->start + static_cast<std::int64_t>(pending->taken->members.size())
                     : keep + stats.kept_in_place;
    next.taken = std::make_shared<const hot::HotBoard::SpillTake>(
        hot.take_for_spill(redis, keys, next.start, chunk, expire_at));
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
  return stats;
}

}  // namespace bk::lifecycle
