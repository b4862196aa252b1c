// League closes killed (docs/architecture.md "Leagues"): `tick` SIGKILLed at every pause point
// of the archive (core/stop_points.h) on each of several days, then run to the end: every
// member's division is what a model of the rules gives, moved exactly once per close (never
// twice, never skipped), with new members, inactive members dropping and ties on the cut-offs.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "core/league.h"
#include "core/stop_points.h"
#include "harness.h"
#include "league_fixture.h"
#include "lifecycle/tick.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

const std::string kBoards = test::league_board(4, 1, 1);

const std::vector<std::string> kPoints = {"archive.begin", "archive.before_commit",
                                          "notice.before_commit", "notice.written",
                                          "archive.released"};

// The rules as the model applies them: seats by division in event order, cohorts of 4, the
// zones of core/league.h from points alone (tie_break none).
struct Model {
  LeagueRules rules;
  std::map<std::string, std::int64_t> division;  // members with a row

  void close(const std::vector<std::pair<std::string, std::int64_t>>& played) {
    std::map<std::int64_t, std::vector<std::pair<std::string, std::int64_t>>> seated;
    for (const auto& p : played) {
      const auto it = division.find(p.first);
      seated[it == division.end() ? rules.start : it->second].push_back(p);
    }
    std::map<std::string, std::int64_t> next = division;
    for (auto& [d, members] : seated) {
      for (std::size_t c = 0; c < members.size(); c += 4) {
        const std::size_t end = std::min(members.size(), c + 4);
        for (std::size_t i = c; i < end; ++i) {
          std::int64_t better = 0;
          std::int64_t worse = 0;
          for (std::size_t j = c; j < end; ++j) {
            better += members[j].second > members[i].second ? 1 : 0;
            worse += members[j].second < members[i].second ? 1 : 0;
          }
          const Zone z = zone_of(rules, d, better, worse);
          next[members[i].first] = d + (z == Zone::promote ? 1 : z == Zone::relegate ? -1 : 0);
        }
      }
    }
    for (auto& entry : next) {
      const bool active = std::any_of(played.begin(), played.end(),
                                      [&](const auto& p) { return p.first == entry.first; });
      if (!active && entry.second > 0) --entry.second;
    }
    division = next;
  }

  std::string listed() const {
    std::string out;
    for (const auto& [m, d] : division) {
      out += (out.empty() ? "" : ",") + m + ":" + rules.divisions[static_cast<std::size_t>(d)];
    }
    return out + "\n";
  }
};

TEST(LeagueKillTest, TicksKilledAtEveryArchivePointMoveEachMemberExactlyOnce) {
  const std::string prefix = test::unique_prefix();
  const Config config = test::make_config(prefix, kBoards);
  const std::string path = test::write_config(prefix, kBoards);
  const std::string log = "/tmp/" + prefix + "_league_kill.log";
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};
  cold.migrate();
  Model model;
  model.rules = *config.boards.at(0).league;
  std::mt19937 random(7);
  int kills = 0;
  for (int day = 10; day < 15; ++day) {
    const std::string date = "2027-06-" + std::to_string(day);
    const Instant noon = *parse_rfc3339(date + "T12:00:00Z");
    lifecycle::Tick(config, conn, cold, archive, Clock(noon)).run({});  // opens the day
    std::vector<std::pair<std::string, std::int64_t>> played;
    service::Leaderboards lb(config, conn, Clock(noon), &cold);
    for (int m = 0; m < 14; ++m) {
      if (random() % 4 == 0) continue;                                      // inactive today
      const std::int64_t points = static_cast<std::int64_t>(random() % 5);  // ties are common
      const std::string member = "m" + std::to_string(m + day % 2);         // some come, some go
      ASSERT_EQ(lb.apply({"lg", member, points, noon, ""}).status, service::UpdateStatus::applied);
      played.emplace_back(member, points);
    }
    const std::string after = std::to_string(day + 1);
    const std::string now = "2027-06-" + after + "T00:05:00Z";
    for (const std::string& point : kPoints) {
      const int pid = test::spawn_cli({"--config", path, "--now=" + now, "tick"}, log,
                                      {std::string(kStopAtVariable) + "=" + point + ":1"});
      test::Reaper reaper{pid};
      int code = -1;
      if (test::wait_stopped(pid, std::chrono::seconds{60}, code)) {
        ::kill(pid, SIGKILL);
        EXPECT_EQ(test::wait_cli(pid), 128 + SIGKILL);
        ++kills;
      }
    }
    const auto finish = test::run_cli({"--config", path, "--now=" + now, "tick"});
    ASSERT_EQ(finish.exit_code, 0) << finish.err;
    model.close(played);
    EXPECT_EQ(test::psql("SELECT string_agg(member || ':' || division, ',' ORDER BY member) FROM " +
                         prefix + ".league_members WHERE board = 'lg'"),
              model.listed())
        << date;
    EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".league_results WHERE period_id = '" +
                         date + "'"),
              std::to_string(played.size()) + "\n")
        << date;
  }
  EXPECT_GE(kills, 20);
}

}  // namespace
}  // namespace bk
