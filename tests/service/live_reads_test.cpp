// service::LiveReads and service::Profiles against in-memory tiers (fake_tiers.h): the
// decisions of a read of an open period without Redis or PostgreSQL. Merged ranks across the
// hot/cold boundary, stale cold rows, cursors after a row that moved, counts of a spilled
// period, where each profile field comes from, and cold ranks from memory.
#include "service/live_reads.h"

#include <gtest/gtest.h>

#include "config/config.h"
#include "fake_tiers.h"
#include "server_free_config.h"
#include "service/cold_index.h"
#include "service/reads.h"
#include "service/tier_adapters.h"

namespace bk::service {
namespace {

using testing::FakePostgres;
using testing::FakeRedis;

const char* kBoards = R"(  - name: flat
    periods: [daily]
    max_points: 1000
    tie_break: none
    retention: {default: 30d}
  - name: pts
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
  - name: tiered
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
    tiers: [{name: first, top: 1}, {name: half, top: "50%"}, {name: rich, min_points: 40}]
)";

class LiveReadsTest : public ::testing::Test {
 protected:
  const Instant now = *parse_rfc3339("2026-11-20T12:00:00Z");
  Config config = testing::server_free_config(kBoards);
  FakeRedis redis;
  FakePostgres postgres;
  std::int64_t retries = 0;
  Profiles profiles{config.redis.key_prefix, redis, postgres};
  LiveReads reads{config, Clock(now), redis, postgres, profiles, retries};

  PeriodRef period(const std::string& board) {
    return resolve_period(config, board, "daily", std::nullopt, now);
  }
  hot::PeriodKeys keys(const PeriodRef& ref) {
    return {hot::BoardKeys(config.redis.key_prefix, ref.board), ref.spec->name, ref.period.id};
  }
  // The listing score of `points` reached `minute` minutes into the period.
  std::int64_t encoded(const PeriodRef& ref, std::int64_t points, int minute) {
    return ScoreCodec(ref.config->layout_for(*ref.spec))
        .encode(points, ref.period.start + std::chrono::minutes(minute), ref.period.start);
  }
  void hot(const PeriodRef& ref, const std::string& member, std::int64_t points, int minute = 0) {
    redis.period(keys(ref)).live.push_back({member, encoded(ref, points, minute)});
  }
  void cold(const PeriodRef& ref, const std::string& member, std::int64_t points, int minute = 0) {
    postgres.rows[FakePostgres::name({ref.board, ref.spec->name, ref.period.id})].push_back(
        {member, encoded(ref, points, minute), points, std::nullopt, 1});
  }
  // The period has spilled; hot members scored below `bound` are listed before every cold one.
  void spilled(const PeriodRef& ref, std::optional<std::int64_t> bound = std::nullopt) {
    redis.period(keys(ref)).spilled = true;
    redis.period(keys(ref)).cold_bound = bound;
  }
  static std::vector<std::pair<std::string, std::int64_t>> ranked(
      const std::vector<Standing>& rows) {
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const Standing& s : rows) out.emplace_back(s.member, s.rank);
    return out;
  }
  using Ranked = std::vector<std::pair<std::string, std::int64_t>>;
};

TEST_F(LiveReadsTest, MergedRanksAcrossTheBoundaryShareTiesWithoutTieBreak) {
  const PeriodRef ref = period("flat");
  hot(ref, "a", 100);
  hot(ref, "b", 80);
  cold(ref, "c", 90);
  cold(ref, "d", 80);
  cold(ref, "e", 50);
  spilled(ref);
  EXPECT_EQ(ranked(reads.top(ref, 0, 10)),
            (Ranked{{"a", 1}, {"c", 2}, {"b", 3}, {"d", 3}, {"e", 5}}));
  EXPECT_EQ(ranked(reads.top(ref, 3, 2)), (Ranked{{"d", 3}, {"e", 5}}));
  EXPECT_EQ(reads.rank(ref, "d")->rank, 3);
  EXPECT_EQ(reads.rank(ref, "d")->points, 80);
  EXPECT_EQ(ranked(reads.around(ref, "b", 1)), (Ranked{{"c", 2}, {"b", 3}, {"d", 3}}));
  const auto found = reads.ranks(ref, {"e", "b", "nobody"});
  ASSERT_TRUE(found[0] && found[1]);
  EXPECT_EQ(found[0]->rank, 5);
  EXPECT_EQ(found[1]->rank, 3);
  EXPECT_FALSE(found[2]);
}

