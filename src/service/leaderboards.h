// The library API that C++ services link: apply score updates (batched, atomic per board)
// and read boards (top, rank, around, periods). The CLI and the stream consumer use it too.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cold/cold_store.h"
#include "config/config.h"
#include "core/error.h"
#include "core/period.h"
#include "core/rank.h"
#include "core/time.h"
#include "hot/board_scripts.h"
#include "redis/connection.h"
#include "service/moderation.h"
#include "service/types.h"

namespace bk::service {

class ColdIndexes;
struct ReplicaReads;

// The safety net after Redis lost data: tells Redis which periods of `board` have cold rows,
// so that updates consult the cold tier there, rebuilds the board's bans cache, and marks the
// board synced (S1-S3, docs/architecture.md "Moderation": the bans generation is read before
// `read_cold` queries PostgreSQL; a ban or unban meanwhile makes it query again). Periods the
// config does not know are skipped. Returns how many periods Redis had forgotten (now marked
// recovered).
std::int64_t sync_board(const Config& config, redis::Connection& redis, hot::BoardScripts& hot,
                        const std::string& board, const std::function<ColdBoardState()>& read_cold);

class Leaderboards {
  struct Batches;

 public:
  // `cold` may be null for boards that never spill; a spilled period then cannot be
  // updated or read (the cold tier would be needed) and says so.
  Leaderboards(const Config& config, redis::Connection& redis, Clock clock,
               cold::ColdStore* cold = nullptr);
  // The cold store is asked for (and so connected) only when a spilled period needs it.
  Leaderboards(const Config& config, redis::Connection& redis, Clock clock,
               std::function<cold::ColdStore&()> cold);

  // Applies updates in order. Updates of one board go in one script call per chunk; chunks
  // of different boards are pipelined. A refused update does not stop the others.
  // Detail::status: applied results come without their points (faster; what a consumer
  // that only counts needs).
  enum class Detail { points, status };
  std::vector<UpdateResult> apply(const std::vector<Update>& updates,
                                  Detail detail = Detail::points);
  UpdateResult apply(const Update& update);

  // apply() in two steps, for a caller that overlaps its own work with the server's:
  // prepare() validates and plans without a round trip (refusals are decided here, against
  // the clock of that moment); apply(Prepared) writes. `updates` must outlive the Prepared.
  // `while_waiting` runs once, while the first script calls are at the server, or before
  // apply returns when none were sent (see redis::Connection::pipeline); it may prepare the
  // next updates, and must not use this object's Redis connection.
  class Prepared {
   public:
    Prepared();
    Prepared(Prepared&&) noexcept;
    Prepared& operator=(Prepared&&) noexcept;
    ~Prepared();

   private:
    friend class Leaderboards;
    const std::vector<Update>* updates_ = nullptr;
    std::vector<UpdateResult> results_;
    std::unique_ptr<Batches> batches_;
  };
  Prepared prepare(const std::vector<Update>& updates, Detail detail = Detail::points);
  std::vector<UpdateResult> apply(Prepared&& prepared,
                                  const std::function<void()>& while_waiting = {});

  // Holds the members of these updates (those with order tokens), as an update that ends
  // unavailable or failed holds its member: their later updates (other tokens) answer
  // `waiting` until the held one is applied. For a caller that leaves updates pending
  // without sending them (the stream consumer, while their board fails). A board whose held
  // HASH refuses it (a lasting error) is skipped: its updates fail anyway.
  void hold(const std::vector<Update>& updates);

  // Every entry of `stream` below this id's milliseconds is acknowledged in the consumer
  // group: their in-flight markers may go (see Update::order_token).
  // Forgotten when the connection reconnects (a server restarted from an older file may
  // have entries below it pending again) until it is said again.
  void acknowledged_below(const std::string& stream, std::int64_t ms) {
    acknowledged_below_[stream] = {ms, redis_.generation()};
  }

  // Resolves "<board> <period> [--period-id]" to a period; the current one without an id.
  // Throws UsageError naming what is unknown.
  PeriodRef resolve(const std::string& board, const std::string& period,
                    const std::optional<std::string>& period_id) const;

  // Every read returns each member's profile (Standing::name / metadata) when it has one.
  // Reads are bounded: `count` in [0, kMaxReadRows], `offset` in [0, kMaxReadOffset], `k` in
  // [0, kMaxReadRows / 2]; other values throw UsageError (never an overflow, or a board
  // loaded whole). An offset past the last member reads nothing.
  std::vector<Standing> top(const PeriodRef& ref, std::int64_t offset, std::int64_t count);
  std::optional<Standing> rank(const PeriodRef& ref, const std::string& member);
  // rank() of many members at once (result i for members[i]): a few round trips whatever
  // their number (at most kMaxReadRows), hot or cold.
  std::vector<std::optional<Standing>> ranks(const PeriodRef& ref,
                                             const std::vector<std::string>& members);
  std::vector<Standing> around(const PeriodRef& ref, const std::string& member, std::int64_t k);
  std::vector<PeriodStatus> periods(const std::string& board);

