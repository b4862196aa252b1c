// Moderation's decisions without servers (service/moderation.h over in-memory tiers,
// fake_moderation_tiers.h): which periods an operation covers, how R1's and drop's "again"
// rounds end, what each step counts, the order of the protocol's steps (locks, audit rows),
// and what a failing or refused step leaves. The
// same operations against real servers, racing spills and archives: tests/integration
// (remove_ban_test, moderation_model_test, moderation_cases_test).
#include "service/moderation.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/period.h"
#include "fake_moderation_tiers.h"
#include "server_free_config.h"

namespace bk::service {
namespace {

using testing::FakeModerationPostgres;
using testing::FakeModerationRedis;
using testing::PeriodOf;
using testing::RowsOf;

const char* kBoards = R"(  - name: b
    periods: [daily, weekly]
    max_points: 1000
    retention: {default: 30d}
)";

class ModerationTest : public ::testing::Test {
 protected:
  const Config config = testing::server_free_config(kBoards);
  const Instant now = *parse_rfc3339("2026-11-20T12:00:00Z");
  FakeModerationRedis redis;
  FakeModerationPostgres postgres;
  Moderation moderation{config, Clock(now), redis, &postgres};

  const BoardConfig& board() const { return *config.board_for("b"); }
  Period current(const std::string& kind) const {
    return period_containing(*board().period(kind), *board().zone, now);
  }
  std::set<std::string>& hot_in(const std::string& kind, const Period& p) {
    return redis.boards["b"].hot[PeriodOf{kind, p.id}];
  }
  std::set<std::string>& tombstones_in(const std::string& kind, const Period& p) {
    return redis.boards["b"].tombstones[PeriodOf{kind, p.id}];
  }
  std::set<std::string>& cold_in(const std::string& kind, const Period& p) {
    return postgres.cold_rows[RowsOf{"b", kind, p.id}];
  }
  // A live period in the registry with `hot` members, and cold rows when spilled.
  PeriodOf live(const std::string& kind, const Period& p, std::set<std::string> hot,
                std::set<std::string> cold = {}) {
    redis.boards["b"].registry.push_back({kind, p.id, p.end});
    redis.boards["b"].hot[{kind, p.id}] = std::move(hot);
    if (!cold.empty()) {
      redis.boards["b"].may_have_cold.insert({kind, p.id});
      postgres.cold_rows[RowsOf{"b", kind, p.id}] = std::move(cold);
    }
    return {kind, p.id};
  }
};

TEST_F(ModerationTest, ARemovalCoversEveryLivePeriodAndThosePostgresAloneRemembers) {
  const Period today = current("daily");
  const Period week = current("weekly");
  live("daily", today, {"x", "y"});
  live("weekly", week, {"y"}, {"x"});
  // Yesterday's cold rows: Redis lost its keys (and its registry entry), PostgreSQL did not.
  const Period yesterday =
      period_containing(*board().period("daily"), *board().zone, now - std::chrono::hours(24));
  postgres.cold_rows[RowsOf{"b", "daily", yesterday.id}] = {"x"};

  const Removal r = moderation.remove("b", "x");
  ASSERT_EQ(r.periods.size(), 3U);
  EXPECT_TRUE(r.found());
  // In (period, id) order, each with what went from where.
  EXPECT_EQ(r.periods[0].period_id, yesterday.id);
  EXPECT_EQ(r.periods[0].hot + r.periods[0].cold, 1);
  EXPECT_EQ(r.periods[0].cold, 1);
  EXPECT_EQ(r.periods[1].period_id, today.id);
  EXPECT_EQ(r.periods[1].hot, 1);
  EXPECT_EQ(r.periods[1].cold, 0);
  EXPECT_EQ(r.periods[2].period, "weekly");
  EXPECT_EQ(r.periods[2].hot, 0);
  EXPECT_EQ(r.periods[2].cold, 1);
  EXPECT_EQ(hot_in("daily", today), (std::set<std::string>{"y"}));
  EXPECT_EQ(tombstones_in("weekly", week), (std::set<std::string>{"x"}));
  // R1 before R2; R3 only where cold rows went.
  EXPECT_EQ(redis.log, (std::vector<std::string>{"R1 b", "R3 b daily " + yesterday.id,
                                                 "R3 b weekly " + week.id}));
  EXPECT_EQ(postgres.log, (std::vector<std::string>{"R2 3"}));

  // Idempotent: again, nothing is found and nothing read again.
  redis.log.clear();
  const Removal again = moderation.remove("b", "x");
  EXPECT_FALSE(again.found());
  EXPECT_EQ(redis.log, (std::vector<std::string>{"R1 b"}));
}

TEST_F(ModerationTest, ANamedPeriodIsTheOnlyOneTouchedAndWithoutAnIdItIsTheCurrentOne) {
  const Period today = current("daily");
  live("daily", today, {"x"});
  live("weekly", current("weekly"), {"x"});
  const Removal r = moderation.remove("b", "x", std::string("weekly"));
  ASSERT_EQ(r.periods.size(), 1U);
  EXPECT_EQ(r.periods[0].period, "weekly");
  EXPECT_EQ(r.periods[0].hot, 1);
  EXPECT_EQ(hot_in("daily", today).count("x"), 1U);
}

TEST_F(ModerationTest, PeriodsAppearingWhileR1RunsAreAddedRoundByRoundUntilTheyStop) {
  const Period today = current("daily");
  live("daily", today, {"x"});
  const Period week = current("weekly");
  // R1's first call finds the week registered meanwhile: nothing written, called again.
  redis.appearing = {{{"weekly", week.id, week.end}}};
  hot_in("weekly", week) = {"x"};
  const Removal r = moderation.remove("b", "x");
  ASSERT_EQ(r.periods.size(), 2U);
  EXPECT_EQ(r.periods[1].period, "weekly");
  EXPECT_EQ(r.periods[1].hot, 1);
  EXPECT_EQ(redis.log, (std::vector<std::string>{"R1 b", "R1 b"}));
}

TEST_F(ModerationTest, PeriodsThatKeepAppearingEndTheRemovalWithNothingRemoved) {
  const Period today = current("daily");
  live("daily", today, {"x"});
  for (int i = 1; i <= 10; ++i) {
    const Period earlier = period_containing(*board().period("daily"), *board().zone,
                                             now - std::chrono::hours(24 * i));
    redis.appearing.push_back({{"daily", earlier.id, earlier.end}});
  }
  EXPECT_THROW(moderation.remove("b", "x"), UnavailableError);
  EXPECT_EQ(hot_in("daily", today).count("x"), 1U);
  EXPECT_TRUE(postgres.log.empty());
}

TEST_F(ModerationTest, RegisteredPeriodsTheConfigDoesNotKnowAreLeftAloneNotLoopedOn) {
  const Period today = current("daily");
  live("daily", today, {"x"});
  redis.boards["b"].registry.push_back({"gone", "2026-01", today.end});
  const Removal r = moderation.remove("b", "x");
  ASSERT_EQ(r.periods.size(), 1U);
  EXPECT_EQ(r.periods[0].hot, 1);
  EXPECT_EQ(redis.log.size(), 1U);  // one R1: the unknown period was passed as ignored
}

TEST_F(ModerationTest, AnArchivedPeriodsHistoryRowsGoWithTheColdRow) {
  const Period today = current("daily");
  live("daily", today, {}, {"x"});
  postgres.history[RowsOf{"b", "daily", today.id}] = {"x", "y"};
  const Removal r = moderation.remove("b", "x", std::string("daily"));
  ASSERT_EQ(r.periods.size(), 1U);
  EXPECT_TRUE(r.periods[0].archived);
  EXPECT_EQ(r.periods[0].history, 1);
  EXPECT_EQ(r.periods[0].total(), 2);
}

TEST_F(ModerationTest, ABanIsRecordedInPostgresBeforeRedisIsTouched) {
  const Period today = current("daily");
  live("daily", today, {"x"});
  postgres.unavailable = "postgres down";
  EXPECT_THROW(moderation.ban("b", "x", "cheat"), UnavailableError);
  // B0 failed: nothing was removed, nothing banned in Redis.
  EXPECT_TRUE(redis.log.empty());
  EXPECT_EQ(hot_in("daily", today).count("x"), 1U);

  const BanResult first = moderation.ban("b", "x", "cheat");
  EXPECT_TRUE(first.newly_banned);
  EXPECT_TRUE(first.removed.found());
  EXPECT_EQ(redis.boards["b"].banned.count("x"), 1U);
  EXPECT_EQ(postgres.log.front(), "B0 b");
  const BanResult second = moderation.ban("b", "x", "still");
  EXPECT_FALSE(second.newly_banned);
  const auto bans = moderation.bans("b");
  ASSERT_EQ(bans.size(), 1U);
  EXPECT_EQ(bans[0].reason, "still");
}

TEST_F(ModerationTest, AnUnbanLiftsPostgresFirstThenTheCache) {
  postgres.bans_by[{"b", "x"}] = "cheat";
  redis.boards["b"].banned.insert("x");
  EXPECT_TRUE(moderation.unban("b", "x"));
  EXPECT_EQ(postgres.log, (std::vector<std::string>{"U1 b"}));
  EXPECT_EQ(redis.log, (std::vector<std::string>{"U2 b"}));
  EXPECT_TRUE(redis.boards["b"].banned.empty());
  EXPECT_FALSE(moderation.unban("b", "x"));
}

TEST_F(ModerationTest, ALockHeldBySpillEndsTheRemovalWithTheMemberOffEveryReadAlready) {
  const Period today = current("daily");
  live("daily", today, {"x"}, {"x"});
  moderation.wait_for_locks_at_most(std::chrono::milliseconds(5));
  postgres.busy = "period b daily is locked";
  try {
    moderation.remove("b", "x");
    ADD_FAILURE() << "a held lock was not reported";
  } catch (const BusyError& e) {
    EXPECT_NE(std::string(e.what()).find("off every read"), std::string::npos) << e.what();
  }
  EXPECT_EQ(postgres.lock_wait_seen, std::chrono::milliseconds(5));
  EXPECT_EQ(tombstones_in("daily", today).count("x"), 1U);
  // A retry finishes it.
  EXPECT_EQ(moderation.remove("b", "x").periods.at(0).cold, 1);
}

TEST_F(ModerationTest, WithoutPostgresRemovalsWorkInRedisAndBansAreAUsageError) {
  Moderation redis_only(config, Clock(now), redis, nullptr);
  live("daily", current("daily"), {"x"});
  EXPECT_TRUE(redis_only.remove("b", "x").found());
  EXPECT_THROW(redis_only.ban("b", "x", ""), UsageError);
  EXPECT_THROW(redis_only.unban("b", "x"), UsageError);
  EXPECT_THROW(redis_only.bans("b"), UsageError);
}

TEST_F(ModerationTest, BadInputIsRefusedBeforeAnyTierIsAsked) {
  EXPECT_THROW(moderation.remove("nope", "x"), UsageError);
  EXPECT_THROW(moderation.remove("b", ""), UsageError);
  EXPECT_THROW(moderation.ban("b", "x", std::string("a\0b", 3)), UsageError);
  EXPECT_THROW(moderation.remove("b", "x", std::string("monthly")), UsageError);
  EXPECT_TRUE(redis.log.empty());
  EXPECT_TRUE(postgres.log.empty());
}

// --- erase -----------------------------------------------------------------------------

TEST_F(ModerationTest, AnErasureTakesEveryPieceOnRecordAndARerunFindsNothingMore) {
  const Period today = current("daily");
  const Period week = current("weekly");
  live("daily", today, {"x", "y"});
  live("weekly", week, {}, {"x"});
  postgres.history[RowsOf{"b", "daily", "2026-11-01"}] = {"x"};  // archived long ago
  postgres.profiles[{"b", "x"}] = 2;
  postgres.bans_by[{"b", "x"}] = "cheat";
  redis.listed = {"b"};
  redis.boards["b"].profile_fields["x"] = 2;
  redis.boards["b"].held = {"x"};
  redis.letters["t:events:dead"] = {{"b", "x"}, {"b", "y"}, {"other", "x"}};

  const Erasure e = moderation.erase("x");
  ASSERT_EQ(e.boards.size(), 1U);
  const BoardErasure& b = e.boards[0];
  EXPECT_EQ(b.board, "b");
  EXPECT_EQ(b.profiles, 4);  // PostgreSQL's rows and Redis's fields
  EXPECT_EQ(b.bans, 1);
  EXPECT_EQ(b.held, 1);
  ASSERT_EQ(b.periods.size(), 3U);  // the archived day, today (hot), the week (cold)
  EXPECT_EQ(b.periods[0].history, 1);
  EXPECT_EQ(b.periods[1].hot, 1);
  EXPECT_EQ(b.periods[2].cold, 1);
  EXPECT_EQ(e.dead_letters, 2);  // every board's with the glob "*"
  EXPECT_EQ(e.earlier_requests, 0);
  EXPECT_EQ(e.member_hash.size(), 64U);
  // The audit row first, E2 and E3 under the board's profile lock, the audit finished last.
  EXPECT_EQ(postgres.log.front(), "audit begin");
  EXPECT_EQ(postgres.log.back(), "audit finish");
  const auto at = [&](const std::string& what) {
    return std::find(postgres.log.begin(), postgres.log.end(), what) - postgres.log.begin();
  };
  EXPECT_LT(at("lock profiles b"), at("E2 b"));
  EXPECT_LT(at("E2 b"), at("unlock profiles b"));
  ASSERT_EQ(postgres.audits.size(), 1U);
  EXPECT_EQ(postgres.audits[0].boards.at("b"), b.total());
  EXPECT_TRUE(postgres.audits[0].finished);

  const Erasure again = moderation.erase("x");
  EXPECT_EQ(again.total(), 0);
  EXPECT_EQ(again.earlier_requests, 1);
  EXPECT_EQ(again.member_hash, e.member_hash);         // one key for the deployment
  EXPECT_EQ(redis.letters["t:events:dead"].size(), 1U);  // y's letter stays
}

TEST_F(ModerationTest, ADryRunCountsWhatAnErasureWouldTakeAndChangesNothing) {
  const Period today = current("daily");
  live("daily", today, {"x"}, {"x"});
  postgres.profiles[{"b", "x"}] = 1;
  redis.listed = {"b"};
  EraseOptions dry;
  dry.dry_run = true;
  const Erasure e = moderation.erase("x", dry);
  EXPECT_TRUE(e.dry_run);
  ASSERT_EQ(e.boards.size(), 1U);
  EXPECT_EQ(e.boards[0].profiles, 1);
  ASSERT_EQ(e.boards[0].periods.size(), 1U);
  EXPECT_EQ(e.boards[0].periods[0].hot, 1);
  EXPECT_EQ(e.boards[0].periods[0].cold, 1);
  EXPECT_EQ(hot_in("daily", today).count("x"), 1U);
  EXPECT_EQ(cold_in("daily", today).count("x"), 1U);
  EXPECT_EQ(postgres.profiles.size(), 1U);
  EXPECT_TRUE(postgres.audits.empty());  // no audit row, no lock
  EXPECT_EQ(std::count(postgres.log.begin(), postgres.log.end(), "lock profiles b"), 0);
}

TEST_F(ModerationTest, ABoardNoEntryCoversLeavesTheRequestUnfinishedAndNamesIt) {
  live("daily", current("daily"), {"x"});
  redis.listed = {"b", "retired"};
  redis.boards["retired"].profile_fields["x"] = 1;
  try {
    moderation.erase("x");
    ADD_FAILURE() << "a board no entry covers was not reported";
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find("'retired'"), std::string::npos) << e.what();
  }
  // Everything else went; the audit row stays unfinished, so a rerun is on record.
  EXPECT_EQ(hot_in("daily", current("daily")).count("x"), 0U);
  ASSERT_EQ(postgres.audits.size(), 1U);
  EXPECT_FALSE(postgres.audits[0].finished);
}

