// Cursor paging while the board moves: a board is paged from its first page to its last,
// each page after the mark of the one before (what an HTTP cursor carries), again and again,
// while a writer moves chosen members back and forth across every cursor (and, on a spilled
// board, ticks spill them again and updates rehydrate them). Every member that never moved
// is listed exactly once per full paging, in listing order, and every page is in listing
// order.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "lifecycle/tick.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using service::Standing;
using service::Update;

// hot: never spills. spilled: 12 hot members, the rest cold, spilled again by ticks.
const char* kBoards = R"(  - name: hot
    periods: [daily]
    max_points: 100000
    hot_keep: 1000
    retention: {default: 3650d}
  - name: spilled
    periods: [daily]
    max_points: 100000
    hot_keep: 12
    display: 5
    retention: {default: 3650d}
)";

constexpr int kStable = 60;  // in groups of three with equal points and times (ties)
constexpr int kMovers = 4;
constexpr std::int64_t kLimit = 7;
constexpr std::int64_t kJump = 5000;  // a mover's flip: from below everyone to above everyone
constexpr int kPagings = 150;
constexpr auto kDeadline = std::chrono::seconds{90};

const Instant kNow = *parse_rfc3339("2026-11-22T12:00:00Z");
const Instant kAt = *parse_rfc3339("2026-11-22T11:00:00Z");

std::string stable(int i) {
  return "s" + std::string(i < 10 ? "0" : "") + std::to_string(i);
}

// Listed before: more points, then an earlier achieved_at, then member bytes.
bool listed_before(const Standing& a, const Standing& b) {
  if (a.points != b.points) return a.points > b.points;
  if (a.achieved_at != b.achieved_at) return a.achieved_at < b.achieved_at;
  return a.member < b.member;
}

std::string describe(const std::vector<std::vector<Standing>>& pages) {
  std::ostringstream out;
  for (const auto& page : pages) {
    out << "[";
    for (const auto& s : page) out << " " << s.member << ":" << s.points;
    out << " ]";
  }
  return out.str();
}

// What went wrong in one full paging ("" when nothing): a page out of listing order, a stable
// member missing or listed twice, or stable members out of order across pages.
std::string check_paging(const std::vector<std::vector<Standing>>& pages) {
  std::vector<std::string> stable_listed;
  for (const auto& page : pages) {
    for (std::size_t i = 1; i < page.size(); ++i) {
      if (!listed_before(page[i - 1], page[i])) return "a page out of listing order";
    }
    for (const auto& s : page) {
      if (s.member[0] == 's') stable_listed.push_back(s.member);
    }
  }
  std::vector<std::string> want;
  for (int i = 0; i < kStable; ++i) want.push_back(stable(i));
  if (stable_listed == want) return "";
  std::map<std::string, int> times;
  for (const auto& m : stable_listed) ++times[m];
  for (const auto& m : want) {
    if (times[m] != 1) return m + " listed " + std::to_string(times[m]) + " times";
  }
  return "stable members out of order across pages";
}

class PagingTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);

  void SetUp() override { cold::ColdStore(test::postgres_url(), prefix).migrate(); }

  // Stable members s00..s59 at 1000, 1000, 1000, 990, ... (equal times: ties by member
  // bytes), movers m0..m3 below them all.
  void fill(const std::string& board) {
    redis::Connection conn = test::connect_redis();
    cold::ColdStore cold(test::postgres_url(), prefix);
    service::Leaderboards lb(config, conn, Clock(kNow), &cold);
    std::vector<Update> updates;
    for (int i = 0; i < kStable; ++i)
      updates.push_back({board, stable(i), 1000 - (i / 3) * 10, kAt, ""});
    for (int i = 0; i < kMovers; ++i)
      updates.push_back({board, "m" + std::to_string(i), 100 + i, kAt, ""});
    for (const auto& r : lb.apply(updates))
      ASSERT_EQ(r.status, service::UpdateStatus::applied) << r.reason;
  }

  // Pages `board` whole again and again while a writer flips the movers between below
  // everyone and above everyone (and, with `tick`, a tick runs again and again). Returns how
  // many full pagings broke the contract, with the first such paging in `example`.
  int page_while_moving(const std::string& board, bool tick, std::string& example) {
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> flips{0};
    std::thread writer([&] {
      redis::Connection conn = test::connect_redis();
      cold::ColdStore cold(test::postgres_url(), prefix);
      service::Leaderboards lb(config, conn, Clock(kNow), &cold);
      for (std::int64_t n = 0; !stop.load(); ++n) {
        const std::string mover = "m" + std::to_string(n % kMovers);
        const std::int64_t delta = (n / kMovers) % 2 == 0 ? kJump : -kJump;
        const auto r = lb.apply(Update{board, mover, delta, kAt, ""});
        if (r.status != service::UpdateStatus::applied) ADD_FAILURE() << r.reason;
        ++flips;
      }
    });
    std::thread ticker([&] {
      if (!tick) return;
      redis::Connection conn = test::connect_redis();
      cold::ColdStore cold(test::postgres_url(), prefix);
      cold::History archive(test::postgres_url(), prefix);
      lifecycle::Tick t(config, conn, cold, archive, Clock(kNow));
      while (!stop.load()) t.run({false, 3});
    });
    redis::Connection conn = test::connect_redis();
    cold::ColdStore cold(test::postgres_url(), prefix);
    cold::History archive(test::postgres_url(), prefix);
    service::Leaderboards lb(config, conn, Clock(kNow), &cold);
    service::Reads& reads = lb.reads();
    reads.read_history_from([&]() -> cold::History& { return archive; });
    const service::PeriodView view = reads.locate(board, "daily", std::nullopt);
    int broken = 0;
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    for (int paging = 0; paging < kPagings && std::chrono::steady_clock::now() < deadline;
         ++paging) {
      std::vector<std::vector<Standing>> pages;
      std::optional<service::PageMark> after;
      for (int p = 0; p < 100; ++p) {
        service::Page page = reads.top(view, after, kLimit);
        pages.push_back(std::move(page.rows));
        if (!page.next) break;
        after = page.next;
      }
      if (const std::string why = check_paging(pages); !why.empty()) {
        if (broken++ == 0) example = why + ": " + describe(pages);
      }
    }
    stop.store(true);
    writer.join();
    ticker.join();
    EXPECT_GT(flips.load(), 100) << "the writer hardly moved anything";
    return broken;
  }
};

TEST_F(PagingTest, MembersThatNeverMoveAreListedOnceWhileOthersCrossTheCursorOnAHotBoard) {
  fill("hot");
  std::string example;
  EXPECT_EQ(page_while_moving("hot", false, example), 0) << example;
}

TEST_F(PagingTest, MembersThatNeverMoveAreListedOnceWhileOthersCrossTheCursorAndSpillsRun) {
  fill("spilled");
  {
    redis::Connection conn = test::connect_redis();
    cold::ColdStore cold(test::postgres_url(), prefix);
    cold::History archive(test::postgres_url(), prefix);
    lifecycle::Tick(config, conn, cold, archive, Clock(kNow)).run({});
  }
  const cold::PeriodKey key{"spilled", "daily", "2026-11-22"};
  ASSERT_EQ(cold::ColdStore(test::postgres_url(), prefix).reader().count(key),
            kStable + kMovers - 12);
  std::string example;
  EXPECT_EQ(page_while_moving("spilled", true, example), 0) << example;
  // The movers went back and forth between the tiers meanwhile.
  EXPECT_GT(std::stoll(test::psql("SELECT max(version) FROM " + prefix + ".cold_members")), 1);
}

}  // namespace
}  // namespace bk
