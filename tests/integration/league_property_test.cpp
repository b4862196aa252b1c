// Leagues against a model (docs/architecture.md "Leagues"): random members over three
// consecutive periods with a close between each, their events racing from four writers at
// once (CLI `add` processes, a stream drained by `ingest`, two library threads). After each
// period: every member that played holds exactly one seat, in the division the model gives
// it, no cohort holds more than cohort_size, every cohort's listing (the reads) is the
// model's for those seats, and after the close every division is the model's (top and bottom
// divisions, ties at the cut-offs: tie_break none and small values make them common,
// inactive members dropping).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "core/league.h"
#include "harness.h"
#include "league_fixture.h"
#include "lifecycle/tick.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

constexpr std::int64_t kSize = 5;
const std::string kBoards = test::league_board(kSize, 2, 2);

struct Event {
  std::string member;
  std::int64_t value = 0;
};

// One seat as tick checkpointed it.
struct SeatRow {
  std::string member;
  std::int64_t division = 0;
  std::int64_t place = 0;
};

std::vector<SeatRow> seats_of(const std::string& prefix, const std::string& day) {
  std::istringstream in(test::psql("SELECT member || ' ' || division || ' ' || place FROM " +
                                   prefix + ".league_seats WHERE period_id = '" + day + "'"));
  std::vector<SeatRow> out;
  SeatRow s;
  while (in >> s.member >> s.division >> s.place) out.push_back(s);
  return out;
}

class LeaguePropertyTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  std::string path = test::write_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};
  LeagueRules rules = *config.boards.at(0).league;
  std::map<std::string, std::int64_t> division;  // the model's, of members with a row
  std::mt19937 random{20261128};

  void SetUp() override { cold.migrate(); }

  // The events of one period, split among the four writers and sent at once.
  void write_racing(const std::vector<Event>& events, Instant at) {
    std::vector<std::vector<Event>> parts(4);
    for (const Event& e : events) parts[random() % 4].push_back(e);
    const std::string when = format_rfc3339(at);
    std::thread cli([&] {
      for (const Event& e : parts[0]) {
        const auto r = test::run_cli({"--config", path, "--now=" + when, "add", "lg", e.member,
                                      std::to_string(e.value), "--at", when});
        EXPECT_EQ(r.exit_code, 0) << r.err;
      }
    });
    std::thread stream([&] {
      redis::Connection own = test::connect_redis();
      const std::string key = test::events_stream(prefix);
      for (const Event& e : parts[1]) {
        own.command({"XADD", key, "*", "board", "lg", "member", e.member, "value",
                     std::to_string(e.value), "at", std::to_string(to_epoch_ms(at))})
            .checked();
      }
      const auto r = test::run_cli({"--config", path, "--now=" + when, "ingest", "--stream", key,
                                    "--drain", "--max-wait", "5"});
      EXPECT_EQ(r.exit_code, 0) << r.err;
    });
    std::vector<std::thread> library;
    for (int w = 2; w < 4; ++w) {
      library.emplace_back([&, w] {
        redis::Connection own = test::connect_redis();
        cold::ColdStore own_cold{test::postgres_url(), prefix};
        service::Leaderboards lb(config, own, Clock(at), &own_cold);
        for (const Event& e : parts[static_cast<std::size_t>(w)]) {
          EXPECT_EQ(lb.apply({"lg", e.member, e.value, at, ""}).status,
                    service::UpdateStatus::applied);
        }
      });
    }
    cli.join();
    stream.join();
    for (auto& t : library) t.join();
  }

  std::int64_t division_of(const std::string& member) const {
    const auto it = division.find(member);
    return it == division.end() ? rules.start : it->second;
  }

  // The seats against the model: one per member that played, its division, cohorts within
  // their size, places unique per division. Returns cohort id -> its members.
  std::map<std::string, std::vector<std::string>> check_seats(
      const std::string& day, const std::map<std::string, std::int64_t>& points) {
    std::map<std::string, std::vector<std::string>> cohorts;
    std::set<std::pair<std::int64_t, std::int64_t>> places;
    std::set<std::string> seated;
    for (const SeatRow& s : seats_of(prefix, day)) {
      EXPECT_TRUE(seated.insert(s.member).second) << s.member << " seated twice on " << day;
      EXPECT_TRUE(places.insert({s.division, s.place}).second) << "place taken twice";
      EXPECT_EQ(s.division, division_of(s.member)) << s.member << " on " << day;
      cohorts[cohort_name(rules, {s.division, cohort_number(s.place, kSize)})].push_back(s.member);
    }
    for (const auto& [member, p] : points) EXPECT_EQ(seated.count(member), 1U) << member;
    EXPECT_EQ(seated.size(), points.size()) << day;
    for (const auto& [id, members] : cohorts) {
      EXPECT_LE(static_cast<std::int64_t>(members.size()), kSize) << id;
    }
    return cohorts;
  }

  // Each cohort's listing through the reads against the model's: ranks and zones from the
  // points alone; and the model's moves from the same.
  std::map<std::string, std::int64_t> check_listings(
      const std::map<std::string, std::vector<std::string>>& cohorts,
      const std::map<std::string, std::int64_t>& points, Instant at) {
    service::Leaderboards lb(config, conn, Clock(at), &cold);
    const service::PeriodView view{lb.resolve("lg", "daily", std::nullopt)};
    std::map<std::string, std::int64_t> next = division;
    for (const auto& [id, members] : cohorts) {
      const service::Cohort c = lb.reads().cohort(view, id);
      std::map<std::string, std::string> listed;
      for (const auto& r : c.rows) {
        listed[r.member] = std::to_string(r.rank) + ":" + std::to_string(r.points) + ":" +
                           std::string(zone_name(r.zone));
      }
      std::map<std::string, std::string> want;
      const std::int64_t d = parse_cohort(rules, id)->division;
      for (const std::string& m : members) {
        std::int64_t better = 0;
        std::int64_t worse = 0;
        for (const std::string& o : members) {
          better += points.at(o) > points.at(m) ? 1 : 0;
          worse += points.at(o) < points.at(m) ? 1 : 0;
        }
        const Zone z = zone_of(rules, d, better, worse);
        want[m] = std::to_string(better + 1) + ":" + std::to_string(points.at(m)) + ":" +
                  std::string(zone_name(z));
        next[m] = d + (z == Zone::promote ? 1 : z == Zone::relegate ? -1 : 0);
      }
      EXPECT_EQ(listed, want) << id;
    }
    for (auto& [member, d] : next) {
      if (points.count(member) == 0 && d > 0) --d;  // inactive: drop one
    }
    return next;
  }
};

