// What moderation needs from the two tiers (the protocol steps of docs/architecture.md,
// "Moderation": R1-R3, B0, U1-U2, E1-E3, T1-T2), named in moderation's terms, as tiers.h names
// what reads need. The adapters (service/moderation_adapters.cpp) bind hot::Moderation,
// hot::Eraser, hot::BoardReset, cold::MemberRows, cold::Bans, cold::ErasureStore and
// cold::BoardReset; tests/service puts in-memory tiers behind them, so the decisions (which
// periods an operation covers, the rounds of R1 and of drop, what each step counts, the order
// of the steps, what a failing step leaves) are tested without servers.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cold/bans.h"
#include "cold/board_reset.h"
#include "cold/cold_store.h"
#include "cold/erasure.h"
#include "cold/member_rows.h"
#include "cold/types.h"
#include "core/time.h"
#include "hot/board_reset.h"
#include "hot/erasure.h"
#include "hot/moderation.h"
#include "hot/registry.h"
#include "redis/connection.h"

namespace bk::service {

// Redis, as moderation uses it.
class ModerationHot {
 public:
  virtual ~ModerationHot() = default;
  // The board's registry of live periods.
  virtual std::vector<hot::LivePeriod> live_periods(const std::string& board) = 0;
  // R1: the member's hot entries and tombstones (and the ban), atomically (member_remove.lua).
  virtual hot::MemberRemoval remove(const hot::RemovalRequest& request) = 0;
  // R3: merged reads of the period in flight read again (its cold rows changed).
  virtual void touch_reads(const std::string& board, const std::string& period,
                           const std::string& period_id) = 0;
  // U2: the member leaves the board's bans cache; true when it was there.
  virtual bool unban(const std::string& board, const std::string& member) = 0;

  // Erase: the boards Redis knows; E3 on the board's keys for its live periods `live`
  // (hot::Eraser::forget); the dead letters of `dead_stream` naming the member.
  virtual std::vector<std::string> known_boards() = 0;
  virtual hot::BoardForgotten forget(const std::string& board,
                                     const std::vector<hot::LivePeriod>& live,
                                     const std::string& member, bool dry_run, bool cold_ban) = 0;
  virtual std::int64_t dead_letters(const std::string& dead_stream, const std::string& member,
                                    const hot::Eraser::LetterBoards& boards, bool dry_run) = 0;

  // Reset and drop (hot::BoardReset): a period's phase, T2, the board's own keys, the board's
  // entry in the list of boards.
  virtual hot::PeriodPhase phase(const std::string& board, const std::string& period,
                                 const std::string& period_id) = 0;
  virtual std::int64_t empty_period(const std::string& board, const std::string& period,
                                    const std::string& period_id) = 0;
  virtual hot::BoardReset::DropKeys drop_board_keys(const std::string& board,
                                                    const std::vector<std::string>& emptied) = 0;
  virtual bool forget_board(const std::string& board) = 0;
};

// A lock held in PostgreSQL while this lives.
class HeldLock {
 public:
  virtual ~HeldLock() = default;
};

// A period's lock held across T1 and T2 of reset and drop (cold::BoardReset): released by
// release(), or, should the operation fail, when it goes.
class PeriodLock : public HeldLock {
 public:
  // T1 (cold::BoardReset::empty_period).
  virtual cold::PeriodEmptied empty(bool refuse_closed) = 0;
  // Throws UnavailableError when the connection broke while it was held.
  virtual void release() = 0;
};

// PostgreSQL, as moderation uses it. Each call may throw UnavailableError.
class ModerationCold {
 public:
  virtual ~ModerationCold() = default;
  // The board's periods that have cold rows (Redis may have forgotten them).
  virtual std::vector<cold::PeriodKey> periods_with_rows(const std::string& board) = 0;
  // R2: the member's cold rows in `periods` (and history rows of one archived meanwhile),
  // under each period's lock, waited for at most `lock_wait` (BusyError after it).
  virtual std::vector<cold::MemberRowsRemoved> remove_rows(
      const std::string& member, const std::vector<cold::PeriodKey>& periods,
      std::optional<std::chrono::milliseconds> lock_wait) = 0;
  // B0: true when the member was not banned yet (else the reason is updated).
  virtual bool ban(const std::string& board, const std::string& member, const std::string& reason,
                   Instant at) = 0;
  // U1: true when the member was banned.
  virtual bool unban(const std::string& board, const std::string& member) = 0;
  virtual std::vector<cold::BanRow> bans(const std::string& board) = 0;

  // Erase (cold::ErasureStore): the deployment's erasure key (made from `candidate` by the
  // first one that needs it), the boards with rows, E2, the audit rows.
  virtual std::string erasure_key(const std::string& candidate) = 0;
  virtual std::vector<std::string> boards_with_rows() = 0;
  virtual cold::ErasedBoard erase(const std::string& board, const std::string& member,
                                  bool dry_run) = 0;
  virtual std::int64_t begin_erasure(const std::string& member_hash, Instant now) = 0;
  virtual std::int64_t earlier_erasures(const std::string& member_hash, std::int64_t id) = 0;
  virtual void record_erasure(std::int64_t id, const std::string& board, std::int64_t rows) = 0;
  virtual void finish_erasure(std::int64_t id, std::int64_t dead_letters, Instant now) = 0;

  // The board's profile lock (cold::ProfileLock), held while the result lives.
  virtual std::unique_ptr<HeldLock> profile_lock(const std::string& board) = 0;
  // Reset and drop: waits for the period's lock and holds it (cold::BoardReset::lock).
  virtual std::unique_ptr<PeriodLock> lock_period(const cold::PeriodKey& period) = 0;
  virtual cold::BoardDropped drop_board(const std::string& board, bool history) = 0;
};

// The adapters over the real tiers (moderation_adapters.cpp): `conn` and `store` must outlive
// them.
std::unique_ptr<ModerationHot> redis_moderation(redis::Connection& conn, std::string key_prefix);
std::unique_ptr<ModerationCold> postgres_moderation(cold::ColdStore& store);

}  // namespace bk::service
