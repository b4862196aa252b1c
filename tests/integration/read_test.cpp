// Reads against a real Redis: top (with offset), rank and around agree with each other and
// with a brute-force ranking of what was written.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "harness.h"
#include "redis/shared_link.h"
#include "service/leaderboards.h"
#include "service/reads.h"

namespace bk {
namespace {

using service::Leaderboards;
using service::Standing;
using service::Update;

const char* kBoards = R"(  - name: tied
    periods: [daily]
    tie_break: none
    max_points: 1000
    retention: {default: 3650d}
  - name: timed
    periods: [weekly]
    timezone: America/New_York
    time_resolution: s
    max_points: 1000
    retention: {default: 3660d}
)";

struct Model {
  std::int64_t points = 0;
  std::int64_t at_ms = 0;
};

// Brute force: the model sorted by the contract's order (ties on points broken by the
// earlier time unless `tie_none`, then by member bytes), and competition ranks.
std::vector<std::pair<std::string, Model>> brute_force(const std::map<std::string, Model>& model,
                                                       bool tie_none,
                                                       std::map<std::string, std::int64_t>& rank) {
  std::vector<std::pair<std::string, Model>> expected(model.begin(), model.end());
  auto better = [&](const Model& a, const Model& b) {
    if (a.points != b.points) return a.points > b.points;
    return !tie_none && a.at_ms < b.at_ms;
  };
  std::sort(expected.begin(), expected.end(), [&](const auto& a, const auto& b) {
    if (better(a.second, b.second)) return true;
    if (better(b.second, a.second)) return false;
    return a.first < b.first;
  });
  for (const auto& [member, m] : expected) {
    std::int64_t strictly_better = 0;
    for (const auto& [other, o] : expected) strictly_better += better(o, m) ? 1 : 0;
    rank[member] = strictly_better + 1;
  }
  return expected;
}

// Each member's own read and its neighbours (3 each side) agree with the full listing.
void expect_member_and_around(Leaderboards& lb, const service::PeriodRef& ref,
                              const std::vector<Standing>& all) {
  for (std::size_t pos = 0; pos < all.size(); ++pos) {
    const auto r = lb.reads().member({ref}, all[pos].member);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->rank, all[pos].rank);
    EXPECT_EQ(r->points, all[pos].points);
    EXPECT_EQ(r->achieved_at, all[pos].achieved_at);
    const auto around = lb.reads().around({ref}, all[pos].member, 3);
    const std::size_t from = pos >= 3 ? pos - 3 : 0;
    const std::size_t to = std::min(all.size(), pos + 4);
    ASSERT_EQ(around.size(), to - from) << pos;
    for (std::size_t i = 0; i < around.size(); ++i) {
      EXPECT_EQ(around[i].member, all[from + i].member);
      EXPECT_EQ(around[i].rank, all[from + i].rank);
    }
  }
}

class ReadTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ReadTest, TopRankAndAroundAgreeWithBruteForce) {
  const std::string board = GetParam();
  const bool tie_none = board == "tied";
  const std::string period = tie_none ? "daily" : "weekly";
  const std::string prefix = test::unique_prefix();
  const Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  const Instant now = *parse_rfc3339("2026-11-20T12:00:00Z");
  Leaderboards lb(config, conn, Clock(now));

  // 300 members, points in a narrow range so ties are common; times at whole seconds with
  // repeats so some members tie on both points and time.
  std::mt19937 rng(3);
  std::map<std::string, Model> model;
  std::vector<Update> updates;
  for (int i = 0; i < 3000; ++i) {
    Update u{
        board, "m" + std::to_string(rng() % 300), static_cast<std::int64_t>(rng() % 3), {}, ""};
    u.at = now - std::chrono::seconds{static_cast<int>(rng() % 50)} - std::chrono::hours{1};
    Model& m = model[u.member];
    if (m.at_ms == 0 || u.value != 0) m.at_ms = to_epoch_ms(*u.at);  // achieved_at moves on change
    m.points += u.value;
    updates.push_back(u);
  }
  for (const auto& r : lb.apply(updates))
    ASSERT_EQ(r.status, service::UpdateStatus::applied) << r.reason;

  std::map<std::string, std::int64_t> expected_rank;
  const auto expected = brute_force(model, tie_none, expected_rank);

