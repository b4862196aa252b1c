// Batches of the update path against a real Redis: a batch too long for one command, a
// half that fails, and batched and coalesced calls that match one by one for every policy,
// order and tie-break.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>

#include "redis/error.h"
#include "update_fixture.h"

namespace bk {
namespace {

using namespace update_test;  // NOLINT(google-build-using-namespace): the suite's fixture

// Managed services refuse commands of more than 3,999 arguments, and so does Connection: a
// call of 1,000 events with ids on one board (four arguments each: over 4,000) goes as
// several calls, in order: every event applied once, the ids
// remembered across them, sums exact.
TEST_F(UpdateTest, ABatchTooLongForOneCommandGoesAsSeveralInOrder) {
  std::vector<Update> events;
  std::map<std::string, std::int64_t> want;
  const Instant t = at("2026-11-22T10:00:00+08:00");
  for (int i = 0; i < 1000; ++i) {
    // Two seconds apart: the call cannot pack times and values into one argument.
    Update u{"pts", "m" + std::to_string(i % 300), 1 + i % 5, t + Millis{i * 2000LL},
             "ev" + std::to_string(i)};
    want[u.member] += u.value;
    events.push_back(u);
  }
  Leaderboards lb(config, conn, Clock(t + std::chrono::hours{1}));
  for (const auto& r : lb.apply(events)) ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
  for (const auto& r : lb.apply(events)) EXPECT_EQ(r.status, UpdateStatus::duplicate);
  const auto rows = lb.reads().top_at({lb.resolve("pts", "daily", std::nullopt)}, 0, 1000);
  ASSERT_EQ(rows.size(), want.size());
  for (const auto& r : rows) EXPECT_EQ(r.points, want[r.member]) << r.member;
  EXPECT_THROW(conn.command(redis::Args(4000, "PING")), redis::ReplyError);
  EXPECT_EQ(conn.command({"PING"}).as_string(), "PONG");  // nothing of it was sent
}

// A batch too long for one command goes as two calls; when the first fails for good (a key
// of the wrong type: yesterday's daily), the second is not sent: its members have events in
// the first, which must not be overtaken. Before, the second call applied (the weekly period
// got points) while the first half waited.
TEST_F(UpdateTest, AHalfOfABatchThatFailsKeepsTheHalfAfterItFromApplying) {
  const std::string own = test::unique_prefix();
  const Config c = test::make_config(own, kWideBoards);
  Leaderboards lb(c, conn, Clock(at("2026-11-20T12:00:00Z")));
  std::vector<Update> events;
  std::int64_t sum = 0;
  for (int i = 0; i < 1000; ++i) {
    // Thursday's events first, then Friday's (one ISO week); ids keep every event its own.
    const Instant t = at(i < 500 ? "2026-11-19T08:00:00Z" : "2026-11-20T08:00:00Z");
    Update u{"b1", "m" + std::to_string(i % 50), 1 + i % 7, t + Millis{(i % 500) * 2000LL},
             "ev" + std::to_string(i)};
    sum += u.value;
    events.push_back(u);
  }
  const hot::BoardKeys keys(own, "b1");
  conn.command({"SET", keys.live("daily", "2026-11-19"), "broken"}).checked();
  for (const auto& r : lb.apply(events)) EXPECT_EQ(r.status, UpdateStatus::failed) << r.reason;
  EXPECT_EQ(conn.command({"EXISTS", keys.live("weekly", "2026-W47")}).as_int(), 0);
  EXPECT_EQ(conn.command({"EXISTS", keys.live("daily", "2026-11-20")}).as_int(), 0);
  conn.command({"DEL", keys.live("daily", "2026-11-19")}).checked();
  for (const auto& r : lb.apply(events)) ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
  EXPECT_EQ(conn.command({"EXISTS", keys.live("weekly", "2026-W47")}).as_int(), 1);
  std::int64_t got = 0;
  for (const auto& row : all(lb, "b1", "weekly")) got += row.points;
  EXPECT_EQ(got, sum);
}

TEST_F(UpdateTest, BatchesAcrossBoardsAndPeriodsMatchOneByOne) {
  // The same 3,000 events applied as one batch and one at a time give the same boards.
  std::mt19937 rng(7);
  std::vector<Update> events;
  const Instant start = at("2026-11-19T00:00:00Z");
  for (int i = 0; i < 3000; ++i) {
    const char* board = i % 3 == 0 ? "b1" : i % 3 == 1 ? "b2" : "c1";
    Update u{board, "m" + std::to_string(rng() % 40), static_cast<std::int64_t>(1 + rng() % 9),
             start + Millis{static_cast<std::int64_t>(rng() % (3 * 86400000ULL))}, ""};
    if (u.board == "c1") u.value = 1000 + static_cast<std::int64_t>(rng() % 50);
    events.push_back(u);
  }
  const Instant clock = at("2026-11-20T12:00:00Z");
  const Config a_config = test::make_config(test::unique_prefix(), kWideBoards);
  const Config b_config = test::make_config(test::unique_prefix(), kWideBoards);
  Leaderboards batch(a_config, conn, Clock(clock));
  for (const auto& r : batch.apply(events)) ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
  Leaderboards single(b_config, conn, Clock(clock));
  for (const auto& u : events) ASSERT_EQ(single.apply(u).status, UpdateStatus::applied);

  for (const char* board : {"b1", "b2", "c1"}) {
    for (const char* day : {"2026-11-19", "2026-11-20", "2026-11-21"}) {
      const auto a =
          batch.reads().top_at({batch.resolve(board, "daily", std::string(day))}, 0, 1000);
      const auto b =
          single.reads().top_at({single.resolve(board, "daily", std::string(day))}, 0, 1000);
      ASSERT_EQ(a.size(), b.size()) << board << " " << day;
      ASSERT_FALSE(a.empty());
      for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].member, b[i].member);
        EXPECT_EQ(a[i].points, b[i].points);
        EXPECT_EQ(a[i].rank, b[i].rank);
        EXPECT_EQ(a[i].achieved_at, b[i].achieved_at);
      }
    }
  }
}

