// service::Updates without servers, over the in-memory tiers of fake_update_tiers.h: how
// updates are planned and refused, coalesced and cut into calls, rehydrated from the cold
// tier (or reported unavailable without it), and held in stream order across outages.
#include "service/updates.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "config/config.h"
#include "fake_update_tiers.h"
#include "server_free_config.h"

namespace bk::service {
namespace {

using testing::FakeHotTier;

const char* kBoards = R"(  - name: pts
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
  - name: two
    periods: [daily, weekly]
    max_points: 1000
    retention: {default: 30d}
)";

const FakeHotTier::PeriodOf kToday{"pts", "daily", "2026-11-20"};

Updates::Layouts layouts_of(const Config& config) {
  Updates::Layouts out;
  for (const BoardConfig& b : config.boards) {
    for (const PeriodSpec& p : b.periods) out.emplace(&p, b.layout_for(p));
  }
  return out;
}

Update inc(const std::string& member, std::int64_t value, const std::string& token = "",
           const std::string& board = "pts") {
  Update u;
  u.board = board;
  u.member = member;
  u.value = value;
  u.order_token = token;
  if (!token.empty()) u.stream = "events";
  return u;
}

class UpdatesTest : public ::testing::Test {
 protected:
  Config config = testing::server_free_config(kBoards);
  Instant now = *parse_rfc3339("2026-11-20T12:00:00Z");
  Updates::Layouts layouts = layouts_of(config);
  FakeHotTier hot;
  testing::FakeColdTier cold;
  Counters counters;
  Updates updates = make(&cold);

  Updates make(ColdUpdateTier* tier) {
    return Updates(
        config, Clock(now), layouts, hot, tier, counters, [](const std::string&) { return 0; },
        [](const std::vector<Update>&, std::vector<UpdateResult>&) {});
  }

