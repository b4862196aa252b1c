// The update path against a real Redis: atomicity under concurrency, tie-breaks,
// idempotency, policies, range and closed-period refusals, TTLs and registries.
// (Batches: update_batch_test.cpp, the same binary.)
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "redis/error.h"
#include "update_fixture.h"

namespace bk {
namespace {

using namespace update_test;  // NOLINT(google-build-using-namespace): the suite's fixture

// A listing after the concurrent increments: each member's points its events' sum, its
// achieved_at one of its threads' last event times, the rows in listing order (more points
// first, then earlier achieved_at, then member bytes) with shared ranks for full ties.
void expect_sums_and_tie_order(const std::vector<service::Standing>& rows,
                               std::map<std::string, std::int64_t>& sums,
                               std::map<std::string, std::set<std::int64_t>>& last_times,
                               const char* period) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    EXPECT_EQ(r.points, sums[r.member]) << period << " " << r.member;
    ASSERT_TRUE(r.achieved_at);
    EXPECT_EQ(last_times[r.member].count(to_epoch_ms(*r.achieved_at)), 1U)
        << r.member << " achieved_at " << format_rfc3339(*r.achieved_at);
    if (i > 0) {
      const auto& p = rows[i - 1];
      // Listing order: more points first, then earlier achieved_at, then member bytes.
      const bool ordered =
          p.points > r.points ||
          (p.points == r.points && (*p.achieved_at < *r.achieved_at ||
                                    (*p.achieved_at == *r.achieved_at && p.member < r.member)));
      EXPECT_TRUE(ordered) << p.member << " before " << r.member;
      EXPECT_EQ(r.rank, r.points == p.points && *r.achieved_at == *p.achieved_at
                            ? p.rank
                            : static_cast<std::int64_t>(i + 1));
    }
  }
}

TEST_F(UpdateTest, ConcurrentIncrementsEndWithExactSumsAndTieOrder) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 2000;
  const std::vector<std::string> members{"ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"};
  // Expected sums, and per member the last event time of each thread: the final
  // achieved_at must be one of those (whichever thread's last update landed last).
  std::map<std::string, std::int64_t> sums;
  std::map<std::string, std::set<std::int64_t>> last_times;
  std::vector<std::vector<Update>> work(kThreads);
  const Instant base = at("2026-11-22T09:00:00+08:00");
  std::mt19937 rng(42);
  for (int t = 0; t < kThreads; ++t) {
    std::map<std::string, std::int64_t> last;
    for (int j = 0; j < kPerThread; ++j) {
      Update u{
          "pts", members[rng() % members.size()], static_cast<std::int64_t>(1 + rng() % 5), {}, ""};
      u.at = base + Millis{j * kThreads + t};  // unique per event
      sums[u.member] += u.value;
      last[u.member] = to_epoch_ms(*u.at);
      work[t].push_back(u);
    }
    for (auto& [m, ms] : last) last_times[m].insert(ms);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      redis::Connection own = test::connect_redis();
      Leaderboards lb(config, own, Clock(now));
      std::mt19937 chunk_rng(static_cast<unsigned>(t));
      for (std::size_t i = 0; i < work[t].size();) {
        const std::size_t n = std::min(work[t].size() - i, std::size_t{1 + chunk_rng() % 16});
        const std::vector<Update> chunk(work[t].begin() + static_cast<long>(i),
                                        work[t].begin() + static_cast<long>(i + n));
        for (const auto& r : lb.apply(chunk))
          ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
        i += n;
      }
    });
  }
  for (auto& th : threads) th.join();

  Leaderboards lb = boards(now);
  for (const char* period : {"daily", "weekly", "monthly"}) {
    const auto rows = all(lb, "pts", period);
    ASSERT_EQ(rows.size(), members.size()) << period;
    ASSERT_NO_FATAL_FAILURE(expect_sums_and_tie_order(rows, sums, last_times, period));
  }
}

