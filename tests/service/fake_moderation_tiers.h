// In-memory tiers for moderation's server-free tests (service/moderation_tiers.h): each board's
// registry, hot members, tombstones and bans cache as member_remove.lua and bans_unban.lua
// keep them; cold rows, archived periods and bans as PostgreSQL's tables do. Every call is
// logged, so a test can check the order of the protocol's steps.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

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
  };
  std::map<std::string, Board> boards;
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
    for (const auto& [key, reason] : bans_by) {
      if (key.first == board) out.push_back({key.second, reason, Instant{}});
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