  const auto ref = lb.resolve(board, period, std::nullopt);
  const std::vector<Standing> all = lb.reads().top_at({ref}, 0, 1000);
  ASSERT_EQ(all.size(), expected.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].member, expected[i].first) << i;
    EXPECT_EQ(all[i].points, expected[i].second.points);
    EXPECT_EQ(all[i].rank, expected_rank[all[i].member]) << all[i].member;
  }
  // top with an offset is the same slice, ranks included.
  for (std::int64_t offset : {0, 1, 17, 150, 290}) {
    const auto page = lb.reads().top_at({ref}, offset, 25);
    for (std::size_t i = 0; i < page.size(); ++i) {
      const Standing& s = all[static_cast<std::size_t>(offset) + i];
      EXPECT_EQ(page[i].member, s.member);
      EXPECT_EQ(page[i].rank, s.rank) << "offset " << offset;
    }
  }
  ASSERT_NO_FATAL_FAILURE(expect_member_and_around(lb, ref, all));
  EXPECT_FALSE(lb.reads().member({ref}, "nobody"));
  EXPECT_TRUE(lb.reads().around({ref}, "nobody", 3).empty());
}

INSTANTIATE_TEST_SUITE_P(Boards, ReadTest, ::testing::Values("tied", "timed"));

// The library bounds every read: an overflowing or board-sized request is a usage error
// naming the board period, never an overflow, a crash or a raw script error.
TEST(ReadBoundsTest, HugeCountsOffsetsAndNeighboursAreUsageErrors) {
  const std::string prefix = test::unique_prefix();
  const Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  const Instant now = *parse_rfc3339("2026-11-20T12:00:00Z");
  Leaderboards lb(config, conn, Clock(now));
  ASSERT_EQ(lb.apply(Update{"tied", "ann", 5, now, ""}).status, service::UpdateStatus::applied);
  const auto ref = lb.resolve("tied", "daily", std::nullopt);
  constexpr std::int64_t kHuge = 9223372036854775807;
  for (const auto& [offset, count] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, kHuge}, {0, service::kMaxReadRows + 1}, {kHuge - 7, 10}, {-1, 10}, {0, -1}}) {
    try {
      lb.reads().top_at({ref}, offset, count);
      ADD_FAILURE() << "top(" << offset << ", " << count << ") was not refused";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("a read of tied daily 2026-11-20: "), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(lb.reads().around({ref}, "ann", kHuge), UsageError);
  EXPECT_THROW(lb.reads().around({ref}, "ann", service::kMaxReadRows / 2 + 1), UsageError);
  // At the bounds: answered.
  EXPECT_EQ(lb.reads().top_at({ref}, 0, service::kMaxReadRows).size(), 1U);
  EXPECT_TRUE(lb.reads().top_at({ref}, service::kMaxReadOffset, 10).empty());
  EXPECT_EQ(lb.reads().around({ref}, "ann", service::kMaxReadRows / 2).size(), 1U);
}

// A page of a period that Redis alone can answer (one that never spilled) costs one round
// trip, profiles and total included: the first page and the pages after it (counted by the
// shared link that serve's workers use).
TEST(RoundTripsTest, APageThatRedisAloneAnswersCostsOneRoundTrip) {
  if (test::on_cluster()) GTEST_SKIP() << "the shared link speaks to one server";
  const Config config = test::make_config(test::unique_prefix(), kBoards);
  auto link = std::make_shared<redis::SharedLink>(redis::parse_url(test::redis_url()));
  redis::Connection conn(link);
  const Instant now = *parse_rfc3339("2026-11-20T12:00:00Z");
  Leaderboards lb(config, conn, Clock(now));
  std::vector<Update> updates;
  for (int i = 0; i < 30; ++i) {
    Update u{"tied", "m" + std::to_string(i), 100 + i, now - std::chrono::minutes{1}, ""};
    u.name = "Player " + std::to_string(i);
    updates.push_back(u);
  }
  lb.apply(updates);
  service::Reads& reads = lb.reads();  // the current period: no history needed
  const service::PeriodView view = reads.locate("tied", "daily", std::nullopt);
  const service::Page warm = reads.top(view, std::nullopt, 10);  // scripts loaded
  reads.top(view, warm.next, 10);

  const std::uint64_t before = link->stats().writes;
  const service::Page first = reads.top(view, std::nullopt, 10);
  EXPECT_EQ(link->stats().writes - before, 1U);
  ASSERT_EQ(first.rows.size(), 10U);
  EXPECT_EQ(first.total, 30);
  EXPECT_EQ(first.rows[0].name, "Player 29");
  ASSERT_TRUE(first.next);

  const std::uint64_t between = link->stats().writes;
  const service::Page second = reads.top(view, first.next, 10);
  EXPECT_EQ(link->stats().writes - between, 1U);
  ASSERT_EQ(second.rows.size(), 10U);
  EXPECT_EQ(second.total, 30);
  EXPECT_EQ(second.rows[0].rank, 11);
  EXPECT_EQ(second.rows[0].member, "m19");
  EXPECT_EQ(second.rows[0].name, "Player 19");
  EXPECT_EQ(second.rows[9].name, "Player 10");
}

}  // namespace
}  // namespace bk