TEST_F(LiveReadsTest, MergedRanksAcrossTheBoundaryBreakTiesFirstCome) {
  const PeriodRef ref = period("pts");
  hot(ref, "a", 100, 1);
  hot(ref, "b", 80, 30);  // reached 80 later than d
  cold(ref, "c", 90, 5);
  cold(ref, "d", 80, 10);
  cold(ref, "e", 50, 2);
  spilled(ref);
  EXPECT_EQ(ranked(reads.top(ref, 0, 10)),
            (Ranked{{"a", 1}, {"c", 2}, {"d", 3}, {"b", 4}, {"e", 5}}));
  EXPECT_EQ(reads.rank(ref, "b")->rank, 4);
  EXPECT_EQ(ranked(reads.around(ref, "d", 1)), (Ranked{{"c", 2}, {"d", 3}, {"b", 4}}));
  EXPECT_EQ(reads.ranks(ref, {"d"})[0]->rank, 3);
}

TEST_F(LiveReadsTest, AMemberHotAgainWithAnOldColdRowCountsOnceAtItsHotScore) {
  const PeriodRef ref = period("flat");
  hot(ref, "a", 100);
  hot(ref, "b", 95);  // hot again: its cold row (97 points, better than its hot score) is stale
  cold(ref, "b", 97);
  cold(ref, "c", 50);
  spilled(ref);
  redis.period(keys(ref)).stale = {"b"};
  EXPECT_EQ(reads.count(ref), 3);
  const auto rows = reads.top(ref, 0, 10);
  EXPECT_EQ(ranked(rows), (Ranked{{"a", 1}, {"b", 2}, {"c", 3}}));
  EXPECT_EQ(rows[1].points, 95);
  EXPECT_EQ(reads.rank(ref, "b")->points, 95);
  const auto found = reads.ranks(ref, {"c", "b"});
  EXPECT_EQ(found[0]->rank, 3);
  EXPECT_EQ(found[1]->rank, 2);
  EXPECT_EQ(ranked(reads.around(ref, "c", 5)), (Ranked{{"a", 1}, {"b", 2}, {"c", 3}}));
  EXPECT_EQ(reads.first_page(ref, 10).total, 3);
}

// A removed member of a spilled period is a tombstone (in the stale set, not hot): its cold
// row is void, so no read lists it, counts it or ranks anyone below it.
TEST_F(LiveReadsTest, ATombstonesColdRowIsNoMember) {
  const PeriodRef ref = period("flat");
  hot(ref, "a", 100);
  cold(ref, "b", 97);  // removed
  cold(ref, "c", 50);
  spilled(ref);
  redis.period(keys(ref)).stale = {"b"};
  EXPECT_EQ(reads.count(ref), 2);
  EXPECT_EQ(ranked(reads.top(ref, 0, 10)), (Ranked{{"a", 1}, {"c", 2}}));
  EXPECT_FALSE(reads.rank(ref, "b"));
  const auto found = reads.ranks(ref, {"b", "c"});
  EXPECT_FALSE(found[0]);
  ASSERT_TRUE(found[1]);
  EXPECT_EQ(found[1]->rank, 2);
  EXPECT_TRUE(reads.around(ref, "b", 5).empty());
  EXPECT_EQ(ranked(reads.around(ref, "c", 5)), (Ranked{{"a", 1}, {"c", 2}}));
  const auto first = reads.first_page(ref, 1);
  EXPECT_EQ(first.total, 2);
  ASSERT_EQ(ranked(first.rows), (Ranked{{"a", 1}}));
  const auto next = reads.listed_after(ref, first.rows.back(), 10);
  EXPECT_EQ(ranked(next.rows), (Ranked{{"c", 2}}));
}

