// Moderation and erasure (the library's side of `remove`, `ban`, `unban`, `bans`, `erase`,
// `reset` and `drop`): take a member off a board, keep them off, forget them everywhere;
// empty a period, retire a board. Every operation is idempotent and safe against the update
// path, spills, rehydrations and archives running at the same moment (the protocols and
// their arguments: docs/architecture.md, "Moderation").
//
// The work is split by operation (one file each): moderation_remove.cpp (remove, ban,
// unban, bans), moderation_erase.cpp (erase), moderation_reset.cpp (reset, drop); each reaches
// Redis and PostgreSQL through the interfaces of service/moderation_tiers.h, so its decisions
// are tested without servers (tests/service/moderation_test.cpp).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "config/config.h"
#include "core/time.h"
#include "redis/connection.h"
#include "service/moderation_tiers.h"

namespace bk::service {

// What an operation removed from one board period (or would remove, with a dry run).
struct PeriodRemoval {
  std::string board;
  std::string period;        // the period's name: "daily", a cron period's name
  std::string period_id;     // "2026-11-22"
  bool archived = false;     // the period is in history: `history` counts its history rows
  std::int64_t hot = 0;      // entries removed from the period's Redis sorted set
  std::int64_t cold = 0;     // cold rows removed (cold_members)
  std::int64_t history = 0;  // archived history rows removed
  std::int64_t total() const { return hot + cold + history; }
};

// remove(): one entry per period looked at (every live period of the board, or the one
// named), removed or not.
struct Removal {
  std::vector<PeriodRemoval> periods;
  // The member was on at least one of them (else `remove` exits 1: "not on the board").
  bool found() const;
};

// One ban, as PostgreSQL keeps it (the bans table).
struct BanRecord {
  std::string board;
  std::string member;
  std::string reason;  // may be empty
  Instant banned_at;
};

struct BanResult {
  bool newly_banned = false;  // false: the member was banned already (the reason is updated)
  Removal removed;            // what the ban took off the board's live periods
};

struct EraseOptions {
  std::string boards = "*";  // a glob over board names (as the config's board entries)
  bool dry_run = false;      // count what would go; remove nothing, record no audit row
};

struct BoardErasure {
  std::string board;
  std::vector<PeriodRemoval> periods;  // live and archived periods that held the member
  std::int64_t profiles = 0;           // profile fields removed (Redis hashes, PostgreSQL rows)
  std::int64_t bans = 0;               // ban rows removed
  std::int64_t held = 0;               // hold entries (:held) removed
  std::int64_t total() const;
};

struct Erasure {
  std::string member_hash;  // the audit row's keyed hash of the member id (hex)
  bool dry_run = false;
  std::vector<BoardErasure> boards;   // boards that held something of the member
  std::int64_t dead_letters = 0;      // dead-letter entries naming the member (XDEL)
  std::int64_t earlier_requests = 0;  // audit rows of the same member before this one
  std::int64_t total() const;         // 0: nothing was left to remove ("nothing more")
};

// reset(): what emptying one live period removed.
using Reset = PeriodRemoval;

struct Drop {
  std::string board;
  bool history = false;                // archived history was dropped too
  std::vector<PeriodRemoval> periods;  // live (and, with history, archived) periods
  std::int64_t profiles = 0;           // profile entries removed (Redis and PostgreSQL)
  std::int64_t keys = 0;               // other Redis keys of the board deleted
  std::int64_t total() const;
};

class Moderation {
 public:
  // `cold` gives the PostgreSQL store (connected on first use); null when the deployment has
  // no PostgreSQL: then the operations that need it (bans, erase, anything touching cold rows
  // or history) throw UsageError saying so.
  Moderation(const Config& config, redis::Connection& redis, Clock clock,
             std::function<cold::ColdStore&()> cold);
  // Over tiers of the caller's (tests/service: in memory; service/moderation_tiers.h). `cold`
  // null: no PostgreSQL.
  Moderation(const Config& config, Clock clock, ModerationHot& hot, ModerationCold* cold);
  ~Moderation();

  // Removes `member` from the board's live periods (every one, or `period` / `period_id`:
  // the current one of that period without an id): hot entry, cold row, and history rows of
  // a period that an archive racing the removal archived with it. Reads stop listing it,
  // the next archive does not hold it, a later event starts it from zero. Idempotent.
  // Throws UsageError (exit 2) for an unknown board or period, bk::UnavailableError (exit 3)
  // when a tier it needs is down (nothing is half-removed: running it again finishes it).
  Removal remove(const std::string& board, const std::string& member,
                 const std::optional<std::string>& period = {},
                 const std::optional<std::string>& period_id = {});
  // Bans `member` from `board` (kept in PostgreSQL, cached in Redis for the update path):
  // removes it as remove() does, and every event of it applied afterwards is refused
  // (Refusal::banned).
  BanResult ban(const std::string& board, const std::string& member, const std::string& reason);
  // Lifts a ban; true when the member was banned.
  bool unban(const std::string& board, const std::string& member);
  // The board's bans, by member.
  std::vector<BanRecord> bans(const std::string& board);

  // The right to erasure: removes `member` from every matching board (see Erasure) and
  // leaves an audit row (when, which boards, how many rows; the member only as a keyed
  // hash). Running it again removes nothing more and says so (total() == 0). A killed erase
  // is finished by running it again.
  Erasure erase(const std::string& member, const EraseOptions& options = {});

  // Empties one live period (hot and cold); the next archive of it holds only what came
  // after. Idempotent.
  Reset reset(const std::string& board, const std::string& period,
              const std::optional<std::string>& period_id = {});
  // Removes a board's live data and registry entries (its archived history too with
  // `history`). Idempotent.
  Drop drop(const std::string& board, bool history);

  // remove() and ban() wait for a running spill or archive of a period (it holds the
  // period's lock) at most `wait` from now on, instead of however long it takes: a caller
  // that must answer in time (serve) gets BusyError (exit 3) after it. By then the member is
  // off every read already and left out of archives; a retry, or the next tick's spill,
  // deletes its cold rows.
  void wait_for_locks_at_most(std::chrono::milliseconds wait) { lock_wait_ = wait; }

 private:
  const Config& config_;
  Clock clock_;
  std::function<cold::ColdStore&()> cold_;
  std::optional<std::chrono::milliseconds> lock_wait_;  // none: however long it takes
  // Every operation reaches the tiers through these (service/moderation_tiers.h).
  std::unique_ptr<ModerationHot> own_hot_;
  std::unique_ptr<ModerationCold> own_cold_;
  const cold::ColdStore* own_cold_store_ = nullptr;  // what own_cold_ was made over
  ModerationHot* hot_;
  ModerationCold* given_cold_ = nullptr;

  ModerationCold* cold_side();                  // null: no PostgreSQL
  ModerationCold& cold_side(const char* what);  // UsageError naming `what` without one

  // slice rm (moderation_remove.cpp): remove() and ban() in one, R1 with the ban flag.
  Removal remove_member(const std::string& board, const std::string& member,
                        const std::optional<std::string>& period,
                        const std::optional<std::string>& period_id, bool ban);
};

}  // namespace bk::service
