// In-memory tiers for moderation's server-free tests (service/moderation_tiers.h): each board's
// registry, hot members, tombstones and bans cache as member_remove.lua and bans_unban.lua
// keep them; cold rows, archived periods and bans as PostgreSQL's tables do. Every call is
// logged, so a test can check the order of the protocol's steps.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <algorithm>

#include "core/error.h"
#include "service/moderation_tiers.h"

namespace bk::service::testing {

using PeriodOf = std::pair<std::string, std::string>;              // (period, period id)
using RowsOf = std::tuple<std::string, std::string, std::string>;  // (board, period, id)

inline RowsOf rows_of(const cold::PeriodKey& k) {
  return {k.board, k.period, k.period_id};
}

class FakeModerationRedis final : public ModerationHot {
 public:
  struct Board {
    std::vector<hot::LivePeriod> registry;
    std::map<PeriodOf, std::set<std::string>> hot;         // live ZSET members
    std::set<PeriodOf> may_have_cold;                      // spilled, or unsynced
    std::map<PeriodOf, std::set<std::string>> tombstones;  // :stale members not hot
    std::set<std::string> banned;                          // the bans cache
    std::map<std::string, int> profile_fields;    // member: its fields in :names, :metadata
    std::set<std::string> held;                   // :held entries
    std::map<PeriodOf, hot::PeriodPhase> phases;  // live unless set
    std::int64_t own_keys = 3;                    // registry, sync marker, busy...
  };
  std::map<std::string, Board> boards;
  std::set<std::string> listed;  // <prefix>:boards
  // Dead-letter streams: (board, member) of each letter.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> letters;
  std::vector<std::string> log;  // "R1 <board>", "R3 <board> <period> <id>", "U2 <board>"
  // Registry members R1 finds that its caller did not pass, per call, before the registry's
  // own (periods appearing while a removal runs).
  std::vector<std::vector<hot::LivePeriod>> appearing;

  std::vector<hot::LivePeriod> live_periods(const std::string& board) override {
    return boards[board].registry;
  }

  hot::MemberRemoval remove(const hot::RemovalRequest& r) override {
    log.push_back("R1 " + r.board);
    Board& b = boards[r.board];
    if (!appearing.empty()) {
      for (const hot::LivePeriod& p : appearing.front()) b.registry.push_back(p);
      appearing.erase(appearing.begin());
    }
    hot::MemberRemoval out;
    if (r.all) {
      std::set<std::string> given(r.ignored.begin(), r.ignored.end());
      for (const hot::RemovalPeriod& p : r.periods)
        given.insert(hot::registry_member(p.period_name, p.period_id));
      for (const hot::LivePeriod& p : b.registry) {
        const std::string m = hot::registry_member(p.period, p.period_id);
        if (given.count(m) == 0) out.again.push_back(m);
      }
      if (!out.again.empty()) return out;  // nothing written
    }
    for (const hot::RemovalPeriod& p : r.periods) {
      const PeriodOf at{p.period_name, p.period_id};
      hot::RemovedFrom f;
      f.hot = b.hot[at].erase(r.member) > 0;
      if (b.may_have_cold.count(at) != 0) {
        b.tombstones[at].insert(r.member);
        f.tombstoned = true;
      }
      out.periods.push_back(f);
    }
    if (r.ban) b.banned.insert(r.member);
    return out;
  }

  void touch_reads(const std::string& board, const std::string& period,
                   const std::string& period_id) override {
    log.push_back("R3 " + board + " " + period + " " + period_id);
  }

  bool unban(const std::string& board, const std::string& member) override {
    log.push_back("U2 " + board);
    return boards[board].banned.erase(member) > 0;
  }

  std::vector<std::string> known_boards() override { return {listed.begin(), listed.end()}; }