TEST_F(LiveReadsTest, TheNextPageFollowsAMarkThatMovedOrLeft) {
  const PeriodRef ref = period("flat");
  hot(ref, "a", 100);
  hot(ref, "b", 90);
  cold(ref, "c", 80);
  cold(ref, "d", 70);
  cold(ref, "e", 60);
  spilled(ref);
  const auto first = reads.first_page(ref, 2);
  EXPECT_EQ(first.total, 5);
  ASSERT_EQ(ranked(first.rows), (Ranked{{"a", 1}, {"b", 2}}));
  const Standing mark = first.rows.back();

  redis.period(keys(ref)).live = {};  // b moves below c: the page starts after b's old row
  hot(ref, "a", 100);
  hot(ref, "b", 75);
  auto next = reads.listed_after(ref, mark, 10);
  EXPECT_EQ(next.position, 1);
  EXPECT_EQ(ranked(next.rows), (Ranked{{"c", 2}, {"b", 3}, {"d", 4}, {"e", 5}}));

  redis.period(keys(ref)).live = {};  // b leaves: nobody after the mark is skipped
  hot(ref, "a", 100);
  next = reads.listed_after(ref, mark, 2);
  EXPECT_EQ(next.position, 1);
  EXPECT_EQ(ranked(next.rows), (Ranked{{"c", 2}, {"d", 3}}));
}

TEST_F(LiveReadsTest, TheCountOfASpilledPeriodIsItsHotMembersAndLiveColdRows) {
  const PeriodRef ref = period("pts");
  hot(ref, "a", 100);
  hot(ref, "b", 90);
  cold(ref, "b", 20);
  cold(ref, "c", 30);
  cold(ref, "d", 10);
  redis.period(keys(ref)).stale = {"b"};
  EXPECT_EQ(reads.count(ref), 2);  // not spilled: Redis alone answers
  spilled(ref);
  EXPECT_EQ(reads.count(ref), 4);
  EXPECT_EQ(reads.first_page(ref, 1).total, 4);
}

TEST_F(LiveReadsTest, TheHotPartOfASpilledPeriodIsReadWithoutPostgres) {
  const PeriodRef ref = period("pts");
  hot(ref, "a", 100);
  hot(ref, "b", 20);
  cold(ref, "c", 50);
  spilled(ref, encoded(ref, 50, 0));  // a is listed before every cold member
  postgres.reachable = false;
  const auto page = reads.first_page(ref, 1);
  EXPECT_EQ(ranked(page.rows), (Ranked{{"a", 1}}));
  EXPECT_FALSE(page.total);  // the cold members cannot be counted
  EXPECT_EQ(ranked(reads.top(ref, 0, 1)), (Ranked{{"a", 1}}));
  EXPECT_THROW(reads.top(ref, 0, 2), UnavailableError);
}

// service::Reads over the same fakes: the tiers of open periods.
class TieredReadsTest : public LiveReadsTest {
 protected:
  PostgresTier unused{[] { return false; },
                      []() -> cold::ColdStore& { throw UnavailableError("not in this test"); }};
  Reads front{config, Clock(now), reads, unused};
  PeriodRef ref = period("tiered");

  static std::vector<std::string> tiers(const std::vector<Standing>& rows) {
    std::vector<std::string> out;
    for (const Standing& s : rows) {
      out.push_back(s.member + "=" + s.tier.value_or("-") +
                    (s.unavailable.empty() ? "" : "(" + s.unavailable.front() + ")"));
    }
    return out;
  }
};