  std::vector<UpdateResult> run(const std::vector<Update>& us, bool want_points = true) {
    return run_on(updates, us, want_points);
  }
  static std::vector<UpdateResult> run_on(Updates& u, const std::vector<Update>& us,
                                          bool want_points = true) {
    std::vector<UpdateResult> results(us.size());
    UpdateCalls calls = u.prepare(us, want_points ? Detail::points : Detail::status, results);
    return u.apply(us, calls, std::move(results));
  }
  // The points of the first period of an applied result.
  static std::int64_t points(const UpdateResult& r) {
    EXPECT_EQ(r.status, UpdateStatus::applied) << r.reason;
    return r.points.empty() ? -1 : r.points.front().points;
  }
};

// --- Coalescing and calls -------------------------------------------------------------------

TEST_F(UpdatesTest, OneMembersIncrementsGoAsOneEventAndEachUpdateGetsItsOwnPoints) {
  const auto r = run({inc("a", 5), inc("a", 7), inc("b", 1)});
  ASSERT_EQ(hot.sent.size(), 1u);
  ASSERT_EQ(hot.sent[0].events.size(), 2u);
  EXPECT_EQ(hot.sent[0].events[0].member, "a");
  EXPECT_EQ(hot.sent[0].events[0].value, 12);
  EXPECT_EQ(points(r[0]), 5);  // the sum less the increment after it
  EXPECT_EQ(points(r[1]), 12);
  EXPECT_EQ(points(r[2]), 1);
}

TEST_F(UpdatesTest, EventsWithIdsAreNeverCoalesced) {
  Update first = inc("a", 5);
  first.event_id = "e1";
  run({first, inc("a", 7)});
  ASSERT_EQ(hot.sent.size(), 1u);
  EXPECT_EQ(hot.sent[0].events.size(), 2u);
}

TEST_F(UpdatesTest, EachBoardHasItsOwnCallWithOneSlotPerPeriod) {
  const auto r = run({inc("a", 5, "", "two"), inc("a", 3), inc("b", 2, "", "two")});
  ASSERT_EQ(hot.sent.size(), 2u);
  std::map<std::string, const hot::HotBatch*> by_board;
  for (const auto& b : hot.sent) by_board[b.board] = &b;
  ASSERT_EQ(by_board.count("two"), 1u);
  ASSERT_EQ(by_board.count("pts"), 1u);
  ASSERT_EQ(by_board["two"]->slots.size(), 2u);
  EXPECT_EQ(by_board["two"]->slots[0].period_name, "daily");
  EXPECT_EQ(by_board["two"]->slots[1].period_name, "weekly");
  EXPECT_EQ(by_board["two"]->events.size(), 2u);
  ASSERT_EQ(r[0].points.size(), 2u);
  EXPECT_EQ(r[0].points[0].period, "daily");
  EXPECT_EQ(r[0].points[1].period, "weekly");
  EXPECT_EQ(r[0].points[1].points, 5);
  EXPECT_EQ(points(r[1]), 3);
  EXPECT_EQ(hot.registered, (std::vector<std::string>{"pts", "two"}));
}

TEST_F(UpdatesTest, ABoardsUpdatesBeyondOneCallGoInSeveralCallsWithEachMemberInOne) {
  std::vector<Update> us;
  for (int round = 0; round < 2; ++round) {
    for (int m = 0; m < 1250; ++m) us.push_back(inc("m" + std::to_string(m), 1 + round));
  }
  const auto r = run(us);
  ASSERT_EQ(hot.sent.size(), 3u);  // 2500 updates, 1000 a call
  std::map<std::string, std::size_t> call_of;
  for (std::size_t c = 0; c < hot.sent.size(); ++c) {
    for (const auto& e : hot.sent[c].events) {
      EXPECT_TRUE(call_of.emplace(e.member, c).second) << e.member << " is in two calls";
    }
  }
  EXPECT_EQ(call_of.size(), 1250u);
  for (std::size_t i = 1250; i < us.size(); ++i) EXPECT_EQ(points(r[i]), 3) << us[i].member;
}

TEST_F(UpdatesTest, ACoalescedEventThatLeavesTheRangeIsSplitAndOnlyTheLaterUpdateRefused) {
  const auto r = run({inc("a", 600), inc("a", 600)});
  ASSERT_EQ(hot.sent.size(), 2u);  // the coalesced call, then its events one by one
  EXPECT_EQ(hot.sent[1].events.size(), 2u);
  EXPECT_EQ(points(r[0]), 600);
  EXPECT_EQ(r[1].status, UpdateStatus::refused);
  EXPECT_EQ(r[1].refusal, Refusal::out_of_range);
  EXPECT_NE(r[1].reason.find("1200"), std::string::npos) << r[1].reason;
}

// --- Refusals -------------------------------------------------------------------------------

TEST_F(UpdatesTest, PlanRefusesWithoutAskingRedisAndSaysWhy) {
  Update closed = inc("a", 1, "1-1");
  closed.at = *parse_rfc3339("2026-11-18T12:00:00Z");  // daily period closed since 11-19 00:10
  Update early = inc("a", 1);
  early.at = now + std::chrono::hours(1);  // beyond max_clock_skew (5 min)
  Update unknown = inc("a", 1, "", "nope");
  Update huge = inc("a", kMaxExactInteger);
  Update nameless = inc("", 1);
  const auto r = run({closed, early, unknown, huge, nameless});
  EXPECT_TRUE(hot.sent.empty());
  const std::vector<Refusal> want{Refusal::closed, Refusal::too_early, Refusal::unknown_board,
                                  Refusal::invalid_value, Refusal::invalid_member};
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].status, UpdateStatus::refused) << i;
    EXPECT_EQ(r[i].refusal, want[i]) << i << ": " << r[i].reason;
  }
  EXPECT_NE(r[0].reason.find("closed for writes"), std::string::npos) << r[0].reason;
  EXPECT_NE(r[1].reason.find("max_clock_skew"), std::string::npos) << r[1].reason;
  // A refused stream event releases the hold it may own.
  ASSERT_EQ(hot.releases.size(), 1u);
  EXPECT_EQ(hot.releases[0].second, (hot::BoardScripts::Holds{{"a", "1-1"}}));
}

TEST_F(UpdatesTest, PointsTheScriptFindsOutOfRangeAreRefusedNamingThem) {
  const auto r = run({inc("a", 2000)});
  EXPECT_EQ(r[0].status, UpdateStatus::refused);
  EXPECT_EQ(r[0].refusal, Refusal::out_of_range);
  EXPECT_NE(r[0].reason.find("outside [0, 1000]"), std::string::npos) << r[0].reason;
}

// --- Rehydration ----------------------------------------------------------------------------

TEST_F(UpdatesTest, AMemberWithAColdRowGoesOnFromItsColdPointsOneWithoutFromNothing) {
  hot.spilled[kToday] = "g1";
  cold.rows[kToday]["a"] = 100;
  const auto r = run({inc("a", 5), inc("b", 5)});
  EXPECT_EQ(points(r[0]), 105);
  EXPECT_EQ(points(r[1]), 5);
  EXPECT_EQ(counters.rehydrated, 1);
  EXPECT_EQ(counters.cold_lookups, 2);
  EXPECT_EQ(cold.lookups, 1);  // one look-up for every member that needs one
}