TEST_F(UpdateTest, TiesBreakByWhoReachedThePointsFirst) {
  Leaderboards lb = boards(now);
  // pts (earliest): bob reaches 100 before ann does; cy has 100 too but later still.
  for (const Update& u :
       std::vector<Update>{{"pts", "ann", 60, at("2026-11-22T08:00:00+08:00"), ""},
                           {"pts", "bob", 100, at("2026-11-22T08:30:00+08:00"), ""},
                           {"pts", "ann", 40, at("2026-11-22T09:00:00+08:00"), ""},
                           {"pts", "cy", 100, at("2026-11-22T10:00:00+08:00"), ""},
                           {"late", "ann", 100, at("2026-11-22T03:00:00Z"), ""},
                           {"late", "bob", 100, at("2026-11-22T02:00:00Z"), ""},
                           {"flat", "zed", 7, at("2026-11-22T01:00:00Z"), ""},
                           {"flat", "amy", 7, at("2026-11-22T02:00:00Z"), ""},
                           {"flat", "kim", 9, at("2026-11-22T03:00:00Z"), ""}}) {
    ASSERT_EQ(lb.apply(u).status, UpdateStatus::applied);
  }
  auto rows = all(lb, "pts", "daily");
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].member, "bob");
  EXPECT_EQ(rows[1].member, "ann");
  EXPECT_EQ(rows[2].member, "cy");
  EXPECT_EQ(*rows[1].achieved_at, at("2026-11-22T09:00:00+08:00"));
  EXPECT_EQ((std::vector<std::int64_t>{rows[0].rank, rows[1].rank, rows[2].rank}),
            (std::vector<std::int64_t>{1, 2, 3}));

  rows = all(lb, "late", "daily");  // latest: whoever got there last ranks higher
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].member, "ann");
  EXPECT_EQ(rows[1].member, "bob");

  rows = all(lb, "flat", "daily");  // none: equal points share a rank, listed by member
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].member, "kim");
  EXPECT_EQ(rows[1].member, "amy");
  EXPECT_EQ(rows[2].member, "zed");
  EXPECT_EQ(rows[1].rank, 2);
  EXPECT_EQ(rows[2].rank, 2);
  EXPECT_FALSE(rows[2].achieved_at);
}

// The two-step apply a stream consumer uses to overlap its work with Redis's: prepare()
// makes no round trip (a board is registered when applied, not when prepared), the wait
// runs once per apply (also when every update was refused and nothing is sent), and the
// results are apply()'s.
TEST_F(UpdateTest, APreparedApplyRunsItsWaitOnceAndGivesWhatApplyGives) {
  Leaderboards lb = boards(now);
  const Instant t = at("2026-11-22T10:00:00+08:00");
  const std::vector<Update> first{{"pts", "ann", 5, t, ""}, {"pts", "bob", 7, t, ""}};
  const std::vector<Update> second{{"pts", "ann", 3, t, ""}, {"nope", "ann", 1, t, ""}};
  const std::vector<Update> refused{{"nope", "bob", 1, t, ""}};
  const std::string registry = hot::boards_key(prefix);

  Leaderboards::Prepared p1 = lb.prepare(first, Leaderboards::Detail::status);
  EXPECT_EQ(conn.command({"SISMEMBER", registry, "pts"}).as_int(), 0);
  std::optional<Leaderboards::Prepared> p2;
  int waits = 0;
  const auto r1 = lb.apply(std::move(p1), [&] {
    ++waits;
    p2 = lb.prepare(second, Leaderboards::Detail::points);
  });
  EXPECT_EQ(waits, 1);
  EXPECT_EQ(conn.command({"SISMEMBER", registry, "pts"}).as_int(), 1);
  ASSERT_EQ(r1.size(), 2U);
  EXPECT_EQ(r1[0].status, UpdateStatus::applied);
  EXPECT_EQ(r1[1].status, UpdateStatus::applied);
  ASSERT_TRUE(p2.has_value());
  const auto r2 = lb.apply(std::move(*p2), [&] { ++waits; });
  EXPECT_EQ(waits, 2);
  ASSERT_EQ(r2.size(), 2U);
  EXPECT_EQ(r2[0].status, UpdateStatus::applied);
  ASSERT_FALSE(r2[0].points.empty());
  EXPECT_EQ(r2[0].points[0].points, 8);
  EXPECT_EQ(r2[1].status, UpdateStatus::refused);
  EXPECT_EQ(r2[1].refusal, service::Refusal::unknown_board);
  const auto r3 = lb.apply(lb.prepare(refused), [&] { ++waits; });
  EXPECT_EQ(waits, 3);
  EXPECT_EQ(r3.at(0).refusal, service::Refusal::unknown_board);
  const auto rows = all(lb, "pts", "daily");
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].member, "ann");
  EXPECT_EQ(rows[0].points, 8);
}