TEST_F(TieredReadsTest, APercentTierCountsHotAndColdMembers) {
  hot(ref, "a", 100);
  hot(ref, "b", 90);
  cold(ref, "c", 50);
  cold(ref, "d", 30);
  cold(ref, "e", 20);
  spilled(ref);
  // 5 members: 50% admits ranks up to 3.
  const std::vector<std::string> want{"a=first", "b=half", "c=half", "d=-", "e=-"};
  EXPECT_EQ(tiers(front.top_at({ref}, 0, 10)), want);
  EXPECT_EQ(tiers(front.top({ref}, std::nullopt, 10).rows), want);
  std::vector<std::string> ranked;
  for (const auto& s : front.ranks({ref}, {"e", "c", "a"}))
    ranked.push_back(s->member + "=" + s->tier.value_or("-"));
  EXPECT_EQ(ranked, (std::vector<std::string>{"e=-", "c=half", "a=first"}));
  EXPECT_EQ(tiers(front.around({ref}, "d", 1)), (std::vector<std::string>{"c=half", "d=-", "e=-"}));
}

// Ranks of spilled members take the percent rule's count in their own cold snapshot (one
// statement more there, once a spill generation), not in a second one for the cold summary; a
// stale cold row of a hot member is no member in that count (counted, 5 members would put c in
// "half").
TEST_F(TieredReadsTest, RanksOfSpilledMembersCountThePeriodInTheirOwnColdSnapshot) {
  hot(ref, "a", 100);
  hot(ref, "b", 90);
  cold(ref, "b", 95);  // stale
  cold(ref, "c", 35);
  cold(ref, "d", 30);
  spilled(ref);
  redis.period(keys(ref)).stale = {"b"};
  const auto ranked = [&] {
    std::vector<std::string> out;
    for (const auto& s : front.ranks({ref}, {"c", "b", "d"}))
      out.push_back(s->member + "=" + s->tier.value_or("-"));
    return out;
  };
  postgres.snapshots = 0;
  // 4 members: 50% admits ranks up to 2.
  const std::vector<std::string> want{"c=-", "b=half", "d=-"};
  EXPECT_EQ(ranked(), want);
  EXPECT_EQ(postgres.snapshots, 1);
  EXPECT_EQ(postgres.counts, 1);
  // Again in the same spill generation: the count is kept, not taken again.
  EXPECT_EQ(ranked(), want);
  EXPECT_EQ(postgres.snapshots, 2);
  EXPECT_EQ(postgres.counts, 1);
}

TEST_F(TieredReadsTest, WithoutTheCountAPercentTierIsUnavailableAndTheOtherRulesStillAnswer) {
  hot(ref, "a", 100);
  hot(ref, "b", 90);
  hot(ref, "f", 80);
  cold(ref, "c", 50);
  spilled(ref, encoded(ref, 50, 0));  // a, b and f are listed before every cold member
  postgres.reachable = false;         // so the period's members cannot be counted
  const auto page = front.top({ref}, std::nullopt, 2);
  EXPECT_FALSE(page.total);
  // a is decided by `first` before the percent rule; b needs the count.
  EXPECT_EQ(tiers(page.rows), (std::vector<std::string>{"a=first", "b=-(tier)"}));
}