TEST_F(LeaguePropertyTest, RacingWritersOverThreePeriodsMatchTheModel) {
  std::set<std::string> ties_at_cut;
  std::set<std::int64_t> divisions_seen;
  for (int day = 10; day < 13; ++day) {
    const std::string id = "2027-06-" + std::to_string(day);
    const Instant noon = *parse_rfc3339(id + "T12:00:00Z");
    lifecycle::Tick(config, conn, cold, archive, Clock(noon)).run({});  // opens the day
    std::vector<Event> events;
    std::map<std::string, std::int64_t> points;
    for (int m = 0; m < 36; ++m) {
      if (random() % 5 == 0) continue;  // inactive this period
      const std::string member = "p" + std::to_string(m);
      for (int n = 1 + static_cast<int>(random() % 2); n > 0; --n) {
        const std::int64_t value = 1 + static_cast<std::int64_t>(random() % 3);
        events.push_back({member, value});
        points[member] += value;
      }
    }
    std::shuffle(events.begin(), events.end(), random);
    write_racing(events, noon);
    lifecycle::Tick(config, conn, cold, archive, Clock(noon)).run({});  // checkpoints
    const auto cohorts = check_seats(id, points);
    for (const auto& [cohort, members] : cohorts) {
      divisions_seen.insert(parse_cohort(rules, cohort)->division);
      std::map<std::int64_t, int> at;
      for (const std::string& m : members) ++at[points.at(m)];
      for (const auto& [p, n] : at) {
        if (n > 1) ties_at_cut.insert(cohort + "@" + id);
      }
    }
    const auto next = check_listings(cohorts, points, noon);
    const Instant after = *parse_rfc3339("2027-06-" + std::to_string(day + 1) + "T00:05:00Z");
    const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(after)).run({});
    ASSERT_FALSE(report.any_failed());
    division = next;
    std::string want;
    for (const auto& [m, d] : division) {
      want += (want.empty() ? "" : ",") + m + ":" + rules.divisions[static_cast<std::size_t>(d)];
    }
    EXPECT_EQ(test::psql("SELECT string_agg(member || ':' || division, ',' ORDER BY member) FROM " +
                         prefix + ".league_members WHERE board = 'lg'"),
              want + "\n")
        << "after " << id;
  }
  // The run met what it claims to check: every division, and ties inside cohorts.
  EXPECT_EQ(divisions_seen.size(), 3U);
  EXPECT_GE(ties_at_cut.size(), 3U);
}

}  // namespace
}  // namespace bk
