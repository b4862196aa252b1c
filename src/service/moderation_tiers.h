// What remove, ban, unban and bans need from the two tiers (the protocol steps R1-R3, B0,
// U1-U2 of docs/architecture.md, "Moderation"), named in moderation's terms, as tiers.h names
// what reads need. The adapters (service/moderation_adapters.cpp) bind hot::Moderation,
// cold::MemberRows and cold::Bans; tests/service puts in-memory tiers behind them, so the
// decisions (which periods a removal covers, the rounds of R1, what each step counts, the
// order of the steps) are tested without servers.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cold/bans.h"
#include "cold/cold_store.h"
#include "cold/member_rows.h"
#include "cold/types.h"
#include "core/time.h"
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
};

// The adapters over the real tiers (moderation_adapters.cpp): `conn` and `store` must outlive
// them.
std::unique_ptr<ModerationHot> redis_moderation(redis::Connection& conn, std::string key_prefix);
std::unique_ptr<ModerationCold> postgres_moderation(cold::ColdStore& store);

}  // namespace bk::service