  // Paging by listing key (the HTTP API's cursors). count: the period's members, hot and
  // cold. listing_score: where a standing read earlier sits in the listing order (its
  // encoded score), UsageError when it cannot come from this period.
  std::int64_t count(const PeriodRef& ref);
  // count() and top(ref, 0, count) together: one Redis round trip when the period has not
  // spilled or its cold tier's first rows are known from an earlier read. The rows of the
  // hot part of a spilled period (see hot::ReadState::cold_bound) need no PostgreSQL; then
  // `total` is nullopt when PostgreSQL cannot be reached to count the cold members.
  using Counted = service::Counted;
  Counted first_page(const PeriodRef& ref, std::int64_t count);
  std::int64_t listing_score(const PeriodRef& ref, const Standing& s) const;
  // The first `count` members listed strictly after `mark` (a standing read earlier from this
  // period; it need not be on the board any more), located where that row sits when read:
  // the next page of a cursor, which skips nobody who did not move, whatever moves meanwhile.
  // `position`: the members listed at or before the mark (the first row's 0-based place).
  // One script call for a period that has not spilled, or within its hot part.
  using Following = service::Following;
  Following listed_after(const PeriodRef& ref, const Standing& mark, std::int64_t count);

  // Statistics of this object's life, for logs and metrics.
  using Counters = service::Counters;
  const Counters& counters() const { return counters_; }

  const Config& config() const { return config_; }
  Instant now() const { return clock_.now(); }

  // Cold ranks from memory (service/cold_index.h): reads of a spilled period use `indexes`
  // when it holds the period's current spill generation, and ask for its load when not (they
  // go to PostgreSQL meanwhile). load_cold_ranks() does one load (serve's loader thread): true
  // when `indexes` holds the period's current generation after it. Without a share, every
  // cold read asks PostgreSQL.
  void share_cold_ranks(std::shared_ptr<ColdIndexes> indexes);
  bool load_cold_ranks(const PeriodRef& ref);
  // Reads of cold rows and profiles go to `replica` (a streaming replica of the cold store)
  // when it has replayed what the primary had written when the read began, else to the
  // primary (service/replica.h); `reads` counts where they went.
  void read_from_replica(std::function<cold::ColdStore&()> replica,
                         std::shared_ptr<ReplicaReads> reads);

  // Moderation and erasure on the same connections: remove, ban, unban, bans, erase,
  // reset, drop (service/moderation.h).
  Moderation& moderation() { return *moderation_; }

  ~Leaderboards();  // in leaderboards.cpp, where its units' types are complete

 private:
  // The units it owns (service/leaderboards_units.h), made by the constructors over this
  // object's members (so a Leaderboards is never moved or copied): the update path
  // (service/updates.h) over its hot and cold tiers, and the reads and profiles
  // (service/live_reads.h, service/profiles.h) over theirs (service/tiers.h), which the
  // methods above forward to.
  struct UpdatePath;
  struct ReadUnits;
  Leaderboards(Leaderboards&&) = delete;
  Leaderboards(const Leaderboards&) = delete;
  Leaderboards& operator=(const Leaderboards&) = delete;
  Leaderboards(const Config& config, redis::Connection& redis, Clock clock, cold::ColdStore* cold,
               std::function<cold::ColdStore&()> provider);
  void make_update_path();

  const Config& config_;
  redis::Connection& redis_;
  Clock clock_;
  cold::ColdStore* cold_;
  std::function<cold::ColdStore&()> cold_provider_;
  Counters counters_;
  hot::BoardScripts hot_;
  struct Acknowledged {
    std::int64_t ms = 0;
    std::uint64_t generation = 0;  // of redis_ when it was said
  };
  std::unordered_map<std::string, Acknowledged> acknowledged_below_;  // by stream
  // Score layouts per period, computed once (a cron period's span needs a scan of firings).
  std::unordered_map<const PeriodSpec*, ScoreLayout> layouts_;

  std::unique_ptr<UpdatePath> updates_;
  std::unique_ptr<Moderation> moderation_;

  bool has_cold() const { return cold_ != nullptr || cold_provider_ != nullptr; }
  cold::ColdStore& cold_store();
  void write_profiles(const std::vector<Update>& updates, std::vector<UpdateResult>& results);

  std::unique_ptr<ReadUnits> reads_;
};

}  // namespace bk::service
