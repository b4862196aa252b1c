// The archive of one period. A kill before the commit leaves nothing (the next tick starts
// over: freezing is idempotent); after it, the next tick finds the period archived and
// only frees the keys. Concurrent ticks: the claim makes all but one skip.
#include "lifecycle/archive.h"

#include <algorithm>
#include <future>
#include <vector>

namespace bk::lifecycle {

ArchiveStats archive_period(const PeriodJob& job, cold::Archive& archive,
                            const ArchiveProgressFn& progress) {
  redis::Connection& redis = job.redis;
  hot::HotBoard& hot = job.hot;
  cold::ColdStore& cold = job.cold;
  const BoardPeriod& target = job.target;
  const std::int64_t chunk = job.chunk;
  const hot::BoardKeys board_keys(hot.key_prefix(), target.board);
  const hot::PeriodKeys keys(board_keys, target.spec->name, target.period.id);
  const std::string registry_member = hot::registry_member(target.spec->name, target.period.id);
  const cold::PeriodInfo info{
      {target.board, target.spec->name, target.period.id}, target.period.start, target.period.end};
  ArchiveStats stats;
  const cold::PeriodStatus status = archive.status(info.key);
  if (job.dry_run) {
    stats.outcome = status == cold::PeriodStatus::open ? ArchiveStats::Outcome::would_archive
                                                       : ArchiveStats::Outcome::already;
    stats.hot = hot.size(redis, keys.live);
    stats.cold = cold.reader().count(info.key);
    return stats;
  }
  if (status != cold::PeriodStatus::open) {
    // Committed by an earlier tick that did not get to free the keys.
    hot.release(redis, keys, board_keys.registry(), registry_member);
    stats.outcome = ArchiveStats::Outcome::already;
    return stats;
  }
  const Instant expire_at = target.period.end + target.config->retention_for(*target.spec);
  const hot::HotBoard::Frozen frozen = hot.freeze(redis, keys, expire_at);
  stats.hot_lost = frozen.recovered;
  if (!frozen.exists) {
    // The hot key expired, was deleted, or Redis lost its data. What the cold tier holds is
    // archived all the same (PostgreSQL is the safety net), flagged; with no cold rows
    // either, the period is recorded lost, never silently dropped. (Unless a concurrent
    // tick archived the period and freed its keys since we looked: then the lost record
    // does not take, as it never overrides an archived period.)
    const std::int64_t cold_rows = cold.reader().count(info.key);
    if (cold_rows == 0) {
      const bool lost = archive.record_lost(
          info, "the hot key was gone at archive time (expired or deleted), no cold rows");
      hot.release(redis, keys, board_keys.registry(), registry_member);
      stats.outcome = lost ? ArchiveStats::Outcome::lost : ArchiveStats::Outcome::already;
      return stats;
    }
    stats.hot_lost = true;
  }
  archive.ensure_partitions(target.period.start, target.period.start + Millis{1});
  cold::Archive::Claim claim = cold::Archive::Claim::busy;
  // Rolls back unless committed, however this ends.
  const std::unique_ptr<cold::Archive::Transaction> txn = archive.begin(info, claim);
  switch (claim) {
    case cold::Archive::Claim::busy:
      stats.outcome = ArchiveStats::Outcome::busy;
      return stats;
    case cold::Archive::Claim::done:
      hot.release(redis, keys, board_keys.registry(), registry_member);
      stats.outcome = ArchiveStats::Outcome::already;
      return stats;
    case cold::Archive::Claim::claimed:
      break;
  }
  {
    ArchiveProgress shown;
    shown.target = &target;
    shown.hot_total = frozen.size;
    // Ends the progress display however the archive ends.
    struct Done {
      const ArchiveProgressFn& fn;
      ArchiveProgress& p;
      ~Done() {
        if (!fn) return;
        p.done = true;
        try {
          fn(p);
        } catch (...) {
          // A display that failed must not change the archive's outcome.
        }
      }
    } done{progress, shown};
    if (progress) {
      shown.cold_total = cold.reader().count(info.key);  // one more query, only then
      progress(shown);                                   // the start
    }
    // Only the hot members travel: they are copied into the archive's transaction, where one
    // statement merges them with the cold rows. Reading (Redis) and writing (the COPY)
    // overlap: the next chunk is read on a worker thread while this one is written.
    const ScoreCodec codec(target.config->layout_for(*target.spec));
    const std::int64_t n = std::max<std::int64_t>(chunk, 1);
    std::int64_t offset = 0;
    auto read_chunk = [&, n](std::int64_t from) { return hot.slice(redis, keys.live, from, n); };
    std::future<std::vector<ScoredMember>> next = std::async(std::launch::async, read_chunk, 0);
    for (;;) {
      const std::vector<ScoredMember> members = next.get();
      offset += static_cast<std::int64_t>(members.size());
      const bool last = static_cast<std::int64_t>(members.size()) < n;
      if (!last) next = std::async(std::launch::async, read_chunk, offset);
      for (const ScoredMember& m : members) {
        const Decoded d = codec.decode(m.encoded, target.period.start);
        txn->write_hot({m.member, m.encoded, d.points, d.achieved_at});
      }
      if (progress && !members.empty()) {
        shown.hot_copied = offset;
        progress(shown);
      }
      if (last) break;
    }
    if (offset != frozen.size) {
      // The frozen key changed under the archive (expired mid-way?): commit nothing.
      throw Error("period " + registry_member + " of board '" + target.board + "' had " +
                  std::to_string(frozen.size) + " hot members when frozen but " +
                  std::to_string(offset) + " were read; not archived, will retry");
    }
    if (progress) {
      shown.merging = true;
      progress(shown);
    }
    const cold::Archive::Counts counts = txn->commit(stats.hot_lost);
    stats.hot = counts.hot;
    stats.cold = counts.cold;
  }
  hot.release(redis, keys, board_keys.registry(), registry_member);
  return stats;
}

}  // namespace bk::lifecycle
