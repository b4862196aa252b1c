// The archive of one period. A kill before the commit leaves nothing (the next tick starts
// over: freezing is idempotent); after it, the next tick finds the period archived and
// only frees the keys. Concurrent ticks: the claim makes all but one skip.
#include "lifecycle/archive.h"

#include <algorithm>
#include <future>
#include <optional>
#include <vector>

#include "core/stop_points.h"
#include "hot/moderation.h"
#include "lifecycle/closes.h"
#include "lifecycle/league.h"

namespace bk::lifecycle {
namespace {

// One period's archive: what its steps share.
struct ArchiveRun {
  const PeriodJob& job;
  cold::History& archive;
  const ArchiveProgressFn& progress;
  const BoardPeriod& target = job.target;
  const hot::BoardKeys board_keys{job.hot.key_prefix(), target.board};
  const hot::PeriodKeys keys{board_keys, target.spec->name, target.period.id};
  const std::string registry_member = hot::registry_member(target.spec->name, target.period.id);
  const cold::PeriodInfo info{{target.board, target.spec->name, target.period.id},
                              target.period.start,
                              target.period.end,
                              std::nullopt,
                              0,
                              target.config->tiers,
                              target.config->league};

  // Frees the period's hot keys and its registry entry.
  void release() const { job.hot.release(job.redis, keys, board_keys.registry(), registry_member); }
};

// A dry run: what would be archived, or that it already was.
ArchiveStats dry_run(const ArchiveRun& run, cold::PeriodStatus status) {
  ArchiveStats stats;
  stats.outcome = status == cold::PeriodStatus::open ? ArchiveStats::Outcome::would_archive
                                                     : ArchiveStats::Outcome::already;
  stats.hot = run.job.hot.size(run.job.redis, run.keys.live);
  stats.cold = run.job.cold.reader().count(run.info.key);
  return stats;
}

// The hot key expired, was deleted, or Redis lost its data. What the cold tier holds is
// archived all the same (PostgreSQL is the safety net), flagged; with no cold rows either,
// the period is recorded lost, never silently dropped (the outcome returned). (Unless a
// concurrent tick archived the period and freed its keys since we looked: then the lost
// record does not take, as it never overrides an archived period.)
std::optional<ArchiveStats::Outcome> without_hot_key(const ArchiveRun& run) {
  if (run.job.cold.reader().count(run.info.key) != 0) return std::nullopt;
  const bool lost = run.archive.record_lost(
      run.info, "the hot key was gone at archive time (expired or deleted), no cold rows");
  run.release();
  return lost ? ArchiveStats::Outcome::lost : ArchiveStats::Outcome::already;
}

// Ends the progress display however the archive ends.
struct ProgressDone {
  const ArchiveProgressFn& fn;
  ArchiveProgress& p;
  ~ProgressDone() {
    if (!fn) return;
    p.done = true;
    try {
      fn(p);
    } catch (...) {
      // A display that failed must not change the archive's outcome.
    }
  }
};

// Only the hot members travel: they are copied into the archive's transaction, where one
// statement merges them with the cold rows. Reading (Redis) and writing (the COPY) overlap:
// the next chunk is read on a worker thread while this one is written. How many were read.
std::int64_t copy_hot_members(const ArchiveRun& run, cold::History::Transaction& txn,
                              ArchiveProgress& shown) {
  const PeriodJob& job = run.job;
  const ScoreCodec codec(run.target.config->layout_for(*run.target.spec));
  const std::int64_t n = std::max<std::int64_t>(job.chunk, 1);
  std::int64_t offset = 0;
  auto read_chunk = [&, n](std::int64_t from) {
    return job.hot.slice(job.redis, run.keys.live, from, n);
  };
  std::future<std::vector<ScoredMember>> next = std::async(std::launch::async, read_chunk, 0);
  for (;;) {
    const std::vector<ScoredMember> members = next.get();
    offset += static_cast<std::int64_t>(members.size());
    const bool last = static_cast<std::int64_t>(members.size()) < n;
    if (!last) next = std::async(std::launch::async, read_chunk, offset);
    for (const ScoredMember& m : members) {
      const Decoded d = codec.decode(m.encoded, run.target.period.start);
      txn.write_hot({m.member, m.encoded, d.points, d.achieved_at});
    }
    if (run.progress && !members.empty()) {
      shown.hot_copied = offset;
      run.progress(shown);
    }
    if (last) break;
  }
  return offset;
}

// The claimed archive's transaction filled and committed: its counts in `stats`.
void fill_and_commit(const ArchiveRun& run, cold::History::Transaction& txn,
                     std::int64_t frozen_size, ArchiveStats& stats) {
  ArchiveProgress shown;
  shown.target = &run.target;
  shown.hot_total = frozen_size;
  const ProgressDone done{run.progress, shown};
  if (run.progress) {
    shown.cold_total = run.job.cold.reader().count(run.info.key);  // one more query, only then
    run.progress(shown);                                           // the start
  }
  const std::int64_t read = copy_hot_members(run, txn, shown);
  if (read != frozen_size) {
    // The frozen key changed under the archive (expired mid-way?): commit nothing.
    throw Error("period " + run.registry_member + " of board '" + run.target.board + "' had " +
                std::to_string(frozen_size) + " hot members when frozen but " +
                std::to_string(read) + " were read; not archived, will retry");
  }
  if (run.progress) {
    shown.merging = true;
    run.progress(shown);
  }
  // Removed members (tombstones) are left out: their cold rows are void.
  const std::vector<std::string> removed =
      hot::Moderation(run.job.hot.key_prefix()).tombstones(run.job.redis, run.keys);
  stop_point(StopPoint::archive_before_commit);
  const cold::History::Counts counts =
      txn.commit(stats.hot_lost, removed,
                 ClosesPublisher::stream_for(*run.target.config, run.job.hot.key_prefix()));
  stop_point(StopPoint::notice_written);
  stats.hot = counts.hot;
  stats.cold = counts.cold;
  stats.tiers = counts.tiers;
}

}  // namespace

ArchiveStats archive_period(const PeriodJob& job, cold::History& archive,
                            const ArchiveProgressFn& progress) {
  const ArchiveRun run{job, archive, progress};
  const BoardPeriod& target = job.target;
  ArchiveStats stats;
  const cold::PeriodStatus status = archive.status(run.info.key);
  if (job.dry_run) return dry_run(run, status);
  if (status != cold::PeriodStatus::open) {
    // Committed by an earlier tick that did not get to free the keys.
    run.release();
    stats.outcome = ArchiveStats::Outcome::already;
    return stats;
  }
  const Instant expire_at = target.period.end + target.config->retention_for(*target.spec);
  const hot::BoardScripts::Frozen frozen = job.hot.freeze(job.redis, run.keys, expire_at);
  stats.hot_lost = frozen.recovered;
  if (!frozen.exists) {
    if (const auto outcome = without_hot_key(run)) {
      stats.outcome = *outcome;
      return stats;
    }
    stats.hot_lost = true;
  }
  if (target.config->league && frozen.exists) {
    // Frozen: no seat is taken from here on. The close ranks every seat, so every member
    // waiting is seated and every seat is in PostgreSQL before the archive begins.
    open_cohorts(job);
    checkpoint_seats(job);
  }
  archive.ensure_partitions(target.period.start, target.period.start + Millis{1});
  cold::History::Claim claim = cold::History::Claim::busy;
  // Rolls back unless committed, however this ends.
  const std::unique_ptr<cold::History::Transaction> txn = archive.begin(run.info, claim);
  switch (claim) {
    case cold::History::Claim::busy:
      stats.outcome = ArchiveStats::Outcome::busy;
      return stats;
    case cold::History::Claim::done:
      run.release();
      stats.outcome = ArchiveStats::Outcome::already;
      return stats;
    case cold::History::Claim::claimed:
      break;
  }
  stop_point(StopPoint::archive_begin);
  fill_and_commit(run, *txn, frozen.size, stats);
  run.release();
  stop_point(StopPoint::archive_released);
  return stats;
}

}  // namespace bk::lifecycle