  hot::BoardForgotten forget(const std::string& board, const std::vector<hot::LivePeriod>& live,
                             const std::string& member, bool dry_run, bool) override {
    log.push_back(std::string(dry_run ? "E3? " : "E3 ") + board);
    Board& b = boards[board];
    hot::BoardForgotten f;
    f.profiles = b.profile_fields.count(member) != 0 ? b.profile_fields[member] : 0;
    f.held = static_cast<std::int64_t>(b.held.count(member));
    f.bans = static_cast<std::int64_t>(b.banned.count(member));
    for (const hot::LivePeriod& p : live) {
      const PeriodOf at{p.period, p.period_id};
      f.hot.push_back(dry_run ? static_cast<std::int64_t>(b.hot[at].count(member)) : 0);
      f.tombstones.push_back(static_cast<std::int64_t>(b.tombstones[at].count(member)));
      if (!dry_run) b.tombstones[at].erase(member);
    }
    if (!dry_run) {
      b.profile_fields.erase(member);
      b.held.erase(member);
      b.banned.erase(member);
    }
    return f;
  }

  std::int64_t dead_letters(const std::string& dead_stream, const std::string& member,
                            const hot::Eraser::LetterBoards& which, bool dry_run) override {
    auto& stream = letters[dead_stream];
    std::int64_t n = 0;
    for (auto it = stream.begin(); it != stream.end();) {
      const bool board_ok = which.any || std::find(which.boards.begin(), which.boards.end(),
                                                   it->first) != which.boards.end();
      if (it->second == member && board_ok) {
        ++n;
        if (!dry_run) {
          it = stream.erase(it);
          continue;
        }
      }
      ++it;
    }
    return n;
  }

  hot::PeriodPhase phase(const std::string& board, const std::string& period,
                         const std::string& period_id) override {
    const auto& phases = boards[board].phases;
    const auto it = phases.find({period, period_id});
    return it == phases.end() ? hot::PeriodPhase::live : it->second;
  }

  std::int64_t empty_period(const std::string& board, const std::string& period,
                            const std::string& period_id) override {
    log.push_back("T2 " + board + " " + period + " " + period_id);
    Board& b = boards[board];
    const PeriodOf at{period, period_id};
    const auto n = static_cast<std::int64_t>(b.hot[at].size());
    b.hot.erase(at);
    b.tombstones.erase(at);
    b.may_have_cold.erase(at);
    b.registry.erase(std::remove_if(b.registry.begin(), b.registry.end(),
                                    [&](const hot::LivePeriod& p) {
                                      return p.period == period && p.period_id == period_id;
                                    }),
                     b.registry.end());
    return n;
  }

  hot::BoardReset::DropKeys drop_board_keys(const std::string& board,
                                            const std::vector<std::string>& emptied) override {
    log.push_back("drop keys " + board);
    Board& b = boards[board];
    if (!appearing.empty()) {
      for (const hot::LivePeriod& p : appearing.front()) b.registry.push_back(p);
      appearing.erase(appearing.begin());
    }
    hot::BoardReset::DropKeys out;
    for (const hot::LivePeriod& p : b.registry) {
      if (std::find(emptied.begin(), emptied.end(), p.member()) == emptied.end())
        out.again.push_back(p.member());
    }
    if (!out.again.empty()) return out;
    for (const auto& [member, n] : b.profile_fields) out.dropped.profiles += n;
    out.dropped.keys = b.own_keys;
    b.profile_fields.clear();
    b.held.clear();
    b.own_keys = 0;
    return out;
  }

  bool forget_board(const std::string& board) override {
    log.push_back("forget " + board);
    return listed.erase(board) > 0;
  }
};

class FakeModerationPostgres final : public ModerationCold {
 public:
  std::map<RowsOf, std::set<std::string>> cold_rows;
  std::map<RowsOf, std::set<std::string>> history;                     // archived periods' rows
  std::map<std::pair<std::string, std::string>, std::string> bans_by;  // (board, member): reason
  std::vector<std::string> log;  // "B0 <board>", "R2 <n periods>", "U1 <board>"
  // The next call of each throws (a PostgreSQL that is down, a lock held by a spill).
  std::optional<std::string> unavailable;
  std::optional<std::string> busy;
  std::optional<std::chrono::milliseconds> lock_wait_seen;