// A board of every policy, order and tie-break (its names into `names`), with a range that
// increments leave now and then.
std::string policy_boards_yaml(std::vector<std::string>& names) {
  std::string yaml;
  for (const char* update : {"increment", "best", "replace"}) {
    for (const char* order : {"desc", "asc"}) {
      for (const char* tie : {"earliest", "latest", "none"}) {
        const std::string name = std::string(update) + "-" + order + "-" + tie;
        names.push_back(name);
        yaml += "  - name: " + name + "\n    periods: [daily, weekly]\n    update: " + update +
                "\n    order: " + order + "\n    tie_break: " + tie +
                "\n    min_points: -20\n    max_points: 60\n    max_clock_skew: 4d\n"
                "    archive: {grace: 5d}\n    retention: {default: 3660d}\n";
      }
    }
  }
  return yaml;
}

// Round `round`'s 150 events per board (see the test below).
std::vector<Update> random_events(const std::vector<std::string>& names, int round, Instant start,
                                  std::mt19937& rng) {
  const bool common = round >= 4;
  std::vector<Update> events;
  for (const auto& board : names) {
    for (int i = 0; i < 150; ++i) {
      Update u{board, "m" + std::to_string(rng() % 6), static_cast<std::int64_t>(rng() % 31) - 10,
               start + Millis{static_cast<std::int64_t>(rng() % (2 * 86400000ULL))}, ""};
      if (common) {
        u.member = "c" + std::to_string(rng() % 40);
        u.value = static_cast<std::int64_t>(rng() % 7) - 3;
        // The last two rounds within 10 minutes: the batched calls pack value and time
        // (one-by-one calls always do).
        u.at = start +
               Millis{static_cast<std::int64_t>(rng() % (round >= 6 ? 600000ULL : 86400000ULL))};
      }
      if (rng() % 9 == 0) u.value = 0;
      // increments leave the range now and then
      if ((!common || round == 7) && rng() % 15 == 0) u.value = 55;
      if (!common && rng() % 10 == 0) u.event_id = "id" + std::to_string(rng() % 20);
      if (rng() % 2 == 0) {
        u.stream = "s";
        u.order_token = std::to_string(1000 + round * 1000 + i) + "-0";
      }
      events.push_back(u);
    }
  }
  return events;
}

