// Leagues against real Redis and PostgreSQL (docs/architecture.md "Leagues"): placement on a
// member's first event (first come, never over cohort_size however writers race), members
// waiting until tick opens a period's cohorts, the cohort reads (live and archived), the close
// (history's league rows, every next division as the rules give it, exactly once), and the
// seats after Redis loses its data.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "hot/keys.h"
#include "league_fixture.h"
#include "lifecycle/tick.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using service::Leaderboards;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

// tie_break: none, so ties at the cut-offs are common.
const std::string kBoards = test::league_board(4, 1, 1);

const Instant kDay1 = at("2027-06-10T10:00:00Z");
const Instant kDay2 = at("2027-06-11T10:00:00Z");
const Instant kDay3 = at("2027-06-12T10:00:00Z");
const Instant kDay2Open = at("2027-06-11T00:05:00Z");  // day 1 past its end and grace
const Instant kDay3Open = at("2027-06-12T00:05:00Z");

class LeagueTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};

  void SetUp() override { cold.migrate(); }

  void add(Instant now, const std::string& member, std::int64_t points) {
    Leaderboards lb(config, conn, Clock(now), &cold);
    const auto r = lb.apply({"lg", member, points, now, ""});
    ASSERT_EQ(r.status, service::UpdateStatus::applied) << r.reason;
  }

  lifecycle::TickReport tick(Instant now) {
    auto report = lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({});
    EXPECT_FALSE(report.any_failed());
    return report;
  }

  service::Cohort cohort_of(Instant now, const std::string& member) {
    Leaderboards lb(config, conn, Clock(now), &cold);
    const service::PeriodView view{lb.resolve("lg", "daily", std::nullopt)};
    return lb.reads().cohort_of(view, member);
  }

  // member -> "division:cohort" for every seat of the day's period, read back from PostgreSQL
  // after a tick's checkpoint.
  std::string division_of(const std::string& member) {
    return test::psql("SELECT division FROM " + prefix +
                      ".league_members WHERE board = 'lg' AND member = '" + member + "'");
  }
};

std::vector<std::string> members_of(const service::Cohort& c) {
  std::vector<std::string> out;
  for (const auto& r : c.rows) out.push_back(r.member);
  return out;
}

TEST_F(LeagueTest, FirstEventsSeatMembersInFillingCohortsOfTheirDivisionInOrder) {
  tick(kDay1);  // opens the day's cohorts
  for (std::int64_t i = 0; i < 9; ++i) add(kDay1, "m" + std::to_string(i), 10 * (9 - i));
  // start: silver; cohorts of 4: silver-1 = m0..m3, silver-2 = m4..m7, silver-3 = m8.
  const service::Cohort c1 = cohort_of(kDay1, "m2");
  EXPECT_EQ(c1.division, "silver");
  EXPECT_EQ(c1.cohort, "silver-1");
  EXPECT_EQ(members_of(c1), (std::vector<std::string>{"m0", "m1", "m2", "m3"}));
  ASSERT_EQ(c1.rows.size(), 4U);
  EXPECT_EQ(c1.rows[0].zone, Zone::promote);
  EXPECT_EQ(c1.rows[1].zone, Zone::stay);
  EXPECT_EQ(c1.rows[3].zone, Zone::relegate);
  EXPECT_EQ(c1.rows[3].points, 60);
  EXPECT_EQ(cohort_of(kDay1, "m7").cohort, "silver-2");
  const service::Cohort last = cohort_of(kDay1, "m8");
  EXPECT_EQ(last.cohort, "silver-3");
  EXPECT_EQ(members_of(last), (std::vector<std::string>{"m8"}));
  // A second event never moves a member.
  add(kDay1, "m8", 1000);
  EXPECT_EQ(cohort_of(kDay1, "m8").cohort, "silver-3");
  EXPECT_EQ(cohort_of(kDay1, "m8").rows[0].points, 1010);
}

TEST_F(LeagueTest, MembersWaitUntilTickOpensTheCohortsThenSitInFirstEventOrder) {
  add(kDay1, "late", 5);
  add(kDay1 - std::chrono::minutes{5}, "early", 7);
  try {
    cohort_of(kDay1, "late");
    ADD_FAILURE() << "a member was seated before the cohorts opened";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("waits for the period's cohorts"), std::string::npos)
        << e.what();
  }
  tick(kDay1);
  const service::Cohort c = cohort_of(kDay1, "late");
  EXPECT_EQ(c.cohort, "silver-1");
  // Seated by first event: early (09:55) before late (10:00); listed by points.
  EXPECT_EQ(test::psql("SELECT string_agg(member, ',' ORDER BY place) FROM " + prefix +
                       ".league_seats WHERE board = 'lg'"),
            "early,late\n");
  EXPECT_EQ(members_of(c), (std::vector<std::string>{"early", "late"}));
}