TEST_F(UpdateTest, RepeatedEventIdCountsOnce) {
  Leaderboards lb = boards(now);
  const Update u{"pts", "ann", 5, at("2026-11-22T10:00:00+08:00"), "evt-1"};
  EXPECT_EQ(lb.apply(u).status, UpdateStatus::applied);
  EXPECT_EQ(lb.apply(u).status, UpdateStatus::duplicate);
  // In one batch too, and with a different value (same id, same board period).
  Update again = u;
  again.value = 50;
  const auto results = lb.apply(std::vector<Update>{again, again});
  EXPECT_EQ(results[0].status, UpdateStatus::duplicate);
  EXPECT_EQ(results[1].status, UpdateStatus::duplicate);
  // The same id on another board is another event.
  EXPECT_EQ(lb.apply(Update{"late", "ann", 5, u.at, "evt-1"}).status, UpdateStatus::applied);
  for (const char* period : {"daily", "weekly", "monthly"}) {
    const auto rows = all(lb, "pts", period);
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].points, 5) << period;
  }
}

// A stream's node that rolled back (a failover to a replica that lacked the deliveries, a
// restart from an older file) delivers applied entries again as new entries, not as
// redeliveries: their markers still make them duplicates, coalesced or not, while the
// entries of the call that were not applied are applied.
TEST_F(UpdateTest, StreamEntriesDeliveredAgainAsNewCountOnce) {
  Leaderboards lb = boards(now);
  const auto entries = [&](int from, int to) {
    std::vector<Update> out;
    for (int i = from; i < to; ++i) {
      Update u{"pts", "m" + std::to_string(i % 3), 1 + i % 4, at("2026-11-22T10:00:00+08:00"), ""};
      u.stream = "lb:events";
      u.order_token = "1700000000000-" + std::to_string(i);
      out.push_back(u);
    }
    return out;
  };
  const auto statuses = [](const std::vector<service::UpdateResult>& results) {
    std::vector<UpdateStatus> out;
    for (const auto& r : results) out.push_back(r.status);
    return out;
  };
  const auto total = [&] {
    std::int64_t sum = 0;
    for (const auto& row : all(lb, "pts", "daily")) sum += row.points;
    return sum;
  };
  std::int64_t want = 0;
  for (const auto& u : entries(0, 10)) want += u.value;
  lb.apply(entries(0, 10), Leaderboards::Detail::status);
  EXPECT_EQ(total(), want);
  // All ten again, as new entries (members repeat: coalesced increments).
  EXPECT_EQ(statuses(lb.apply(entries(0, 10), Leaderboards::Detail::status)),
            std::vector<UpdateStatus>(10, UpdateStatus::duplicate));
  EXPECT_EQ(total(), want);
  // Entries 5-9 again and 10-14 for the first time, in one call.
  for (const auto& u : entries(10, 15)) want += u.value;
  std::vector<UpdateStatus> expected(5, UpdateStatus::duplicate);
  expected.resize(10, UpdateStatus::applied);
  EXPECT_EQ(statuses(lb.apply(entries(5, 15))), expected);
  EXPECT_EQ(total(), want);
  // The next entries, past every marker: applied.
  for (const auto& u : entries(15, 20)) want += u.value;
  EXPECT_EQ(statuses(lb.apply(entries(15, 20), Leaderboards::Detail::status)),
            std::vector<UpdateStatus>(5, UpdateStatus::applied));
  EXPECT_EQ(total(), want);
}

TEST_F(UpdateTest, PoliciesBestAndReplace) {
  Leaderboards lb = boards(now);
  const Instant t1 = at("2026-11-22T01:00:00Z"), t2 = at("2026-11-22T02:00:00Z"),
                t3 = at("2026-11-22T03:00:00Z");
  // lap: asc + best: keep the lowest time; an equal or worse one changes nothing.
  EXPECT_EQ(lb.apply(Update{"lap", "ann", 90500, t1, ""}).points.at(0).points, 90500);
  EXPECT_EQ(lb.apply(Update{"lap", "ann", 91000, t2, ""}).points.at(0).points, 90500);
  EXPECT_EQ(lb.apply(Update{"lap", "ann", 90500, t3, ""}).points.at(0).points, 90500);
  auto r = lb.reads().member({lb.resolve("lap", "daily", std::nullopt)}, "ann");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r->achieved_at, t1);
  EXPECT_EQ(lb.apply(Update{"lap", "ann", 89999, t3, ""}).points.at(0).points, 89999);
  EXPECT_EQ(*lb.reads().member({lb.resolve("lap", "daily", std::nullopt)}, "ann")->achieved_at, t3);
  // flat: replace, negative allowed down to -50.
  EXPECT_EQ(lb.apply(Update{"flat", "bob", 40, t1, ""}).points.at(0).points, 40);
  EXPECT_EQ(lb.apply(Update{"flat", "bob", -20, t2, ""}).points.at(0).points, -20);
  EXPECT_EQ(lb.reads().member({lb.resolve("flat", "daily", std::nullopt)}, "bob")->points, -20);
}

