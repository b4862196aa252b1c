// reset, drop (service/moderation.h), the protocol of docs/architecture.md, "Moderation": each
// period is emptied under a PostgreSQL session lock on its period lock (the one a spill holds
// and an archive's claim takes), held across T1 (its cold rows and pages deleted, one
// transaction) and T2 (period_reset.lua). Killed between them: running it again finishes it.
// drop then deletes the board's own keys and, in PostgreSQL, its profiles (and, with history,
// its archived periods). Kept: bans, event-id buckets, in-flight markers.
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "core/error.h"
#include "hot/registry.h"
#include "service/leaderboards.h"
#include "service/moderation.h"

namespace bk::service {
namespace {

enum class Emptying { reset, drop };

// Rounds of "the registry gained a period meanwhile" before drop gives up: only producers
// that keep creating periods get there.
constexpr int kDropRounds = 10;

std::string period_text(const std::string& board, const std::string& period,
                        const std::string& id) {
  return "period " + period + ":" + id + " of board '" + board + "'";
}

// Empties periods of one board, one at a time, each under its lock (without PostgreSQL no
// period can have spilled, and no spill or archive of it can run: Redis alone).
struct Emptier {
  const std::string& board;
  ModerationHot& hot;
  ModerationCold* cold;  // null without PostgreSQL

  // Throws RefusedError when reset meets a period that is no longer live.
  void refuse_closed(hot::PeriodPhase phase, const PeriodRemoval& p) const {
    if (phase == hot::PeriodPhase::live) return;
    throw RefusedError(period_text(board, p.period, p.period_id) +
                       (phase == hot::PeriodPhase::frozen ? " is being archived (closed for writes)"
                                                          : " is archived") +
                       ": reset empties live periods only");
  }

  PeriodRemoval empty(const std::string& period, const std::string& id, Emptying how) {
    PeriodRemoval out{board, period, id};
    const bool reset = how == Emptying::reset;
    if (reset) refuse_closed(hot.phase(board, period, id), out);
    std::unique_ptr<PeriodLock> lock;
    if (cold != nullptr) {
      lock = cold->lock_period({board, period, id});
      // An archive may have frozen it while the lock was awaited.
      if (reset) refuse_closed(hot.phase(board, period, id), out);
      const cold::PeriodEmptied t1 = lock->empty(reset);
      if (reset && t1.closed_status) {
        throw RefusedError(period_text(board, period, id) + " is " + *t1.closed_status +
                           " in PostgreSQL: reset empties live periods only");
      }
      out.cold = t1.cold;
    }
    out.hot = hot.empty_period(board, period, id);
    if (lock) lock->release();
    return out;
  }
};

}  // namespace

Reset Moderation::reset(const std::string& board, const std::string& period,
                        const std::optional<std::string>& period_id) {
  const PeriodRef ref = resolve_period(config_, board, period, period_id, clock_.now());
  Emptier emptier{board, *hot_, cold_side()};
  return emptier.empty(ref.spec->name, ref.period.id, Emptying::reset);
}

Drop Moderation::drop(const std::string& board, bool history) {
  board_entry(config_, board);  // UsageError for a board no entry covers
  Emptier emptier{board, *hot_, history ? &cold_side("drop --history") : cold_side()};
  Drop out{board, history, {}, 0, 0};
  // The live periods: the registry's, and those PostgreSQL has cold rows of (Redis may have
  // forgotten them); each once.
  std::set<std::pair<std::string, std::string>> periods;
  for (const hot::LivePeriod& p : hot_->live_periods(board)) {
    periods.emplace(p.period, p.period_id);
  }
  if (emptier.cold != nullptr) {
    for (const cold::PeriodKey& k : emptier.cold->periods_with_rows(board)) {
      periods.emplace(k.period, k.period_id);
    }
  }
  std::vector<std::string> emptied;
  const auto empty = [&](const std::string& period, const std::string& id) {
    out.periods.push_back(emptier.empty(period, id, Emptying::drop));
    emptied.push_back(hot::registry_member(period, id));
  };
  for (const auto& [period, id] : periods) empty(period, id);
  // The profiles go (Redis's with the board's keys, PostgreSQL's after) under the board's
  // profile lock: a tick that read one from Redis before cannot write it back after.
  std::unique_ptr<HeldLock> profile_lock;
  if (emptier.cold != nullptr) profile_lock = emptier.cold->profile_lock(board);
  for (int round = 1;; ++round) {
    const hot::BoardReset::DropKeys dropped = hot_->drop_board_keys(board, emptied);
    if (dropped.again.empty()) {
      out.profiles += dropped.dropped.profiles;
      out.keys += dropped.dropped.keys;
      break;
    }
    if (round == kDropRounds) {
      throw Error("drop of board '" + board +
                  "': events keep creating periods; stop its producers and run drop again");
    }
    for (const std::string& m : dropped.again) {
      const hot::LivePeriod p = hot::split_registry_member(m);
      empty(p.period, p.period_id);
    }
  }
  hot_->forget_board(board);
  if (emptier.cold != nullptr) {
    const cold::BoardDropped rows = emptier.cold->drop_board(board, history);
    out.profiles += rows.profiles;
    for (const cold::HistoryDropped& h : rows.history) {
      out.periods.push_back({board, h.period, h.period_id, true, 0, 0, h.rows});
    }
  }
  return out;
}

}  // namespace bk::service