TEST_F(LeagueTest, RacingWritersNeverOverfillACohortAndSeatEachMemberOnce) {
  tick(kDay1);
  constexpr int kWriters = 4;
  constexpr int kMembers = 60;
  std::vector<std::thread> writers;
  writers.reserve(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      redis::Connection own = test::connect_redis();
      cold::ColdStore own_cold{test::postgres_url(), prefix};
      Leaderboards lb(config, own, Clock(kDay1), &own_cold);
      for (int i = 0; i < kMembers; ++i) {
        // Every writer writes every member, in its own order: they race for each first seat.
        const int m = (i * 7 + w * 13) % kMembers;  // 7 is prime to 60: a permutation
        lb.apply({"lg", "r" + std::to_string(m), 1, kDay1, ""});
      }
    });
  }
  for (auto& t : writers) t.join();
  tick(kDay1);  // checkpoints every seat
  EXPECT_EQ(test::psql("SELECT count(*), count(DISTINCT member), count(DISTINCT place), max(place)"
                       " FROM " +
                       prefix + ".league_seats WHERE board = 'lg'"),
            "60|60|60|60\n");
  std::set<std::string> seen;
  for (int n = 1; n <= 15; ++n) {
    Leaderboards lb(config, conn, Clock(kDay1), &cold);
    const service::PeriodView view{lb.resolve("lg", "daily", std::nullopt)};
    const service::Cohort c = lb.reads().cohort(view, "silver-" + std::to_string(n));
    EXPECT_EQ(c.rows.size(), 4U) << c.cohort;
    for (const auto& r : c.rows) {
      EXPECT_TRUE(seen.insert(r.member).second) << r.member << " in two cohorts";
      EXPECT_EQ(r.points, kWriters) << r.member;
    }
  }
  EXPECT_EQ(seen.size(), 60U);
}

// Cohort silver-1: a 40, b 30, c 30, d 10 -> a up (gold), d down (bronze), b and c stay.
// silver-2: e 5 alone -> up (fewer than 1 better). gold-... none. A member removed moves
// nowhere; an inactive member (division row, no event) drops one.
TEST_F(LeagueTest, TheCloseMovesEveryRankedMemberOnceAndTheNextPeriodSeatsByNewDivision) {
  test::psql("INSERT INTO " + prefix +
             ".league_members VALUES ('lg', 'idle', 'gold', 'x'), ('lg', 'gone', 'silver', 'x')");
  tick(kDay1);
  for (const auto& [m, p] : std::vector<std::pair<std::string, int>>{
           {"a", 40}, {"b", 30}, {"c", 30}, {"d", 10}, {"e", 5}, {"gone", 1}}) {
    add(kDay1, m, p);
  }
  {
    Leaderboards lb(config, conn, Clock(kDay1), &cold);
    lb.moderation().remove("lg", "gone");
  }
  tick(kDay2Open);  // closes day 1, opens day 2
  tick(kDay2Open);  // nothing twice
  EXPECT_EQ(test::psql("SELECT string_agg(member || ':' || division, ',' ORDER BY member) FROM " +
                       prefix + ".league_members WHERE board = 'lg'"),
            "a:gold,b:silver,c:silver,d:bronze,e:gold,gone:silver,idle:silver\n");
  EXPECT_EQ(test::psql("SELECT string_agg(member || ':' || cohort || ':' || cohort_rank || ':' ||"
                       " move, ',' ORDER BY member) FROM " +
                       prefix + ".league_history"),
            "a:silver-1:1:promoted,b:silver-1:2:stayed,c:silver-1:2:stayed,"
            "d:silver-1:4:relegated,e:silver-2:1:promoted\n");
  EXPECT_EQ(test::psql("SELECT league FROM " + prefix + ".periods WHERE board = 'lg'"),
            "{\"silver\": {\"stayed\": 2, \"promoted\": 2, \"relegated\": 1}}\n");
  // The close notice carries the same counts (and its stream entry, published by the tick).
  EXPECT_EQ(test::psql("SELECT league FROM " + prefix + ".period_closes WHERE board = 'lg'"),
            "{\"silver\": {\"stayed\": 2, \"promoted\": 2, \"relegated\": 1}}\n");
  const auto entries = conn.command({"XRANGE", prefix + ":closes", "-", "+"}).checked();
  ASSERT_EQ(entries.elements.size(), 1U);
  const auto& fields = entries.at(0).at(1);
  std::string league;
  for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    if (fields.at(i).as_string() == "league") league = fields.at(i + 1).as_string();
  }
  EXPECT_EQ(league, "{\"silver\": {\"stayed\": 2, \"promoted\": 2, \"relegated\": 1}}");
  // The archived cohort reads from history.
  {
    Leaderboards lb(config, conn, Clock(kDay2), &cold);
    lb.reads().read_history_from([&]() -> cold::History& { return archive; });
    const service::PeriodView view = lb.reads().locate("lg", "daily", "2027-06-10");
    const service::Cohort c = lb.reads().cohort_of(view, "b");
    EXPECT_TRUE(c.archived);
    EXPECT_EQ(members_of(c), (std::vector<std::string>{"a", "b", "c", "d"}));
    EXPECT_EQ(c.rows[0].zone, Zone::promote);
    EXPECT_EQ(c.rows[3].zone, Zone::relegate);
  }
  // Day 2: each seated in the division the close gave it.
  add(kDay2, "a", 1);
  add(kDay2, "d", 1);
  add(kDay2, "newbie", 1);
  EXPECT_EQ(cohort_of(kDay2, "a").cohort, "gold-1");
  EXPECT_EQ(cohort_of(kDay2, "d").cohort, "bronze-1");
  EXPECT_EQ(cohort_of(kDay2, "newbie").cohort, "silver-1");
}