TEST_F(ModerationTest, AnErasureNeedsPostgresAndAValidRequest) {
  Moderation redis_only(config, Clock(now), redis, nullptr);
  EXPECT_THROW(redis_only.erase("x"), UsageError);
  EraseOptions bad;
  bad.boards = "game boards";  // a space: no board name has one
  EXPECT_THROW(moderation.erase("x", bad), UsageError);
  EXPECT_THROW(moderation.erase(""), UsageError);
  EXPECT_TRUE(postgres.audits.empty());
}

// --- reset and drop --------------------------------------------------------------------

TEST_F(ModerationTest, AResetEmptiesBothTiersOfThePeriodUnderItsLock) {
  const Period today = current("daily");
  live("daily", today, {"x", "y"}, {"z"});
  const Reset r = moderation.reset("b", "daily");
  EXPECT_EQ(r.hot, 2);
  EXPECT_EQ(r.cold, 1);
  EXPECT_EQ(postgres.log,
            (std::vector<std::string>{"lock daily " + today.id, "T1", "unlock daily " + today.id}));
  EXPECT_EQ(redis.log, (std::vector<std::string>{"T2 b daily " + today.id}));
  EXPECT_TRUE(redis.boards["b"].registry.empty());
  // Idempotent.
  EXPECT_EQ(moderation.reset("b", "daily").total(), 0);
}

