// The service's types, shared by its units and their callers: updates and their results,
// the period a read addresses, standings, and the read bounds. The units (updates.h,
// live_reads.h, profiles.h, moderation.h) include this, not the facade (leaderboards.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cold/types.h"
#include "config/config.h"
#include "core/period.h"
#include "core/time.h"
#include "hot/board_scripts.h"

namespace bk::service {

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
  // With event_id (an idempotency key): a fingerprint of the request that carried the update
  // (api/write.h makes it). The same key with another fingerprint within the board's
  // dedupe_window is refused (key_reused) instead of being answered as a duplicate; a key
  // is bound to its request once the update passed validation (hot/idempotency.h). Checked
  // by Leaderboards::apply(updates) and write(); prepare() ignores it.
  std::string fingerprint{};
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
  invalid_event_id,  // not 1 to 512 bytes of UTF-8 without control characters
  invalid_time,      // an event time outside 1970-01-01 .. 9999-12-31 (UTC)
  banned,            // the member is banned from the board (service/moderation.h)
  key_reused,        // its idempotency key was bound to another request (Update::fingerprint)
};
// The last enumerator (for code that walks every reason): keep it the last.
inline constexpr Refusal kLastRefusal = Refusal::key_reused;
// "closed", "out_of_range", ...: the enumerator's name ("none" for none).
const char* refusal_label(Refusal refusal);

// What an applied update's result carries (Leaderboards::apply): its points; its status
// alone (faster: what a consumer that only counts needs); or, for a call of one update
// (Leaderboards::write), its points and what the update script read of the member's standing
// in each period of its board call (UpdateResult::standings).
enum class Detail { points, status, standings };

// Detail::standings: Redis's part of the member's standing in one period, read with the update
// (service/live_reads.h makes the standings of it).
struct PeriodFacts {
  std::string period;
  std::string period_id;
  hot::HotStanding hot;
};

struct UpdateResult {
  UpdateStatus status = UpdateStatus::applied;
  Refusal refusal = Refusal::none;   // refused: why, for counting
  std::string reason;                // refused, unavailable, waiting, failed: why, naming the board
  std::vector<PeriodPoints> points;  // applied: the member's new points in each period
  // Detail::standings, applied or duplicate: per period of its board call (empty when the
  // call had more than one update).
  std::vector<PeriodFacts> standings{};
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
  // Fields the standing may have that could not be had ("name", "metadata": they had moved to
  // PostgreSQL, which could not be reached; "tier": a percent tier needed the period's member
  // count, which PostgreSQL could not give). Empty when the standing is whole.
  std::vector<std::string> unavailable{};
  // On a board with tiers (BoardConfig::tiers): the name of the first rule the standing meets,
  // nullopt when none does (or "tier" is unavailable). Open periods: by the current standing
  // (service/standing_tiers.h); archived ones: as frozen at archive time. Always nullopt on a
  // board without tiers (its reads carry no "tier").
  std::optional<std::string> tier{};
};

// A member's standing right before and right after an update (Reads::update_standings).
struct BeforeAfter {
  std::optional<Standing> before;
  std::optional<Standing> after;
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

// A board the service knows (Reads::boards): one a config entry names (an entry without glob
// characters) or one Redis holds (it has been written to; <prefix>:boards).
struct BoardListing {
  std::string board;
  const BoardConfig* entry = nullptr;  // the config entry that covers it (the first that
                                       // matches, maybe a glob); null: none does any more
  bool in_redis = false;
};

// A page of boards, by name (byte order).
struct BoardsPage {
  std::vector<BoardListing> boards{};
  std::optional<std::string> next{};  // the last board listed, when more follow
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

// The largest page a read returns, and the deepest offset it starts at.
inline constexpr std::int64_t kMaxReadRows = 100'000;
inline constexpr std::int64_t kMaxReadOffset = 1'000'000'000'000;
// A read's `what` (count, offset, k, ...) must lie in [0, max]: else a UsageError naming it.
void check_bound(const PeriodRef& ref, const char* what, std::int64_t value, std::int64_t max);

// A period's count and first page (Leaderboards::first_page): `total` is nullopt when
// PostgreSQL could not be reached to count the cold members.
struct Counted {
  std::optional<std::int64_t> total;
  std::vector<Standing> rows;
};

// The members listed after a mark (Leaderboards::listed_after); `position`: those listed at
// or before it.
struct Following {
  std::int64_t position = 0;
  std::vector<Standing> rows;
  // The period's members, when the read learned it on the way (a period that never
  // spilled): a page that Redis alone answers needs no count of its own.
  std::optional<std::int64_t> total;
};

// A member's standing in one period an update touched (Leaderboards::write): before the
// update and read right after it.
struct PeriodStanding {
  std::string period;
  std::string period_id;
  std::optional<Standing> before;
  std::optional<Standing> after;
  bool best = false;  // the board keeps each member's best (update: best)
  bool tiered{};      // the board has tiers: `after` carries the member's tier
};

// An update applied with the member's standings (Leaderboards::write): the periods it
// applied to, or for a duplicate those that contain its time; none for other outcomes.
struct Written {
  UpdateResult result;
  std::vector<PeriodStanding> periods;
};

// Statistics of a Leaderboards' life, for logs and metrics.
struct Counters {
  std::int64_t rehydrated = 0;    // member periods brought back from the cold tier
  std::int64_t cold_lookups = 0;  // cold-tier look-ups made for updates
  std::int64_t retries = 0;       // update or read rounds repeated because a spill ran
  std::int64_t cold_errors = 0;   // update rounds in which the cold tier was unreachable
  std::int64_t synced = 0;        // boards synced with the cold tier (Redis lacked the marker)
  std::int64_t recovered = 0;     // of their periods, those Redis had forgotten had spilled
};

}  // namespace bk::service