TEST_F(LeagueTest, AfterRedisLosesItsDataSeatsComeBackAndNobodySitsTwice) {
  tick(kDay1);
  for (int i = 0; i < 6; ++i) add(kDay1, "m" + std::to_string(i), i + 1);
  tick(kDay1);  // checkpoints m0..m5: silver-1 m0..m3, silver-2 m4 m5
  // Redis forgets the board (FLUSHALL would take the other suites' keys too; on a cluster
  // the board's keys share one slot).
  const hot::BoardKeys board(prefix, "lg");
  for (const std::string& key :
       {board.live("daily", "2027-06-10"), board.meta("daily", "2027-06-10"),
        board.stale("daily", "2027-06-10"), board.seats("daily", "2027-06-10"),
        board.waiting("daily", "2027-06-10"), board.divisions(), board.registry(), board.synced(),
        board.bans(), board.held()}) {
    conn.command({"DEL", key}).checked();
  }
  // Members play again: they wait (the cohorts are closed until tick restores them).
  add(kDay1, "m1", 1);
  add(kDay1, "m9", 1);
  tick(kDay1);
  EXPECT_EQ(cohort_of(kDay1, "m1").cohort, "silver-1");
  EXPECT_EQ(cohort_of(kDay1, "m9").cohort, "silver-2");  // after m4, m5: place 7
  EXPECT_EQ(test::psql("SELECT count(*), count(DISTINCT member) FROM " + prefix +
                       ".league_seats WHERE board = 'lg'"),
            "7|7\n");
  // m1's seat came back: the listing has what Redis still ranks (m1 played again).
  EXPECT_EQ(members_of(cohort_of(kDay1, "m1")), (std::vector<std::string>{"m1"}));
}

TEST_F(LeagueTest, ALeagueBoardIsNeverSpilledAndClosesInOrder) {
  tick(kDay1);
  add(kDay1, "a", 1);
  // Day 2 begins while day 1 is in its grace (1m): day 2's members wait for day 1's close.
  const Instant in_grace = at("2027-06-11T00:00:30Z");
  add(in_grace, "b", 2);
  tick(in_grace + std::chrono::seconds{5});
  EXPECT_THROW(cohort_of(in_grace, "b"), NotFoundError);
  tick(kDay3Open);  // closes day 1 and day 2 in turn
  EXPECT_EQ(
      test::psql("SELECT string_agg(period_id || ':' || status, ',' ORDER BY period_id) FROM " +
                 prefix + ".periods WHERE board = 'lg'"),
      "2027-06-10:archived,2027-06-11:archived\n");
  EXPECT_EQ(division_of("b"), "gold\n");  // alone in silver-1 of day 2: promoted
}

}  // namespace
}  // namespace bk
