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

namespace bk::service {

class ColdIndexes;
struct ReplicaReads;

struct Update {
  std::string board;
  std::string member;
  std::int64_t value = 0;
  std::optional<Instant> at;  // the event time; the clock's now when absent
  std::string event_id;       // applied at most once per board within its dedupe_window when set
  // Stream entries: the entry id. A later event of the member waits while an earlier one
  // is held; and the entry is applied once however long it stays pending (an in-flight
  // marker on the board, kept until the entry is known to be acknowledged).
  std::string order_token{};
  std::string stream{};      // the stream the entry came from (with order_token; one apply()
                             // takes the entries of one stream per board)
  bool redelivered = false;  // read again from a pending list: it may have been applied
  // The member's profile on this board (core/profile.h), set when the update is applied or
  // found a duplicate, each field on its own (the latest wins); an invalid one refuses the
  // update.
  std::optional<std::string> name{};
  std::optional<std::string> meta{};  // a JSON object
};

// unavailable: not applied because PostgreSQL (needed to rehydrate the member, or to sync a
// board whose Redis data was lost) could not be reached; the other updates of the batch
// keep their own results. An update with an order token that ends unavailable holds its
// member: the member's later updates (other tokens) are `waiting` until it is applied or
// refused, so one member's stream events are applied in stream order across outages.
enum class UpdateStatus {
  applied,
  duplicate,
  refused,
  unavailable,
  waiting,  // not applied: an earlier event of this member is held (left pending); retry later, in
            // order
  // Not applied: Redis refused the board's update with a lasting error (a key of the board
  // holding another type, a script runtime error on its keys): the board's fault, not the
  // event's, and retrying cannot help until the key is repaired. `reason` names the board,
  // Redis's error and the keys of a wrong type. Like `unavailable`, an update with an order
  // token holds its member, so its later events wait, in order. Other boards' updates of
  // the same apply() keep their own results.
  failed,
};

struct PeriodPoints {
  std::string period;
  std::string period_id;
  std::int64_t points = 0;
};

// Why an update was refused, as a stable short label for counting (metrics); `reason`
// says it for people.
enum class Refusal {
  none,
  invalid_board,     // not a valid board name
  unknown_board,     // no config entry matches the board
  invalid_member,    // not 1 to 512 bytes of UTF-8 without NUL
  invalid_value,     // beyond ±2^53
  too_early,         // event time more than max_clock_skew ahead of now
  no_period,         // no period of the board contains the event time
  closed,            // the period is closed for writes (past end + grace, or frozen)
  out_of_range,      // the points would leave [min_points, max_points]
  expired,           // Redis would expire the period key at once (end + retention is past)
  cold_tier,         // the member's cold row was needed and could not be used
  invalid_profile,   // name or meta not as core/profile.h says
  invalid_event_id,  // more than 512 bytes
  invalid_time,      // an event time outside 1970-01-01 .. 9999-12-31 (UTC)
  banned,            // the member is banned from the board (service/moderation.h)
};
// The last enumerator (for code that walks every reason): keep it the last.
inline constexpr Refusal kLastRefusal = Refusal::banned;
// "closed", "out_of_range", ...: the enumerator's name ("none" for none).
const char* refusal_label(Refusal refusal);

struct UpdateResult {
  UpdateStatus status = UpdateStatus::applied;
  Refusal refusal = Refusal::none;   // refused: why, for counting
  std::string reason;                // refused, unavailable, waiting, failed: why, naming the board
  std::vector<PeriodPoints> points;  // applied: the member's new points in each period
};

// One board period addressed by a read.
struct PeriodRef {
  const BoardConfig* config = nullptr;
  const PeriodSpec* spec = nullptr;
  std::string board;
  Period period;
};

struct Standing {
  std::int64_t rank = 0;
  std::string member;
  std::int64_t points = 0;
  std::optional<Instant> achieved_at;  // absent on tie_break: none boards
  // The member's profile, when it has one (metadata: a compact JSON object).
  std::optional<std::string> name{};
  std::optional<std::string> metadata{};
  // Profile fields the member may have that could not be fetched ("name", "metadata"): they
  // had moved to PostgreSQL, which could not be reached. Empty when the profile is whole.
  std::vector<std::string> unavailable{};
};

struct PeriodStatus {
  std::string period;
  Period current;
  // Members of the current period: hot ones in Redis plus cold ones (spilled, not hot
  // again) in PostgreSQL.
  std::int64_t current_members = 0;
  std::int64_t hot_members = 0;
  std::int64_t cold_members = 0;
  std::int64_t live = 0;  // periods of this kind registered in Redis
  std::int64_t due = 0;   // of those, past end + grace (waiting for archive)
};

// The board entry of the config that covers `board`. Throws UsageError (exit 2) for an
// invalid name or when no entry matches: a configuration matter, not a refused event.
const BoardConfig& board_entry(const Config& config, const std::string& board);

// The period `period` (a kind or a cron period's name) of the board entry `c` of `board`.
// Throws NotFoundError naming the board's periods when it has no such period.
const PeriodSpec& period_spec(const BoardConfig& c, const std::string& board,
                              const std::string& period);

// Resolves "<board> <period> [--period-id]" to a period (the one containing `now` without
// an id) from the config alone. Throws UsageError naming what is unknown.
PeriodRef resolve_period(const Config& config, const std::string& board, const std::string& period,
                         const std::optional<std::string>& period_id, Instant now);

// What PostgreSQL says of a board for its sync: the periods with cold rows
// (cold::ColdStore::periods_with_rows) and the banned members (cold::Bans::members).
struct ColdBoardState {
  std::vector<cold::PeriodKey> with_rows;
  std::vector<std::string> banned;
};

// The safety net after Redis lost data: tells Redis which periods of `board` have cold rows,
// so that updates consult the cold tier there, rebuilds the board's bans cache, and marks the
// board synced (S1-S3, docs/architecture.md "Moderation": the bans generation is read before
// `read_cold` queries PostgreSQL; a ban or unban meanwhile makes it query again). Periods the
// config does not know are skipped. Returns how many periods Redis had forgotten (now marked
// recovered).
std::int64_t sync_board(const Config& config, redis::Connection& redis, hot::BoardScripts& hot,
                        const std::string& board, const std::function<ColdBoardState()>& read_cold);

// The largest page a read returns, and the deepest offset it starts at.
inline constexpr std::int64_t kMaxReadRows = 100'000;
inline constexpr std::int64_t kMaxReadOffset = 1'000'000'000'000;
// A read's `what` (count, offset, k, ...) must lie in [0, max]: else a UsageError naming it.
void check_bound(const PeriodRef& ref, const char* what, std::int64_t value, std::int64_t max);

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
  struct Counted {
    std::optional<std::int64_t> total;
    std::vector<Standing> rows;
  };
  Counted first_page(const PeriodRef& ref, std::int64_t count);
  std::int64_t listing_score(const PeriodRef& ref, const Standing& s) const;
  // The first `count` members listed strictly after `mark` (a standing read earlier from this
  // period; it need not be on the board any more), located where that row sits when read:
  // the next page of a cursor, which skips nobody who did not move, whatever moves meanwhile.
  // `position`: the members listed at or before the mark (the first row's 0-based place).
  // One script call for a period that has not spilled, or within its hot part.
  struct Following {
    std::int64_t position = 0;
    std::vector<Standing> rows;
  };
  Following listed_after(const PeriodRef& ref, const Standing& mark, std::int64_t count);