// A write's standings (Reads::update_standings, from its own script call): on a tiered board
// the member's tier before and after, the period counted once for the percent rule; on an
// untiered board no tier and nothing read beyond what the script gave.
TEST_F(TieredReadsTest, AWritesStandingsCarryTiersAndAnUntieredBoardReadsNothingMore) {
  hot(ref, "a", 100);
  hot(ref, "b", 90);  // after its write of 55: 35 -> 90
  hot(ref, "c", 50);
  hot(ref, "d", 30);
  hot::HotStanding facts;
  facts.before = encoded(ref, 35, 0);
  facts.before_better = 2;  // a, c: rank 3 of 4, past 50% (rank 2), below 40 points
  facts.after = encoded(ref, 90, 0);
  facts.after_better = 1;  // a: rank 2
  redis.state_reads = 0;
  auto s = front.update_standings(ref, "b", facts);
  ASSERT_TRUE(s && s->before && s->after);
  EXPECT_EQ(s->before->rank, 3);
  EXPECT_EQ(s->before->tier.value_or("-"), "-");
  EXPECT_EQ(s->after->rank, 2);
  EXPECT_EQ(s->after->tier.value_or("-"), "half");
  EXPECT_EQ(redis.state_reads, 1);  // the count, once for both
  const PeriodRef flat = period("flat");
  hot(flat, "a", 100);
  hot(flat, "b", 90);
  facts.before = encoded(flat, 35, 0);
  facts.before_better = 1;
  facts.after = encoded(flat, 90, 0);
  redis.state_reads = 0;
  s = front.update_standings(flat, "b", facts);
  ASSERT_TRUE(s && s->before && s->after);
  EXPECT_EQ(s->after->rank, 2);
  EXPECT_FALSE(s->before->tier);
  EXPECT_FALSE(s->after->tier);
  EXPECT_EQ(redis.state_reads, 0);
}

class ProfileFallbackTest : public LiveReadsTest {
 protected:
  hot::BoardKeys board{config.redis.key_prefix, "pts"};
  PeriodRef ref = period("pts");
  void SetUp() override {
    hot(ref, "a", 100);
    hot(ref, "b", 90);
  }
};

TEST_F(ProfileFallbackTest, RedisHasTheProfile) {
  redis.hashes[board.names()]["a"] = "Ann";
  redis.hashes[board.metadata()]["a"] = R"({"lvl":3})";
  const auto rows = reads.top(ref, 0, 2);
  EXPECT_EQ(rows[0].name, "Ann");
  EXPECT_EQ(rows[0].metadata, R"({"lvl":3})");
  EXPECT_FALSE(rows[1].name);
  EXPECT_TRUE(rows[1].unavailable.empty());
  EXPECT_EQ(postgres.profile_reads, 0);  // no marker says a field moved
}

TEST_F(ProfileFallbackTest, AFieldThatMovedToPostgresIsFetchedFromIt) {
  redis.hashes[board.names()][""] = "";  // the marker: some names are in PostgreSQL
  redis.hashes[board.names()]["a"] = "Ann";
  postgres.profile_rows["pts"] = {{"b", "Bo", std::nullopt}, {"a", "stale", std::nullopt}};
  const auto rows = reads.top(ref, 0, 2);
  EXPECT_EQ(rows[0].name, "Ann");  // Redis first
  EXPECT_EQ(rows[1].name, "Bo");
  EXPECT_TRUE(rows[1].unavailable.empty());
  EXPECT_EQ(postgres.profile_reads, 1);
  const auto page = reads.first_page(ref, 2);  // profiles read with the head
  EXPECT_EQ(page.rows[1].name, "Bo");
}

TEST_F(ProfileFallbackTest, WhenPostgresIsUnreachableTheFieldIsListedUnavailable) {
  redis.hashes[board.metadata()][""] = "";  // some metadata is in PostgreSQL
  redis.hashes[board.names()]["b"] = "Bo";
  redis.hashes[board.metadata()]["a"] = "{}";
  postgres.reachable = false;
  const auto rows = reads.top(ref, 0, 2);
  ASSERT_EQ(rows.size(), 2u);  // the scores are read all the same
  EXPECT_EQ(rows[0].metadata, "{}");
  EXPECT_TRUE(rows[0].unavailable.empty());
  EXPECT_EQ(rows[1].name, "Bo");
  EXPECT_FALSE(rows[1].metadata);
  EXPECT_EQ(rows[1].unavailable, (std::vector<std::string>{"metadata"}));
}