TEST_F(UpdateTest, SecondResolutionTruncatesTheTieBreakTime) {
  Leaderboards lb = boards(now);
  ASSERT_EQ(lb.apply(Update{"lap", "ann", 1000, at("2026-11-22T01:00:00.900Z"), ""}).status,
            UpdateStatus::applied);
  ASSERT_EQ(lb.apply(Update{"lap", "bob", 1000, at("2026-11-22T01:00:00.100Z"), ""}).status,
            UpdateStatus::applied);
  const auto rows = all(lb, "lap", "daily");
  ASSERT_EQ(rows.size(), 2U);
  // Same points, same second: they share rank 1 and are listed by member id.
  EXPECT_EQ(rows[0].member, "ann");
  EXPECT_EQ(rows[0].rank, 1);
  EXPECT_EQ(rows[1].rank, 1);
  EXPECT_EQ(*rows[0].achieved_at, at("2026-11-22T01:00:00Z"));
}

TEST_F(UpdateTest, OutOfRangeIsRefusedAndNothingIsWritten) {
  Leaderboards day1 = boards(at("2026-11-21T12:00:00Z"));
  EXPECT_EQ(day1.apply(Update{"small", "ann", 60, at("2026-11-21T10:00:00Z"), ""}).status,
            UpdateStatus::applied);
  // Fits the next day's daily board (60) but the month would reach 120 > 100: the whole
  // event is refused, so the daily board stays untouched too.
  Leaderboards lb = boards(at("2026-11-22T02:00:00Z"));
  const auto r = lb.apply(Update{"small", "ann", 60, at("2026-11-22T01:00:00Z"), ""});
  EXPECT_EQ(r.status, UpdateStatus::refused);
  EXPECT_NE(r.reason.find("120"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("monthly"), std::string::npos) << r.reason;
  EXPECT_TRUE(
      lb.reads().top_at({lb.resolve("small", "daily", std::string("2026-11-22"))}, 0, 10).empty());
  EXPECT_EQ(all(lb, "small", "monthly").at(0).points, 60);
  // Negative increments are fine down to min_points, and refused past it.
  EXPECT_EQ(lb.apply(Update{"small", "bob", -50, at("2026-11-22T01:00:00Z"), ""}).status,
            UpdateStatus::applied);
  EXPECT_EQ(lb.apply(Update{"small", "bob", -1, at("2026-11-22T01:00:00Z"), ""}).status,
            UpdateStatus::refused);
}

TEST_F(UpdateTest, ClosedAndFutureEventsAreRefused) {
  // pts has the default grace of 10m. 2026-11-21 (Shanghai) ended at 2026-11-21T16:00Z.
  Leaderboards lb = boards(at("2026-11-21T16:09:59Z"));
  EXPECT_EQ(lb.apply(Update{"pts", "ann", 1, at("2026-11-21T15:59:00Z"), ""}).status,
            UpdateStatus::applied);
  Leaderboards later = boards(at("2026-11-21T16:10:00Z"));
  const auto r = later.apply(Update{"pts", "ann", 1, at("2026-11-21T15:59:00Z"), ""});
  EXPECT_EQ(r.status, UpdateStatus::refused);
  EXPECT_NE(r.reason.find("closed for writes"), std::string::npos) << r.reason;
  // More than max_clock_skew (5m) ahead of now.
  const auto future = later.apply(Update{"pts", "cy", 1, at("2026-11-21T16:15:01Z"), ""});
  EXPECT_EQ(future.status, UpdateStatus::refused);
  EXPECT_NE(future.reason.find("max_clock_skew"), std::string::npos) << future.reason;
  EXPECT_EQ(later.apply(Update{"pts", "cy", 1, at("2026-11-21T16:15:00Z"), ""}).status,
            UpdateStatus::applied);
  // A period frozen for archive (the closed marker) refuses even within grace.
  const hot::BoardKeys keys(prefix, "pts");
  conn.command({"HSET", keys.meta("daily", "2026-11-22"), "closed", "1"}).checked();
  const auto frozen = later.apply(Update{"pts", "bob", 1, at("2026-11-21T16:11:00Z"), ""});
  EXPECT_EQ(frozen.status, UpdateStatus::refused);
  EXPECT_NE(frozen.reason.find("daily:2026-11-22"), std::string::npos) << frozen.reason;
  EXPECT_FALSE(later.reads().member({later.resolve("pts", "weekly", std::nullopt)}, "bob"));
}

// PRODUCT.md: an event id is applied at most once per board within dedupe_window; later it
// applies again; ids are kept once per event, not per period, and leave with the window.
TEST_F(UpdateTest, EventIdsAreRememberedOncePerBoardForTheDedupeWindow) {
  const Instant t0 = at("2026-11-22T12:00:00.100+08:00");
  const Update u{"dd", "ann", 5, at("2026-11-22T10:00:00+08:00"), "evt-1"};
  Leaderboards first = boards(t0);
  ASSERT_EQ(first.apply(u).status, UpdateStatus::applied);
  // One SET of ids for the board (whatever its periods), holding the id once.
  std::vector<std::string> id_keys;
  for (const auto& k : test::keys_with_prefix(conn, prefix)) {
    if (k.find(":ids") != std::string::npos) id_keys.push_back(k);
  }
  ASSERT_EQ(id_keys.size(), 1U);
  EXPECT_EQ(id_keys[0].rfind(prefix + ":{dd}:ids:", 0), 0U) << id_keys[0];
  EXPECT_EQ(conn.command({"SCARD", id_keys[0]}).as_int(), 1);
  // Inside the window (by the service clock): a duplicate, however the value differs.
  Update again = u;
  again.value = 7;
  Leaderboards inside = boards(t0 + std::chrono::milliseconds(999));
  EXPECT_EQ(inside.apply(again).status, UpdateStatus::duplicate);
  // After it (remembered at most 1.25 windows): applied again.
  Leaderboards after = boards(t0 + std::chrono::milliseconds(1251));
  EXPECT_EQ(after.apply(again).status, UpdateStatus::applied);
  for (const char* period : {"daily", "weekly"}) {
    const auto rows = all(after, "dd", period);
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].points, 12) << period;
  }
  // The ids leave Redis with their window (by Redis's clock): at most 1.25 windows.
  const std::int64_t ttl = conn.command({"PTTL", id_keys[0]}).as_int();
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 1250);
  // Every ids key (the later apply may have written a second one) has a TTL, and they are
  // gone once it passed: polled for up to 3 s more, since Redis expires keys in the
  // background and a loaded machine (ASan, a cluster) runs late.
  std::this_thread::sleep_for(std::chrono::milliseconds(ttl + 50));
  std::vector<std::string> left;
  for (int i = 0; i < 150; ++i) {
    left.clear();
    for (const auto& k : test::keys_with_prefix(conn, prefix)) {
      if (k.find(":ids") == std::string::npos) continue;
      left.push_back(k);
      EXPECT_NE(conn.command({"PTTL", k}).as_int(), -1) << k << " has no TTL";
    }
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(left.empty()) << left.front();
}

