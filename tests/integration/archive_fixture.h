// The fixture of the archive tests (archive_test, archive_merge_test, archive_retention_test,
// archive_broken_board_test, one binary): boards that archive, a model of what they hold, and
// the tick that archives them.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "lifecycle/tick.h"
#include "model.h"
#include "service/leaderboards.h"

namespace bk::archive_test {

using service::Leaderboards;
using service::Update;
using service::UpdateStatus;
using test::Model;

inline Instant at(const char* text) {
  return *parse_rfc3339(text);
}

// Dates are in 2027 with a 10-year retention: Redis expires keys by its own clock.
inline const char* const kBoards = R"(  - name: fort
    periods: [daily, weekly, monthly]
    timezone: Europe/Berlin
    max_points: 1000000
    hot_keep: 8
    display: 5
    retention: {default: 3650d}
  - name: hours
    periods: [hourly]
    max_points: 1000
    archive: {grace: 1m}
    retention: {default: 3650d}
  - name: big
    periods: [daily]
    max_points: 10000000
    hot_keep: 30000
    display: 10
    archive: {grace: 30d}
    retention: {default: 3650d}
)";

using Boards = std::map<std::pair<std::string, std::string>, std::map<std::string, Model>>;

class ArchiveTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};

  void SetUp() override { cold.migrate(); }

  // Applies events (in order, each at its own time) and records them in the model, per
  // period of the board.
  void play(const std::string& board, const std::vector<Update>& events, Boards& model,
            Millis processing_delay = Millis{1000}) {
    const BoardConfig* c = config.board_for(board);
    for (const Update& u : events) {
      Leaderboards lb(config, conn, Clock(*u.at + processing_delay), &cold);
      const auto r = lb.apply(u);
      ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
      for (const PeriodSpec& p : c->periods) {
        Model& m = model[{p.name, period_containing(p, *c->zone, *u.at).id}][u.member];
        m.points += u.value;
        m.at = *u.at;
      }
    }
  }

  lifecycle::TickReport tick(Instant now) {
    return lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({});
  }

  void expect_archived(const std::string& board, const Boards& model) {
    for (const auto& [key, members] : model) {
      const cold::PeriodKey pk{board, key.first, key.second};
      ASSERT_EQ(archive.status(pk), cold::PeriodStatus::archived) << key.first << " " << key.second;
      const auto want = test::brute_force(members);
      const auto got = archive.history(pk, 1000000);
      ASSERT_EQ(got.size(), want.size()) << key.first << " " << key.second;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const service::Standing g{got[i].rank, got[i].member, got[i].points, got[i].achieved_at};
        ASSERT_TRUE(test::same(g, want[i])) << key.first << " " << key.second << " position " << i;
        ASSERT_EQ(got[i].position, static_cast<std::int64_t>(i + 1));
      }
    }
  }

  std::int64_t count(const std::string& sql) { return std::stoll(test::psql(sql)); }
};

// Fills `days` daily periods of board "big" with 50,000 members each and spills 20,000 of
// each to the cold tier, so archives merge both tiers.
inline Boards fill_big(redis::Connection& conn, cold::ColdStore& cold, const Config& config,
                       const std::vector<std::string>& days) {
  Boards model;
  std::mt19937 rng(4);
  for (const std::string& day : days) {
    const Instant base = *parse_rfc3339(day + "T01:00:00Z");
    std::vector<Update> events;
    auto& m = model[{"daily", day}];
    for (int i = 0; i < 50000; ++i) {
      Update u{"big", "u" + std::to_string(i), static_cast<std::int64_t>(rng() % 100000),
               base + Millis{rng() % 3600000}, ""};
      m[u.member] = Model{u.value, *u.at};
      events.push_back(u);
    }
    Leaderboards lb(config, conn, Clock(base + std::chrono::hours{2}), &cold);
    for (const auto& r : lb.apply(events)) EXPECT_EQ(r.status, UpdateStatus::applied) << r.reason;
  }
  return model;
}

}  // namespace bk::archive_test