  std::vector<cold::PeriodKey> periods_with_rows(const std::string& board) override {
    fail_if_down();
    std::vector<cold::PeriodKey> out;
    for (const auto& [k, members] : cold_rows) {
      if (std::get<0>(k) == board && !members.empty())
        out.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k)});
    }
    return out;
  }

  std::vector<cold::MemberRowsRemoved> remove_rows(
      const std::string& member, const std::vector<cold::PeriodKey>& periods,
      std::optional<std::chrono::milliseconds> lock_wait) override {
    fail_if_down();
    lock_wait_seen = lock_wait;
    if (busy) {
      const std::string why = *busy;
      busy.reset();
      throw BusyError(why);
    }
    log.push_back("R2 " + std::to_string(periods.size()));
    std::vector<cold::MemberRowsRemoved> out;
    for (const cold::PeriodKey& k : periods) {
      cold::MemberRowsRemoved r;
      r.archived = history.count(rows_of(k)) != 0;
      r.cold = static_cast<std::int64_t>(cold_rows[rows_of(k)].erase(member));
      if (r.archived) r.history = static_cast<std::int64_t>(history[rows_of(k)].erase(member));
      out.push_back(r);
    }
    return out;
  }

  bool ban(const std::string& board, const std::string& member, const std::string& reason,
           Instant) override {
    fail_if_down();
    log.push_back("B0 " + board);
    return bans_by.insert_or_assign({board, member}, reason).second;
  }

  bool unban(const std::string& board, const std::string& member) override {
    fail_if_down();
    log.push_back("U1 " + board);
    return bans_by.erase({board, member}) > 0;
  }

  std::vector<cold::BanRow> bans(const std::string& board) override {
    fail_if_down();
    std::vector<cold::BanRow> out;
    for (const auto& [who, reason] : bans_by) {
      if (who.first == board) out.push_back({who.second, reason, Instant{}});
    }
    return out;
  }

  // Erasure.
  std::string erasure;                                                   // the erasure key
  std::map<std::pair<std::string, std::string>, std::int64_t> profiles;  // (board, member): rows
  struct Audit {
    std::string member_hash;
    std::map<std::string, std::int64_t> boards;
    bool finished = false;
  };
  std::vector<Audit> audits;  // id = index + 1
  // Reset and drop: periods the periods table closed ("archived", "lost").
  std::map<RowsOf, std::string> closed;

  std::string erasure_key(const std::string& candidate) override {
    if (erasure.empty()) erasure = candidate;
    return erasure;
  }
  std::vector<std::string> boards_with_rows() override {
    std::set<std::string> out;
    for (const auto& [k, m] : cold_rows) out.insert(std::get<0>(k));
    for (const auto& [k, m] : history) out.insert(std::get<0>(k));
    for (const auto& [k, r] : bans_by) out.insert(k.first);
    for (const auto& [k, n] : profiles) out.insert(k.first);
    return {out.begin(), out.end()};
  }
  cold::ErasedBoard erase(const std::string& board, const std::string& member,
                          bool dry_run) override {
    fail_if_down();
    log.push_back(std::string(dry_run ? "E2? " : "E2 ") + board);
    cold::ErasedBoard out;
    std::map<RowsOf, cold::ErasedPeriod> periods;
    const auto take = [&](std::map<RowsOf, std::set<std::string>>& rows, bool is_history) {
      for (auto& [k, members] : rows) {
        if (std::get<0>(k) != board || members.count(member) == 0) continue;
        cold::ErasedPeriod& p = periods[k];
        p.key = {std::get<0>(k), std::get<1>(k), std::get<2>(k)};
        p.archived = p.archived || is_history;
        (is_history ? p.history : p.cold) += 1;
        if (!dry_run) members.erase(member);
      }
    };
    take(cold_rows, false);
    take(history, true);
    for (auto& [k, p] : periods) out.periods.push_back(p);
    if (const auto it = profiles.find({board, member}); it != profiles.end()) {
      out.profiles = it->second;
      if (!dry_run) profiles.erase(it);
    }
    if (const auto it = bans_by.find({board, member}); it != bans_by.end()) {
      out.bans = 1;
      if (!dry_run) bans_by.erase(it);
    }
    return out;
  }
  std::int64_t begin_erasure(const std::string& member_hash, Instant) override {
    log.push_back("audit begin");
    audits.push_back({member_hash, {}, false});
    return static_cast<std::int64_t>(audits.size());
  }
  std::int64_t earlier_erasures(const std::string& member_hash, std::int64_t id) override {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < audits.size(); ++i) {
      if (static_cast<std::int64_t>(i + 1) < id && audits[i].member_hash == member_hash) ++n;
    }
    return n;
  }
  void record_erasure(std::int64_t id, const std::string& board, std::int64_t rows) override {
    audits.at(static_cast<std::size_t>(id - 1)).boards[board] = rows;
  }
  void finish_erasure(std::int64_t id, std::int64_t, Instant) override {
    log.push_back("audit finish");
    audits.at(static_cast<std::size_t>(id - 1)).finished = true;
  }

  // Locks log when they are taken and released.
  class Logged final : public PeriodLock {
   public:
    Logged(FakeModerationPostgres& pg, std::string what, std::optional<RowsOf> period)
        : pg_(pg), what_(std::move(what)), period_(std::move(period)) {
      pg_.log.push_back("lock " + what_);
    }
    ~Logged() override {
      if (!released_) pg_.log.push_back("unlock " + what_);
    }
    cold::PeriodEmptied empty(bool refuse_closed) override {
      cold::PeriodEmptied out;
      if (const auto it = pg_.closed.find(*period_); it != pg_.closed.end()) {
        out.closed_status = it->second;
        if (refuse_closed) return out;
      }
      pg_.log.push_back("T1");
      out.cold = static_cast<std::int64_t>(pg_.cold_rows[*period_].size());
      pg_.cold_rows.erase(*period_);
      return out;
    }
    void release() override {
      released_ = true;
      pg_.log.push_back("unlock " + what_);
    }

   private:
    FakeModerationPostgres& pg_;
    std::string what_;
    std::optional<RowsOf> period_;
    bool released_ = false;
  };
  std::unique_ptr<HeldLock> profile_lock(const std::string& board) override {
    return std::make_unique<Logged>(*this, "profiles " + board, std::nullopt);
  }
  std::unique_ptr<PeriodLock> lock_period(const cold::PeriodKey& period) override {
    fail_if_down();
    return std::make_unique<Logged>(*this, period.period + " " + period.period_id, rows_of(period));
  }
  cold::BoardDropped drop_board(const std::string& board, bool with_history) override {
    log.push_back("drop board");
    cold::BoardDropped out;
    for (auto it = profiles.begin(); it != profiles.end();) {
      if (it->first.first == board) {
        out.profiles += it->second;
        it = profiles.erase(it);
      } else {
        ++it;
      }
    }
    if (!with_history) return out;
    for (auto it = history.begin(); it != history.end();) {
      if (std::get<0>(it->first) == board) {
        out.history.push_back({std::get<1>(it->first), std::get<2>(it->first),
                               static_cast<std::int64_t>(it->second.size())});
        it = history.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }

 private:
  void fail_if_down() {
    if (!unavailable) return;
    const std::string why = *unavailable;
    unavailable.reset();
    throw UnavailableError(why);
  }
};

}  // namespace bk::service::testing
