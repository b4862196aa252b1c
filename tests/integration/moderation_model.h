// The model that moderation tests compare boards against: every period of every board as
// member -> (points, achieved_at), plus each board's banned members; and the checks that
// compare a board's listing, counts and ranks, as the library reads them, with it.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model.h"
#include "service/leaderboards.h"

namespace bk::test {

// One board: its periods by name ("daily", "weekly"; the current one of each) and its bans.
struct BoardModel {
  std::map<std::string, std::map<std::string, Model>> periods;
  std::set<std::string> banned;

  // Whether `member` is listed in any of its periods.
  bool listed(const std::string& member) const {
    for (const auto& [name, members] : periods) {
      if (members.count(member) != 0) return true;
    }
    return false;
  }
  // An applied event of positive `value` at `at`, in every period (events come in time
  // order, so the last one is the member's achieved_at).
  void applied(const std::string& member, std::int64_t value, Instant at) {
    for (auto& [name, members] : periods) {
      Model& m = members[member];
      m.points += value;
      m.at = at;
    }
  }
  // remove(): the member leaves `period` (every period when absent).
  void removed(const std::string& member, const std::optional<std::string>& period = {}) {
    for (auto& [name, members] : periods) {
      if (!period || *period == name) members.erase(member);
    }
  }
};

// An update refused because its member is banned, saying so.
inline bool refused_as_banned(const service::UpdateResult& r) {
  return r.status == service::UpdateStatus::refused && r.refusal == service::Refusal::banned &&
         r.reason.find("banned") != std::string::npos;
}

// The whole listing of `ref` (top with room to spare), its count, and the rank of each of
// `members` (listed or not) equal the model's.
inline void expect_period(service::Leaderboards& lb, const service::PeriodRef& ref,
                          const std::map<std::string, Model>& model,
                          const std::vector<std::string>& members) {
  const auto want = brute_force(model);
  const auto got = lb.reads().top_at({ref}, 0, static_cast<std::int64_t>(want.size()) + 10);
  ASSERT_EQ(got.size(), want.size()) << "listing of " << ref.board << " " << ref.spec->name;
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(same(got[i], want[i])) << ref.board << " " << ref.spec->name << " position " << i;
  }
  EXPECT_EQ(lb.reads().count({ref}), static_cast<std::int64_t>(want.size()))
      << "count of " << ref.board << " " << ref.spec->name;
  const auto ranks = lb.reads().ranks({ref}, members);
  ASSERT_EQ(ranks.size(), members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto it = std::find_if(want.begin(), want.end(), [&](const service::Standing& s) {
      return s.member == members[i];
    });
    if (it == want.end()) {
      EXPECT_FALSE(ranks[i]) << members[i] << " is ranked " << ranks[i]->rank << " with "
                             << ranks[i]->points << " on " << ref.board << " " << ref.spec->name
                             << " but must not be listed";
    } else {
      ASSERT_TRUE(ranks[i]) << members[i] << " has no rank on " << ref.board << " "
                            << ref.spec->name;
      EXPECT_TRUE(same(*ranks[i], *it)) << "rank of " << members[i];
    }
  }
}

// Every period of the board (listing, count, ranks) and periods()'s member counts.
inline void expect_board(service::Leaderboards& lb, const std::string& board,
                         const BoardModel& model, const std::vector<std::string>& members) {
  for (const auto& [name, period] : model.periods) {
    SCOPED_TRACE(board + " " + name);
    expect_period(lb, lb.resolve(board, name, std::nullopt), period, members);
  }
  for (const service::PeriodStatus& p : lb.reads().periods(board)) {
    const auto it = model.periods.find(p.period);
    ASSERT_NE(it, model.periods.end()) << p.period;
    EXPECT_EQ(p.current_members, static_cast<std::int64_t>(it->second.size()))
        << "periods(): current members of " << board << " " << p.period;
  }
}

}  // namespace bk::test