TEST_F(LiveReadsTest, ProfilesAreWrittenForUpdatesThatCountedAndARefusedHashFailsOnlyItsBoard) {
  const auto update = [](const std::string& board, const std::string& member,
                         std::optional<std::string> name) {
    Update u;
    u.board = board;
    u.member = member;
    u.value = 1;
    u.name = std::move(name);
    return u;
  };
  std::vector<Update> updates{update("pts", "a", "Ann"), update("flat", "b", "Bo"),
                              update("pts", "c", "Cy"),
                              // no profile: its result stands whatever the hash
                              update("flat", "d", std::nullopt)};
  updates[0].meta = R"({ "lvl" : 3 })";
  std::vector<UpdateResult> results(4);
  results[2].status = UpdateStatus::refused;  // not applied: its profile is not written
  redis.refuse["flat"] = "key t:{flat}:names: WRONGTYPE";
  profiles.write(updates, results);
  ASSERT_EQ(redis.written.count("pts"), 1u);
  const hot::ProfileWrites& pts = redis.written["pts"];
  EXPECT_EQ(pts.names, (std::vector<std::pair<std::string, std::string>>{{"a", "Ann"}}));
  EXPECT_EQ(pts.metadata,
            (std::vector<std::pair<std::string, std::string>>{{"a", R"({"lvl":3})"}}));
  EXPECT_EQ(results[0].status, UpdateStatus::applied);
  EXPECT_EQ(results[1].status, UpdateStatus::failed);
  EXPECT_NE(results[1].reason.find("refused the profile on board 'flat'"), std::string::npos)
      << results[1].reason;
  EXPECT_EQ(results[2].status, UpdateStatus::refused);
  EXPECT_EQ(results[3].status, UpdateStatus::applied);
}

// A write's standings from what its script read (hot::HotStanding): Redis's counts alone within
// the hot part; beyond it, the cold rows that are members (stale ones skipped) are counted
// too; a duplicate's member that is not hot, or a spill meanwhile, sends the caller to ranks().
TEST_F(LiveReadsTest, UpdateStandingsAddTheColdMembersBetterOnlyBeyondTheHotPart) {
  const PeriodRef ref = period("flat");
  cold(ref, "c", 90);
  cold(ref, "x", 85);  // removed (a tombstone): its row is void
  cold(ref, "d", 70);
  cold(ref, "b", 60);  // b's row, stale: b was rehydrated from it and is hot at 75
  cold(ref, "e", 50);
  spilled(ref, encoded(ref, 90, 0));
  hot::HotStanding facts;
  facts.spilled = true;
  facts.cold_bound = encoded(ref, 90, 0);
  facts.gen = redis.period(keys(ref)).gen;
  facts.before = encoded(ref, 60, 0);  // its cold row
  facts.before_better = 1;             // a, hot at 100
  facts.after = encoded(ref, 75, 0);
  facts.after_better = 1;
  facts.hot_and_stale = std::vector<std::string>{"b", "x"};
  auto s = reads.update_standings(ref, "b", facts);
  ASSERT_TRUE(s && s->before && s->after);
  EXPECT_EQ(s->before->rank, 4);  // a, c, d
  EXPECT_EQ(s->before->points, 60);
  EXPECT_EQ(s->after->rank, 3);  // a, c
  EXPECT_EQ(s->after->points, 75);
  // Within the hot part (below the bound): Redis's count alone, no stale set needed.
  facts.before = encoded(ref, 95, 0);
  facts.after = encoded(ref, 99, 0);
  facts.hot_and_stale.reset();
  s = reads.update_standings(ref, "b", facts);
  ASSERT_TRUE(s && s->before && s->after);
  EXPECT_EQ(s->before->rank, 2);
  EXPECT_EQ(s->after->rank, 2);
  // Not hot after it in a spilled period: it may be cold.
  facts.after.reset();
  EXPECT_FALSE(reads.update_standings(ref, "b", facts));
  // A spill since the script read (PostgreSQL's rows are those of now): not answered.
  facts.before = encoded(ref, 60, 0);
  facts.after = encoded(ref, 75, 0);
  facts.hot_and_stale = std::vector<std::string>{"b"};
  facts.gen = "7:0";
  redis.period(keys(ref)).gen = "8:0";
  EXPECT_FALSE(reads.update_standings(ref, "b", facts));
  // A period that never spilled: Redis alone.
  facts.spilled = false;
  facts.cold_bound.reset();
  s = reads.update_standings(ref, "b", facts);
  ASSERT_TRUE(s && s->after);
  EXPECT_EQ(s->after->rank, 2);
}

}  // namespace
}  // namespace bk::service

