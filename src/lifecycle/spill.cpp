// The spill loop. Order matters for crash safety: mark spilled, enter the chunk in the
// stale set, commit the cold rows, then compare-and-remove from Redis. A kill anywhere
// leaves each member hot, or cold, or both with the hot value winning; the next tick
// finishes the job.
#include "lifecycle/spill.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace bk::lifecycle {
namespace {

std::vector<bool> known_absent(const hot::HotBoard::SpillTake& taken) {
  std::vector<bool> out;
  out.reserve(taken.maybe_cold.size());
  for (const bool maybe : taken.maybe_cold) out.push_back(!maybe);
  return out;
}

}  // namespace

SpillStats spill_beyond(redis::Connection& redis, hot::HotBoard& hot, cold::ColdStore& cold,
                        const SpillTarget& target, std::int64_t keep, std::int64_t chunk,
                        bool dry_run) {
  // The caller holds the period lock (cold::Archive::try_lock_period): no other spill or
  // archive of this period runs meanwhile.
  const hot::BoardKeys board_keys(hot.key_prefix(), target.board);
  const hot::PeriodKeys keys(board_keys, target.spec->name, target.period.id);
  SpillStats stats;
  stats.hot_before = hot.size(redis, keys.live);
  if (stats.hot_before <= keep) return stats;
  if (dry_run) {
    stats.spilled = stats.hot_before - keep;
    return stats;
  }
  const Instant expire_at = target.period.end + target.config->retention_for(*target.spec);
  if (hot.mark_spilled(redis, keys, expire_at) < 0) return SpillStats{};  // closed
  const ScoreCodec codec(target.config->layout_for(*target.spec));
  const cold::PeriodKey cold_key{target.board, target.spec->name, target.period.id};
  // Each pass removes members or counts those left in place, so it ends; the cap only
  // guards against writers adding members as fast as we move them.
  const std::int64_t max_passes = stats.hot_before / chunk + 100;
  for (std::int64_t pass = 0; pass < max_passes; ++pass) {
    const std::int64_t start = keep + stats.kept_in_place;
    const hot::HotBoard::SpillTake taken = hot.take_for_spill(redis, keys, start, chunk, expire_at);
    const std::vector<ScoredMember>& members = taken.members;
    if (members.empty()) break;
    std::vector<cold::ColdRow> rows;
    rows.reserve(members.size());
    for (const ScoredMember& m : members) {
      const Decoded d = codec.decode(m.encoded, target.period.start);
      rows.push_back({m.member, m.encoded, d.points, d.achieved_at});
    }
    cold.upsert(cold_key, rows, known_absent(taken));
    const std::int64_t removed =
        std::max<std::int64_t>(0, hot.remove_spilled(redis, keys, start, members));
    stats.spilled += removed;
    stats.kept_in_place += static_cast<std::int64_t>(members.size()) - removed;
    spdlog::debug("spill {} {} {}: {} moved, {} stay hot", target.board, target.spec->name,
                  target.period.id, removed, static_cast<std::int64_t>(members.size()) - removed);
  }
  return stats;
}

}  // namespace bk::lifecycle