  // Statistics of this object's life, for logs and metrics.
  struct Counters {
    std::int64_t rehydrated = 0;    // member periods brought back from the cold tier
    std::int64_t cold_lookups = 0;  // cold-tier look-ups made for updates
    std::int64_t retries = 0;       // update or read rounds repeated because a spill ran
    std::int64_t cold_errors = 0;   // update rounds in which the cold tier was unreachable
    std::int64_t synced = 0;        // boards synced with the cold tier (Redis lacked the marker)
    std::int64_t recovered = 0;     // of their periods, those Redis had forgotten had spilled
  };
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

 private:
  // The update path (service/updates.h) over its hot and cold tiers: made by the
  // constructors, over this object's members (so a Leaderboards is never moved).
  struct UpdatePath;
  struct UpdatePathDeleter {
    void operator()(UpdatePath* path) const;
  };
  Leaderboards(Leaderboards&&) = delete;
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

  std::unique_ptr<UpdatePath, UpdatePathDeleter> updates_;
  std::unique_ptr<Moderation> moderation_;

  bool has_cold() const { return cold_ != nullptr || cold_provider_ != nullptr; }
  cold::ColdStore& cold_store();
  void write_profiles(const std::vector<Update>& updates, std::vector<UpdateResult>& results);

  // The reads and profiles (service/live_reads.h, service/profiles.h) over the two tiers
  // (service/tiers.h); the methods above forward to them. Made in leaderboards_reads.cpp,
  // where their types are complete (their headers use this one's types): shared_ptr binds its
  // deleter there. Not copyable: the units refer to this object's members.
  struct ReadUnits;
  std::shared_ptr<ReadUnits> reads_;
  std::shared_ptr<ReadUnits> make_reads();
  Leaderboards(const Leaderboards&) = delete;
  Leaderboards& operator=(const Leaderboards&) = delete;
};

}  // namespace bk::service
