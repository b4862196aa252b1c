// The archive of one period. A kill before the commit leaves nothing (the next tick starts
// over: freezing is idempotent); after it, the next tick finds the period archived and
// only frees the keys. Concurrent ticks: the claim makes all but one skip.
#include "lifecycle/archive.h"

#include <algorithm>
#include <future>
#include <set>

namespace bk::lifecycle {
namespace {

// The final board in listing order: hot members and the cold rows of members that are not
// hot, merged from two sorted streams, with competition ranks.
class RowStream {
 public:
  RowStream(redis::Connection& redis, hot::HotBoard& hot, cold::ColdReader& reader,
            const hot::PeriodKeys& keys, cold::PeriodKey cold_key,
            std::set<std::string> hot_and_stale, std::int64_t chunk)
      : redis_(redis),
        hot_(hot),
        reader_(reader),
        keys_(keys),
        cold_key_(std::move(cold_key)),
        skip_(std::move(hot_and_stale)),
        chunk_(chunk) {}

  // The next member in listing order, and whether it came from Redis.
  bool next(ScoredMember& out, bool& from_hot) {
    refill_hot();
    refill_cold();
    const bool has_hot = hot_pos_ < hot_buf_.size();
    const bool has_cold = cold_pos_ < cold_buf_.size();
    if (!has_hot && !has_cold) return false;
    from_hot = has_hot && (!has_cold || listed_before(hot_buf_[hot_pos_], cold_buf_[cold_pos_]));
    out = from_hot ? hot_buf_[hot_pos_++] : cold_buf_[cold_pos_++];
    return true;
  }

 private:
  void refill_hot() {
    if (hot_pos_ < hot_buf_.size() || hot_done_) return;
    hot_buf_ = hot_.slice(redis_, keys_.live, hot_offset_, chunk_);
    hot_offset_ += static_cast<std::int64_t>(hot_buf_.size());
    hot_pos_ = 0;
    hot_done_ = static_cast<std::int64_t>(hot_buf_.size()) < chunk_;
  }

  void refill_cold() {
    while (cold_pos_ >= cold_buf_.size() && !cold_done_) {
      const auto rows = cold_started_
                            ? reader_.after(cold_key_, last_.encoded, last_.member, chunk_)
                            : reader_.slice(cold_key_, 0, chunk_);
      cold_started_ = true;
      cold_done_ = static_cast<std::int64_t>(rows.size()) < chunk_;
      cold_buf_.clear();
      cold_pos_ = 0;
      std::vector<std::string> unknown;  // not in the stale set: hot only if Redis rolled back
      for (const auto& r : rows) {
        if (skip_.count(r.member) == 0) unknown.push_back(r.member);
      }
      // A cold row of a member that is hot is stale: the hot value wins. The stale set names
      // them; a Redis rolled back to a snapshot older than a spill may hold others.
      const auto hot_scores = hot_.scores(redis_, keys_.live, unknown);
      std::size_t next = 0;
      for (const auto& r : rows) {
        last_ = {r.member, r.encoded};
        if (skip_.count(r.member) != 0) continue;
        if (!hot_scores.at(next++)) cold_buf_.push_back({r.member, r.encoded});
      }
    }
  }

  redis::Connection& redis_;
  hot::HotBoard& hot_;
  cold::ColdReader& reader_;
  const hot::PeriodKeys& keys_;
  cold::PeriodKey cold_key_;
  std::set<std::string> skip_;
  std::int64_t chunk_;
  std::vector<ScoredMember> hot_buf_, cold_buf_;
  std::size_t hot_pos_ = 0, cold_pos_ = 0;
  std::int64_t hot_offset_ = 0;
  bool hot_done_ = false, cold_done_ = false, cold_started_ = false;
  ScoredMember last_;
};

}  // namespace

ArchiveStats archive_period(redis::Connection& redis, hot::HotBoard& hot, cold::ColdStore& cold,
                            cold::Archive& archive, const SpillTarget& target, std::int64_t chunk,
                            bool dry_run, const ArchiveProgressFn& progress) {
  const hot::BoardKeys board_keys(hot.key_prefix(), target.board);
  const hot::PeriodKeys keys(board_keys, target.spec->name, target.period.id);
  const std::string registry_member = hot::registry_member(target.spec->name, target.period.id);
  const cold::PeriodInfo info{
      {target.board, target.spec->name, target.period.id}, target.period.start, target.period.end};
  ArchiveStats stats;
  const cold::PeriodStatus status = archive.status(info.key);
  if (dry_run) {
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
  switch (archive.begin(info)) {
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
  try {
    const hot::ReadState st = hot.read_state(redis, keys, "");
    cold::ColdReader reader = cold.reader();
    ArchiveProgress shown{&target, 0, 0, false};
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
      shown.total = frozen.size + reader.count(info.key);  // one more query, only then
      progress(shown);                                     // the start
    }
    RowStream rows(redis, hot, reader, keys, info.key,
                   std::set<std::string>(st.hot_and_stale.begin(), st.hot_and_stale.end()), chunk);
    const ScoreCodec codec(target.config->layout_for(*target.spec));
    // Reading (Redis and the cold reader) and writing (the COPY) overlap: the next batch is
    // read on a worker thread while this one is written. At most two batches are in memory.
    struct Item {
      ScoredMember member;
      bool from_hot = false;
    };
    const auto batch_size = static_cast<std::size_t>(std::max<std::int64_t>(chunk, 1));
    auto read_batch = [&rows, batch_size] {
      std::vector<Item> out;
      out.reserve(batch_size);
      Item it;
      while (out.size() < batch_size && rows.next(it.member, it.from_hot)) out.push_back(it);
      return out;
    };
    std::future<std::vector<Item>> next = std::async(std::launch::async, read_batch);
    std::int64_t position = 0, rank = 0, previous = -1;
    for (;;) {
      const std::vector<Item> batch = next.get();
      if (batch.empty()) break;
      next = std::async(std::launch::async, read_batch);
      for (const Item& it : batch) {
        const ScoredMember& m = it.member;
        ++position;
        if (m.encoded != previous) rank = position;
        previous = m.encoded;
        const Decoded d = codec.decode(m.encoded, target.period.start);
        archive.write({rank, position, m.member, d.points, d.achieved_at});
        ++(it.from_hot ? stats.hot : stats.cold);
        if (progress && position % 512 == 0) {
          shown.written = position;
          progress(shown);
        }
      }
    }
    shown.written = position;
    if (stats.hot != frozen.size) {
      // The frozen key changed under the archive (expired mid-way?): commit nothing.
      throw Error("period " + registry_member + " of board '" + target.board + "' had " +
                  std::to_string(frozen.size) + " hot members when frozen but " +
                  std::to_string(stats.hot) + " were read; not archived, will retry");
    }
    archive.commit(stats.hot, stats.cold, stats.hot_lost);
  } catch (...) {
    archive.rollback();
    throw;
  }
  hot.release(redis, keys, board_keys.registry(), registry_member);
  return stats;
}

}  // namespace bk::lifecycle