TEST_F(UpdateTest, EveryKeyHasItsTtlFromBirthAndIsRegistered) {
  Leaderboards lb = boards(now);
  ASSERT_EQ(lb.apply(Update{"pts", "ann", 3, at("2026-11-22T10:00:00+08:00"), "e1"}).status,
            UpdateStatus::applied);
  ASSERT_EQ(lb.apply(Update{"lap", "bob", 3, at("2026-11-22T03:00:00Z"), ""}).status,
            UpdateStatus::applied);
  const auto keys = test::keys_with_prefix(conn, prefix);
  EXPECT_GE(keys.size(), 7U);  // 3 live + ids + registry for pts; live + registry for lap
  for (const auto& k : keys) {
    if (k == hot::boards_key(prefix)) continue;  // the set of board names is permanent
    EXPECT_GT(conn.command({"PTTL", k}).as_int(), 0) << k;
  }
  // daily 2026-11-22 in Shanghai ends 2026-11-22T16:00Z; retention 3650d.
  const hot::BoardKeys pk(prefix, "pts");
  EXPECT_EQ(conn.command({"PEXPIRETIME", pk.live("daily", "2026-11-22")}).as_int(),
            to_epoch_ms(at("2036-11-19T16:00:00Z")));
  EXPECT_EQ(conn.command({"PEXPIRETIME", pk.live("monthly", "2026-11")}).as_int(),
            to_epoch_ms(at("2037-01-06T16:00:00Z")));  // Dec 1 00:00 +08:00, + 3690d
  // Registry: member "<period>:<id>", score = end.
  EXPECT_EQ(conn.command({"ZSCORE", pk.registry(), "weekly:2026-W47"}).as_int(),
            to_epoch_ms(at("2026-11-22T16:00:00Z")));
  EXPECT_EQ(conn.command({"ZCARD", pk.registry()}).as_int(), 3);
  EXPECT_EQ(conn.command({"SISMEMBER", hot::boards_key(prefix), "pts"}).as_int(), 1);
  EXPECT_EQ(conn.command({"SISMEMBER", hot::boards_key(prefix), "lap"}).as_int(), 1);
}