// The batched results (`got`, and `got_quiet` without points) are those of applying the
// events one by one on `single`.
void expect_results_one_by_one(const std::vector<Update>& events,
                               const std::vector<service::UpdateResult>& got,
                               const std::vector<service::UpdateResult>& got_quiet,
                               Leaderboards& single) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto want = single.apply(events[i]);
    const std::string what = events[i].board + " " + events[i].member + " event " +
                             std::to_string(i) + " value " + std::to_string(events[i].value);
    ASSERT_EQ(got[i].status, want.status) << what << ": " << got[i].reason << " / " << want.reason;
    ASSERT_EQ(got_quiet[i].status, want.status) << what << ": " << got_quiet[i].reason;
    EXPECT_EQ(got_quiet[i].reason, want.reason) << what;
    EXPECT_TRUE(got_quiet[i].points.empty()) << what;
    EXPECT_EQ(got[i].refusal, want.refusal) << what;
    EXPECT_EQ(got[i].reason, want.reason) << what;
    ASSERT_EQ(got[i].points.size(), want.points.size()) << what;
    for (std::size_t k = 0; k < want.points.size(); ++k) {
      EXPECT_EQ(got[i].points[k].points, want.points[k].points) << what;
    }
  }
}

// `board`'s periods hold the same rows batched, one by one and quiet.
void expect_same_boards(const std::string& board, Leaderboards& batched, Leaderboards& single,
                        Leaderboards& quiet) {
  for (const auto& [period, id] :
       {std::pair{"daily", "2026-11-19"}, {"daily", "2026-11-20"}, {"weekly", "2026-W47"}}) {
    const auto a =
        batched.reads().top_at({batched.resolve(board, period, std::string(id))}, 0, 100);
    const auto b = single.reads().top_at({single.resolve(board, period, std::string(id))}, 0, 100);
    const auto c = quiet.reads().top_at({quiet.resolve(board, period, std::string(id))}, 0, 100);
    ASSERT_EQ(a.size(), b.size()) << board << " " << id;
    ASSERT_EQ(c.size(), b.size()) << board << " " << id;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].member, b[i].member) << board << " " << id;
      EXPECT_EQ(a[i].points, b[i].points) << board << " " << id;
      EXPECT_EQ(a[i].rank, b[i].rank) << board << " " << id;
      EXPECT_EQ(a[i].achieved_at, b[i].achieved_at) << board << " " << id << " " << a[i].member;
      EXPECT_EQ(c[i].member, b[i].member) << board << " " << id;
      EXPECT_EQ(c[i].points, b[i].points) << board << " " << id;
      EXPECT_EQ(c[i].achieved_at, b[i].achieved_at) << board << " " << id << " " << c[i].member;
    }
  }
}

// Coalescing (one member's increments of a call sent as one event) must be invisible: for
// every policy, order and tie-break, random events with mixed signs, zeros, range refusals,
// repeated ids, stream entries and two periods per day give, batched, exactly the results,
// boards, achieved_at and in-flight markers of one by one. Rounds 4-7 are the common call
// that the script applies period by period (one day, no ids, sums that mostly stay in
// range; round 7 with refusals, where it falls back to event by event).
TEST_F(UpdateTest, BatchedAndCoalescedMatchOneByOneForEveryPolicyOrderAndTieBreak) {
  std::vector<std::string> names;
  const std::string yaml = policy_boards_yaml(names);
  const Instant start = at("2026-11-19T00:00:00Z");
  const Instant clock = at("2026-11-20T23:00:00Z");
  const Config a_config = test::make_config(test::unique_prefix(), yaml);
  const Config b_config = test::make_config(test::unique_prefix(), yaml);
  // Without points wanted (the stream consumer's way), best and replace coalesce too.
  const Config c_config = test::make_config(test::unique_prefix(), yaml);
  std::mt19937 rng(11);
  for (int round = 0; round < 8; ++round) {
    std::vector<Update> events = random_events(names, round, start, rng);
    std::shuffle(events.begin(), events.end(), rng);
    Leaderboards batched(a_config, conn, Clock(clock));
    Leaderboards single(b_config, conn, Clock(clock));
    Leaderboards quiet(c_config, conn, Clock(clock));
    const auto got = batched.apply(events);
    const auto got_quiet = quiet.apply(events, Leaderboards::Detail::status);
    ASSERT_NO_FATAL_FAILURE(expect_results_one_by_one(events, got, got_quiet, single));
    for (const auto& board : names) {
      ASSERT_NO_FATAL_FAILURE(expect_same_boards(board, batched, single, quiet));
      const auto marks = [&](const Config& c) {
        return test::marked_entries(conn, hot::BoardKeys(c.redis.key_prefix, board).inflight("s"));
      };
      EXPECT_EQ(marks(a_config), marks(b_config)) << board;
      EXPECT_EQ(marks(c_config), marks(b_config)) << board;
    }
  }
}

}  // namespace
}  // namespace bk
