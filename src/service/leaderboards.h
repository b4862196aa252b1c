// The library API that C++ services link, and what the CLI, the stream consumer and serve
// stand on: one object per connection that owns the service's units, each the one entry point
// of its concern: updates here (batched, atomic per board), reads() (service/reads.h: every
// read of a period, open or archived), moderation() (service/moderation.h). Profiles are
// written with the updates and attached to every read.
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
#include "service/reads.h"
#include "service/types.h"

namespace bk::service {

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
  // Detail (service/types.h): Detail::status, applied results come without their points
  // (faster; what a consumer that only counts needs).
  using Detail = service::Detail;
  std::vector<UpdateResult> apply(const std::vector<Update>& updates,
                                  Detail detail = Detail::points);
  UpdateResult apply(const Update& update);
  // apply() of one update, with the member's standing in each period it touched right before
  // and right after it, both as of the update's own atomic script call, which reads them with
  // it: one Redis round trip in all while the member is within the hot part of each period
  // (or the period never spilled); beyond it, the cold tier's counts as of the spill
  // generation the call saw (memory, else PostgreSQL). Where that moved on meanwhile, or a
  // duplicate's member is not hot, the standing after is read as ranks() reads it, without
  // the one before. A standing a backend cannot give right then is left out, and the update
  // is applied all the same. No profiles. What the HTTP write and `add --json` answer.
  Written write(const Update& update);
  // apply() of many updates (in order; refusals per update), each answered as write() does
  // with `standings`, but after the whole batch: the standing of each applied or duplicate
  // update's member in each period its event touched, read after the last update (one read
  // per period touched, whatever the number of members), without `before`. Without
  // `standings`: the results alone (Written::periods empty).
  // With `standings`, a batch whose events fall in more than kMaxStandingPeriods periods is a
  // UsageError before anything is applied (each is one read).
  static constexpr std::size_t kMaxStandingPeriods = 64;
  std::vector<Written> write_batch(const std::vector<Update>& updates, bool standings);
  // Claims a batch's idempotency key for the fingerprint of the whole batch on each valid,
  // configured board of `boards` (hot/idempotency.h; the key lives apart from event ids):
  // false when the key was claimed for another batch on any of them (then nothing should be
  // applied). Throws for a board whose keys refuse the claim.
  bool claim_batch(const std::string& key, const std::string& fingerprint,
                   const std::vector<std::string>& boards);

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

  // The reads (service/reads.h), on this object's connections: top, member, ranks, around,
  // count, cursors' pages, periods, archived periods (after Reads::read_history_from).
  Reads& reads();

  // Statistics of this object's life, for logs and metrics.
  using Counters = service::Counters;
  const Counters& counters() const { return counters_; }

  const Config& config() const { return config_; }
  Instant now() const { return clock_.now(); }

  // Moderation and erasure on the same connections: remove, ban, unban, bans, erase,
  // reset, drop (service/moderation.h).
  Moderation& moderation() { return *moderation_; }

  ~Leaderboards();  // in leaderboards.cpp, where its units' types are complete

 private:
  // The units it owns (service/leaderboards_units.h), made by the constructors over this
  // object's members (so a Leaderboards is never moved or copied): the update path
  // (service/updates.h) over its hot and cold tiers, and the reads and profiles
  // (service/reads.h, service/live_reads.h, service/profiles.h) over theirs
  // (service/tiers.h).
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
  // apply() of updates some of which carry a fingerprint: their keys are claimed first
  // (service/keyed_updates.cpp).
  std::vector<UpdateResult> apply_keyed(const std::vector<Update>& updates, Detail detail);

  std::unique_ptr<ReadUnits> reads_;
};

}  // namespace bk::service