// A key the update script writes without reading (the registry, the stream's in-flight
// markers) of the wrong type: the call is refused before it writes anything, so once the key
// is repaired the same events count once.
TEST_F(UpdateTest, AKeyOfTheWrongTypeFailsTheCallBeforeItWritesAnything) {
  Leaderboards lb = boards(now);
  const hot::BoardKeys pk(prefix, "pts");
  const auto update = [&](const std::string& token) {
    Update u{"pts", "bob", 3, at("2026-11-22T10:00:00+08:00"), ""};
    u.stream = "lb:events";
    u.order_token = token;
    return u;
  };
  for (const std::string& broken : {pk.registry(), pk.inflight("lb:events")}) {
    const std::string token = broken == pk.registry() ? "1700000000000-1" : "1700000000000-2";
    conn.command({"SET", broken, "not a zset"}).checked();
    const service::UpdateResult r = lb.apply(update(token));
    EXPECT_EQ(r.status, UpdateStatus::failed) << broken;
    EXPECT_NE(r.reason.find(broken), std::string::npos) << r.reason;
    conn.command({"DEL", broken}).checked();
    ASSERT_EQ(lb.apply(update(token)).status, UpdateStatus::applied) << broken;
  }
  // Two events applied once each: 3 + 3 points, however many calls failed before.
  EXPECT_EQ(all(lb, "pts", "daily").at(0).points, 6);
}

TEST_F(UpdateTest, WritesThatRedisWouldExpireAtOnceAreRefused) {
  // A replay of 2021 with a 1-day retention: the keys' expiry is long past in real time, so
  // Redis would delete them at once. Refused, not silently lost.
  const Config old = test::make_config(prefix, R"(  - name: replay
    periods: [daily]
    max_points: 100
    retention: {default: 1d}
)");
  Leaderboards lb(old, conn, Clock(at("2021-03-01T12:00:00Z")));
  const auto r = lb.apply(Update{"replay", "ann", 1, at("2021-03-01T11:00:00Z"), ""});
  EXPECT_EQ(r.status, UpdateStatus::refused);
  EXPECT_NE(r.reason.find("would expire in Redis at once"), std::string::npos) << r.reason;
  EXPECT_TRUE(test::keys_with_prefix(conn, prefix + ":{replay}").empty());
}

TEST_F(UpdateTest, MemberIdsAreValidatedAndKeptByteForByte) {
  Leaderboards lb = boards(now);
  const Instant t = at("2026-11-22T10:00:00+08:00");
  for (const std::string& bad : {std::string(), std::string(513, 'x'), std::string("a\0b", 3),
                                 std::string("\xff\xfe"), std::string("\xed\xa0\x80")}) {
    const auto r = lb.apply(Update{"pts", bad, 1, t, ""});
    EXPECT_EQ(r.status, UpdateStatus::refused);
    EXPECT_NE(r.reason.find("member id"), std::string::npos) << r.reason;
  }
  const std::vector<std::string> odd{"quote\"d", "tab\there", "new\nline",          "back\\slash",
                                     "emoji 🏆",  "日本語",    std::string(512, 'z')};
  for (std::size_t i = 0; i < odd.size(); ++i) {
    ASSERT_EQ(lb.apply(Update{"pts", odd[i], static_cast<std::int64_t>(i + 1), t, ""}).status,
              UpdateStatus::applied);
  }
  const auto rows = all(lb, "pts", "daily");
  ASSERT_EQ(rows.size(), odd.size());
  for (std::size_t i = 0; i < odd.size(); ++i) {
    EXPECT_EQ(rows[odd.size() - 1 - i].member, odd[i]);
  }
  EXPECT_EQ(lb.apply(Update{"no_such_board", "ann", 1, t, ""}).status, UpdateStatus::refused);
  EXPECT_EQ(lb.apply(Update{"bad board", "ann", 1, t, ""}).status, UpdateStatus::refused);
}

}  // namespace
}  // namespace bk