namespace bk::service {
namespace {

// LiveReads sharing cold ranks (service/cold_index.h): once loaded, a spilled period's reads
// need no PostgreSQL while its spill generation lasts, through rehydrations; a spill moves it,
// and the index is no longer used.
class LiveColdRanksTest : public LiveReadsTest {
 protected:
  std::shared_ptr<ColdIndexes> cache = std::make_shared<ColdIndexes>(std::size_t{1} << 20);
  PeriodRef ref = period("pts");

  void SetUp() override {
    reads.share_cold_ranks(cache);
    hot(ref, "h1", 900, 1);
    hot(ref, "h2", 500, 2);
    for (int i = 0; i < 50; ++i) cold(ref, "c" + std::to_string(i), 800 - i * 10, 3);
    spilled(ref);
    redis.period(keys(ref)).gen = "4:0";
  }
};

TEST_F(LiveColdRanksTest, WhileTheGenerationLastsReadsNeedNoPostgres) {
  const auto from_postgres = reads.rank(ref, "c30");  // a miss asks for a load
  ASSERT_TRUE(from_postgres);
  ASSERT_TRUE(cache->next(std::chrono::milliseconds(0)));
  ASSERT_TRUE(reads.load_cold_ranks(ref));
  postgres.reachable = false;
  const auto from_memory = reads.rank(ref, "c30");
  ASSERT_TRUE(from_memory);
  EXPECT_EQ(from_memory->rank, from_postgres->rank);
  EXPECT_EQ(from_memory->points, from_postgres->points);
  // h2: 1 + h1 + the 30 cold rows above 500 (c30 has 500 too, reached later).
  EXPECT_EQ(reads.ranks(ref, {"c49", "h2", "nobody"})[1]->rank, 32);
  EXPECT_EQ(reads.around(ref, "c10", 1).size(), 3u);
  EXPECT_EQ(reads.top(ref, 40, 5).front().rank, 41);
  EXPECT_EQ(reads.count(ref), 52);
  // A rehydration (the rehydrate generation moves, c5 enters the stale set) needs no load.
  redis.period(keys(ref)).gen = "4:1";
  redis.period(keys(ref)).stale = {"c5"};
  hot(ref, "c5", 500, 1);
  EXPECT_EQ(reads.count(ref), 52);
  // 1 + h1 + the 29 cold rows above 500 but its own (stale): c5 reached 500 before h2.
  EXPECT_EQ(reads.rank(ref, "c5")->rank, 31);
  // A spill moves the spill generation: that index is no longer used.
  redis.period(keys(ref)).gen = "5:1";
  EXPECT_THROW(reads.rank(ref, "c30"), UnavailableError);
  EXPECT_GT(cache->stats().hits, 0);
}

TEST_F(LiveColdRanksTest, ABudgetForOnePeriodDropsTheLeastRecentlyReadAndReadsStayExact) {
  // A second spilled period, on the flat board (ties share ranks), of the same size.
  const PeriodRef flat = period("flat");
  hot(flat, "f-hot", 900);
  for (int i = 0; i < 50; ++i) cold(flat, "f" + std::to_string(i), 800 - (i / 2) * 10);
  spilled(flat);
  redis.period(keys(flat)).gen = "9:0";
  const auto want_pts = reads.ranks(ref, {"c7", "c42", "h2"});
  const auto want_flat = reads.ranks(flat, {"f7", "f42", "f-hot"});
  // Room for one of the two indexes: loading the second drops the first.
  ASSERT_TRUE(cache->next(std::chrono::milliseconds(0)));
  ASSERT_TRUE(reads.load_cold_ranks(ref));
  const std::size_t one = cache->stats().bytes;
  cache = std::make_shared<ColdIndexes>(one + one / 2);
  reads.share_cold_ranks(cache);
  ASSERT_TRUE(reads.load_cold_ranks(ref));
  ASSERT_TRUE(reads.load_cold_ranks(flat));
  EXPECT_EQ(cache->stats().evictions, 1);
  EXPECT_EQ(cache->stats().periods, 1u);
  const auto rank_of = [](const std::vector<std::optional<Standing>>& rows) {
    std::vector<std::int64_t> out;
    for (const auto& r : rows) out.push_back(r ? r->rank : -1);
    return out;
  };
  const std::int64_t misses = cache->stats().misses;
  EXPECT_EQ(rank_of(reads.ranks(ref, {"c7", "c42", "h2"})), rank_of(want_pts));  // PostgreSQL
  EXPECT_GT(cache->stats().misses, misses);
  const std::int64_t hits = cache->stats().hits;
  EXPECT_EQ(rank_of(reads.ranks(flat, {"f7", "f42", "f-hot"})), rank_of(want_flat));  // memory
  EXPECT_GT(cache->stats().hits, hits);
  EXPECT_EQ(rank_of(want_flat), (std::vector<std::int64_t>{8, 44, 1}));  // f6 and f7 tie at 8
}

// The list of boards (GET /v1/boards): the boards config entries name (not globs) and those
// Redis holds, each once, by name, a page at a time after the last one listed.
TEST(LiveReadsBoardsTest, ListsNamedAndRedisBoardsOnceByNameAPageAtATime) {
  const Config config = testing::server_free_config(R"(  - name: b
    periods: [daily]
    max_points: 10
    retention: {default: 30d}
  - name: "game:*"
    periods: [weekly]
    max_points: 10
    retention: {default: 30d}
  - name: a
    periods: [daily, weekly]
    max_points: 10
    retention: {default: 30d}
)");
  FakeRedis redis;
  FakePostgres postgres;
  std::int64_t retries = 0;
  Profiles profiles{config.redis.key_prefix, redis, postgres};
  LiveReads reads{config, Clock(*parse_rfc3339("2026-11-20T12:00:00Z")), redis, postgres, profiles,
                  retries};
  redis.held_boards = {"game:x", "b", "old"};  // "old": no entry covers it any more
  const auto names = [](const BoardsPage& page) {
    std::vector<std::string> out;
    for (const BoardListing& b : page.boards) {
      out.push_back(b.board + (b.in_redis ? "+redis" : "") + "@" +
                    (b.entry != nullptr ? b.entry->pattern : "none"));
    }
    return out;
  };
  const BoardsPage first = reads.boards(std::nullopt, 2);
  EXPECT_EQ(names(first), (std::vector<std::string>{"a@a", "b+redis@b"}));
  ASSERT_EQ(first.next, "b");
  const BoardsPage second = reads.boards(first.next, 2);
  EXPECT_EQ(names(second), (std::vector<std::string>{"game:x+redis@game:*", "old+redis@none"}));
  EXPECT_EQ(second.next, std::nullopt);  // nothing follows: no empty last page
  EXPECT_TRUE(reads.boards(std::string("old"), 2).boards.empty());
  EXPECT_EQ(names(reads.boards(std::string("a"), 1)), (std::vector<std::string>{"b+redis@b"}));
  EXPECT_THROW(reads.boards(std::nullopt, 0), UsageError);
  EXPECT_THROW(reads.boards(std::nullopt, kMaxReadRows + 1), UsageError);
}

}  // namespace
}  // namespace bk::service