TEST_F(UpdatesTest, AColdRowReadUnderAnOutdatedSpillGenerationIsLookedUpAgain) {
  hot.spilled[kToday] = "g1";
  cold.rows[kToday]["a"] = 100;
  int applies = 0;
  hot.after_apply = [&] {
    if (++applies == 1) hot.spilled[kToday] = "g2";  // a spill ran after the first call
  };
  const auto r = run({inc("a", 5)});
  EXPECT_EQ(points(r[0]), 105);
  EXPECT_EQ(cold.lookups, 2);
  EXPECT_EQ(counters.retries, 1);
  EXPECT_EQ(hot.sent.back().events.at(0).cold.at(0).gen, "g2");
}

TEST_F(UpdatesTest, AnUnreachableColdTierLeavesItsMembersUnavailableAndTheOthersApply) {
  hot.spilled[kToday] = "g1";
  hot.points[kToday]["b"] = 10;  // hot: needs no cold row
  cold.reachable = false;
  const auto r = run({inc("a", 5), inc("b", 5)});
  EXPECT_EQ(r[0].status, UpdateStatus::unavailable);
  EXPECT_NE(r[0].reason.find("PostgreSQL is unreachable"), std::string::npos) << r[0].reason;
  EXPECT_EQ(points(r[1]), 15);
  EXPECT_EQ(counters.cold_errors, 1);
}

TEST_F(UpdatesTest, WithoutAColdTierASpilledMemberIsRefusedSayingSo) {
  Updates no_cold = make(nullptr);
  hot.spilled[kToday] = "g1";
  const auto r = run_on(no_cold, {inc("a", 5)});
  EXPECT_EQ(r[0].status, UpdateStatus::refused);
  EXPECT_EQ(r[0].refusal, Refusal::cold_tier);
  EXPECT_NE(r[0].reason.find("no PostgreSQL connection is attached"), std::string::npos);
}

TEST_F(UpdatesTest, ABoardRedisLostIsSyncedFromTheColdTierThenApplied) {
  hot.unsynced.insert("pts");
  cold.rows[kToday]["a"] = 100;
  const auto r = run({inc("a", 5)});
  EXPECT_EQ(points(r[0]), 105);
  EXPECT_EQ(hot.synced, (std::vector<std::string>{"pts"}));
  EXPECT_EQ(hot.registered, (std::vector<std::string>{"pts", "pts"}));  // registered again
  EXPECT_EQ(counters.synced, 1);
  EXPECT_EQ(counters.recovered, 1);
}

// --- Holds ----------------------------------------------------------------------------------

TEST_F(UpdatesTest, AnUnavailableEventHoldsItsMemberAndItsLaterEventWaitsUntilItApplies) {
  hot.spilled[kToday] = "g1";
  cold.reachable = false;
  auto r = run({inc("a", 1, "1-1"), inc("a", 2, "2-1")});
  EXPECT_EQ(r[0].status, UpdateStatus::unavailable);
  EXPECT_EQ(r[1].status, UpdateStatus::unavailable);
  EXPECT_EQ(hot.held["pts"]["a"], "1-1");  // the earliest token holds

  r = run({inc("a", 2, "2-1")});  // the later one, alone: it must wait
  EXPECT_EQ(r[0].status, UpdateStatus::waiting) << r[0].reason;

  cold.reachable = true;
  r = run({inc("a", 1, "1-1")});
  EXPECT_EQ(points(r[0]), 1);
  EXPECT_EQ(hot.held["pts"].count("a"), 0u);
  r = run({inc("a", 2, "2-1")});
  EXPECT_EQ(points(r[0]), 3);
}

TEST_F(UpdatesTest, AFailedBoardHoldsItsMembersAndOtherBoardsApply) {
  hot.failing["two"] = "WRONGTYPE Operation against a key holding the wrong kind of value";
  const auto r = run({inc("a", 1, "1-1", "two"), inc("b", 1, "1-2")});
  EXPECT_EQ(r[0].status, UpdateStatus::failed);
  EXPECT_NE(r[0].reason.find("WRONGTYPE"), std::string::npos) << r[0].reason;
  EXPECT_EQ(points(r[1]), 1);
  EXPECT_EQ(hot.held["two"]["a"], "1-1");
  EXPECT_EQ(hot.held["pts"].count("b"), 0u);
}

TEST_F(UpdatesTest, HoldHoldsTheMembersOfStreamEventsOnly) {
  updates.hold({inc("a", 1, "1-1"), inc("b", 1)});
  ASSERT_EQ(hot.holds.size(), 1u);
  EXPECT_EQ(hot.holds[0].second, (hot::BoardScripts::Holds{{"a", "1-1"}}));
}

}  // namespace
}  // namespace bk::service