TEST_F(ModerationTest, AResetRefusesAPeriodThatIsNoLongerLiveAndTouchesNothing) {
  const Period today = current("daily");
  live("daily", today, {"x"}, {"z"});
  redis.boards["b"].phases[{"daily", today.id}] = hot::PeriodPhase::frozen;
  EXPECT_THROW(moderation.reset("b", "daily"), RefusedError);
  EXPECT_TRUE(postgres.log.empty());  // refused before its lock was awaited
  redis.boards["b"].phases.clear();
  // PostgreSQL says archived: refused under the lock, which is released.
  postgres.closed[RowsOf{"b", "daily", today.id}] = "archived";
  EXPECT_THROW(moderation.reset("b", "daily"), RefusedError);
  EXPECT_EQ(postgres.log,
            (std::vector<std::string>{"lock daily " + today.id, "unlock daily " + today.id}));
  EXPECT_EQ(hot_in("daily", today).size(), 1U);
  EXPECT_EQ(cold_in("daily", today).size(), 1U);
}

TEST_F(ModerationTest, ADropEmptiesEveryLivePeriodThenTheBoardsKeysAndWithHistoryItsHistory) {
  const Period today = current("daily");
  const Period week = current("weekly");
  live("daily", today, {"x"});
  live("weekly", week, {}, {"y"});
  postgres.cold_rows[RowsOf{"b", "daily", "2026-11-19"}] = {"z"};  // Redis forgot it
  postgres.history[RowsOf{"b", "daily", "2026-11-01"}] = {"a", "b"};
  postgres.profiles[{"b", "x"}] = 1;
  redis.listed = {"b"};
  redis.boards["b"].profile_fields["x"] = 2;
  // A period registered while the drop ran: its keys wait until it was emptied too.
  const Period later =
      period_containing(*board().period("daily"), *board().zone, now + std::chrono::hours(24));
  redis.appearing = {{{"daily", later.id, later.end}}};

  const Drop d = moderation.drop("b", true);
  EXPECT_TRUE(d.history);
  // 2026-11-19, today, the week, the period that appeared, and the archived day's history.
  ASSERT_EQ(d.periods.size(), 5U);
  EXPECT_EQ(d.periods.back().history, 2);
  EXPECT_TRUE(d.periods.back().archived);
  EXPECT_EQ(d.profiles, 3);
  EXPECT_EQ(d.keys, 3);
  EXPECT_TRUE(redis.listed.empty());
  EXPECT_TRUE(postgres.history.empty());
  EXPECT_EQ(redis.log.back(), "forget b");
  EXPECT_EQ(std::count(redis.log.begin(), redis.log.end(), "drop keys b"), 2);
}

TEST_F(ModerationTest, ADropWhoseBoardKeepsGainingPeriodsGivesUpAndDropHistoryNeedsPostgres) {
  live("daily", current("daily"), {"x"});
  for (int i = 1; i <= 12; ++i) {
    const Period next = period_containing(*board().period("daily"), *board().zone,
                                          now + std::chrono::hours(24 * i));
    redis.appearing.push_back({{"daily", next.id, next.end}});
  }
  EXPECT_THROW(moderation.drop("b", false), Error);
  Moderation redis_only(config, Clock(now), redis, nullptr);
  EXPECT_THROW(redis_only.drop("b", true), UsageError);
  EXPECT_THROW(moderation.drop("nope", false), UsageError);
}

}  // namespace
}  // namespace bk::service
