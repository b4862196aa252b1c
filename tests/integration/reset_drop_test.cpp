// Reset and drop against real Redis and PostgreSQL: a reset empties a live period (hot and
// cold rows, counted pages, counts), events after it start from zero and the next archive holds
// only them, a closed period is refused, a reset racing updates keeps nothing from before it;
// drop removes a board's live data (and its history with `history`), keeps its bans, and a
// later event starts the board again. Every operation is idempotent.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cold/board_reset.h"
#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "hot/board_reset.h"
#include "hot/board_scripts.h"
#include "hot/keys.h"
#include "lifecycle/tick.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using service::Leaderboards;
using service::Update;
using service::UpdateStatus;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

// `spill` keeps 10 members hot (tick spills the rest); `small` never spills. A 10-year
// retention: Redis expires keys by its own clock.
const char* kBoards = R"(  - name: spill
    periods: [daily, weekly]
    max_points: 10000000
    hot_keep: 10
    display: 5
    archive: {grace: 1m}
    retention: {default: 3650d}
  - name: small
    periods: [daily]
    max_points: 10000000
    archive: {grace: 1m}
    retention: {default: 3650d}
)";

class ResetDropTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};
  Instant now = at("2026-11-22T12:00:00Z");  // daily 2026-11-22 (UTC)

  void SetUp() override { cold.migrate(); }

  Leaderboards lb(Instant t) { return Leaderboards(config, conn, Clock(t), &cold); }

  // Members m<first>..m<first + n - 1>, member i scoring `base + i` at `t`.
  void score(const std::string& board, int first, int n, std::int64_t base, Instant t) {
    std::vector<Update> updates;
    for (int i = first; i < first + n; ++i) {
      updates.push_back({board, "m" + std::to_string(i), base + i, t, ""});
    }
    for (const auto& r : lb(t).apply(updates))
      ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
  }

  lifecycle::TickReport tick(Instant t) {
    return lifecycle::Tick(config, conn, cold, archive, Clock(t)).run({});
  }

  // member -> points of the board's `period` containing `t`, hot and cold, as reads list them.
  std::map<std::string, std::int64_t> listed(const std::string& board, const std::string& period,
                                             Instant t) {
    Leaderboards l(config, conn, Clock(t), &cold);
    std::map<std::string, std::int64_t> out;
    for (const auto& s : l.reads().top_at({l.resolve(board, period, {})}, 0, 100000))
      out[s.member] = s.points;
    return out;
  }

  std::int64_t count(const std::string& sql) { return std::stoll(test::psql(sql)); }
  std::int64_t cold_rows(const std::string& board) {
    return count("SELECT count(*) FROM " + prefix + ".cold_members WHERE board = '" + board + "'");
  }
  std::int64_t cold_pages(const std::string& board) {
    return count("SELECT count(*) FROM " + prefix + ".cold_pages WHERE board = '" + board + "'");
  }
  std::int64_t history_rows(const std::string& board) {
    return count("SELECT count(*) FROM " + prefix + ".history WHERE board = '" + board + "'");
  }
  bool registered(const std::string& board, const std::string& member) {
    return !conn.command({"ZSCORE", hot::BoardKeys(prefix, board).registry(), member}).is_nil();
  }
};

TEST_F(ResetDropTest, ResetOfAHotOnlyPeriodEmptiesItAndLeavesTheOtherPeriods) {
  score("small", 0, 20, 100, now);
  Leaderboards l = lb(now);
  const service::Reset r = l.moderation().reset("small", "daily");
  EXPECT_EQ(r.period, "daily");
  EXPECT_EQ(r.period_id, "2026-11-22");
  EXPECT_EQ(r.hot, 20);
  EXPECT_EQ(r.cold, 0);
  EXPECT_TRUE(listed("small", "daily", now).empty());
  EXPECT_EQ(l.reads().count({l.resolve("small", "daily", {})}), 0);
  EXPECT_EQ(l.reads().periods("small").at(0).current_members, 0);
  EXPECT_FALSE(registered("small", "daily:2026-11-22"));
}

TEST_F(ResetDropTest, BadInputIsAUsageErrorNamingIt) {
  Leaderboards l = lb(now);
  const auto message = [&](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no UsageError)";
  };
  EXPECT_NE(message([&] { l.moderation().reset("nosuch", "daily"); }).find("nosuch"),
            std::string::npos);
  EXPECT_NE(message([&] { l.moderation().reset("small", "hourly"); }).find("hourly"),
            std::string::npos);
  EXPECT_NE(message([&] {
              l.moderation().reset("small", "daily", std::string("yesterday"));
            }).find("yesterday"),
            std::string::npos);
  EXPECT_NE(message([&] { l.moderation().drop("nosuch", false); }).find("nosuch"),
            std::string::npos);
}

TEST_F(ResetDropTest, WithoutPostgresResetIsHotOnlyAndDropHistoryIsAUsageError) {
  score("small", 0, 7, 1, now);
  Leaderboards l(config, conn, Clock(now));  // no cold tier
  EXPECT_EQ(l.moderation().reset("small", "daily").hot, 7);
  EXPECT_TRUE(listed("small", "daily", now).empty());
  EXPECT_THROW(l.moderation().drop("small", true), UsageError);
  score("small", 0, 2, 1, now);
  EXPECT_EQ(l.moderation().drop("small", false).periods.at(0).hot, 2);
}

TEST_F(ResetDropTest, ResetOfASpilledPeriodRemovesItsColdRowsAndPagesAndCountsZero) {
  score("spill", 0, 50, 100, now);
  ASSERT_FALSE(tick(now + Millis{1000}).any_failed());
  ASSERT_EQ(cold_rows("spill"), 2 * 40);  // daily and weekly: 40 each beyond hot_keep
  ASSERT_GT(cold_pages("spill"), 0);
  Leaderboards l = lb(now);
  const service::Reset r = l.moderation().reset("spill", "daily");
  EXPECT_EQ(r.hot, 10);
  EXPECT_EQ(r.cold, 40);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix +
                  ".cold_members WHERE board = 'spill' AND period = 'daily'"),
            0);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix +
                  ".cold_pages WHERE board = 'spill' AND period = 'daily'"),
            0);
  EXPECT_TRUE(listed("spill", "daily", now).empty());
  EXPECT_EQ(l.reads().count({l.resolve("spill", "daily", {})}), 0);
  for (const auto& p : l.reads().periods("spill")) {
    if (p.period != "daily") continue;
    EXPECT_EQ(p.current_members, 0);
    EXPECT_EQ(p.hot_members, 0);
    EXPECT_EQ(p.cold_members, 0);
  }
  // The weekly period kept everything.
  EXPECT_EQ(listed("spill", "weekly", now).size(), 50U);
  // Idempotent: nothing more to remove.
  const service::Reset again = l.moderation().reset("spill", "daily");
  EXPECT_EQ(again.total(), 0);
}

TEST_F(ResetDropTest, ALongLivedReaderSeesNothingFromBeforeAResetOrADrop) {
  // A reader that lives on (as serve's does) keeps cold summaries by the period's generation.
  Leaderboards reader = lb(now);
  const service::PeriodRef day = reader.resolve("spill", "daily", {});
  for (const auto& operation : std::vector<std::string>{"reset", "drop"}) {
    score("spill", 0, 30, 1000, now);
    ASSERT_FALSE(tick(now + Millis{1000}).any_failed());
    ASSERT_EQ(reader.reads().count({day}), 30) << operation;
    ASSERT_EQ(reader.reads().top_at({day}, 0, 100).size(), 30U) << operation;
    if (operation == "reset") {
      lb(now).moderation().reset("spill", "daily");
    } else {
      lb(now).moderation().drop("spill", false);
    }
    EXPECT_EQ(reader.reads().count({day}), 0) << operation;
    EXPECT_TRUE(reader.reads().top_at({day}, 0, 100).empty()) << operation;
    // Spilled again, with other points: the reader lists the new ones only.
    score("spill", 0, 30, 5, now);
    ASSERT_FALSE(tick(now + Millis{1000}).any_failed());
    const auto rows = reader.reads().top_at({day}, 0, 100);
    ASSERT_EQ(rows.size(), 30U) << operation;
    for (const auto& r : rows) EXPECT_LT(r.points, 1000) << operation << " " << r.member;
    lb(now).moderation().reset("spill", "daily");
  }
}

TEST_F(ResetDropTest, EventsAfterAResetStartFromZeroAndTheNextArchiveHoldsOnlyThem) {
  score("spill", 0, 30, 1000, now);
  ASSERT_FALSE(tick(now + Millis{1000}).any_failed());
  Leaderboards l = lb(now);
  l.moderation().reset("spill", "daily");
  // m0 was cold (lowest scores spill), m29 hot, m99 new.
  const Instant later = now + std::chrono::hours{1};
  for (const auto& [member, value] :
       std::vector<std::pair<std::string, std::int64_t>>{{"m0", 5}, {"m29", 7}, {"m99", 3}}) {
    const auto r = lb(later).apply(Update{"spill", member, value, later, ""});
    ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
    EXPECT_EQ(r.points.at(0).points, value) << member;  // daily: from zero
  }
  const std::map<std::string, std::int64_t> want{{"m0", 5}, {"m29", 7}, {"m99", 3}};
  EXPECT_EQ(listed("spill", "daily", later), want);
  // Archived after its end + grace: only what came after the reset.
  ASSERT_FALSE(tick(at("2026-11-23T00:02:00Z")).any_failed());
  const cold::PeriodKey day{"spill", "daily", "2026-11-22"};
  ASSERT_EQ(archive.status(day), cold::PeriodStatus::archived);
  std::map<std::string, std::int64_t> got;
  for (const cold::HistoryRow& row : archive.history(day, 1000)) got[row.member] = row.points;
  EXPECT_EQ(got, want);
}

TEST_F(ResetDropTest, APeriodResetWithoutLaterEventsArchivesNothingAndIsNotReportedLost) {
  score("spill", 0, 30, 1000, now);
  ASSERT_FALSE(tick(now + Millis{1000}).any_failed());
  lb(now).moderation().reset("spill", "daily");
  const lifecycle::TickReport report = tick(at("2026-11-23T00:02:00Z"));
  EXPECT_FALSE(report.any_failed());
  for (const auto& b : report.boards) {
    EXPECT_TRUE(b.error.empty()) << b.error;
    for (const auto& p : b.periods) EXPECT_FALSE(p.lost) << p.period;
  }
  EXPECT_EQ(archive.status({"spill", "daily", "2026-11-22"}), cold::PeriodStatus::open);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix +
                  ".history WHERE board = 'spill' AND period = 'daily'"),
            0);
  // The weekly period, ended too, was archived whole.
  EXPECT_EQ(archive.history({"spill", "weekly", "2026-W47"}, 1000).size(), 30U);
}

TEST_F(ResetDropTest, ResetOfAFrozenOrArchivedPeriodIsRefusedNamingIt) {
  score("small", 0, 5, 10, now);
  ASSERT_FALSE(tick(at("2026-11-23T00:02:00Z")).any_failed());  // archives 2026-11-22
  Leaderboards l = lb(at("2026-11-23T12:00:00Z"));
  try {
    l.moderation().reset("small", "daily", std::string("2026-11-22"));
    FAIL() << "an archived period was reset";
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find("daily:2026-11-22 of board 'small'"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(history_rows("small"), 5);
  // Frozen for its archive (closed, not yet archived): refused too, nothing removed.
  score("small", 0, 5, 10, at("2026-11-23T12:00:00Z"));
  hot::BoardScripts scripts(prefix, true);
  const hot::BoardKeys board(prefix, "small");
  scripts.freeze(conn, hot::PeriodKeys(board, "daily", "2026-11-23"), at("2036-01-01T00:00:00Z"));
  EXPECT_THROW(l.moderation().reset("small", "daily"), RefusedError);
  EXPECT_EQ(conn.command({"ZCARD", board.live("daily", "2026-11-23")}).as_int(), 5);
}

// Nothing from before the reset: each member m's initial 1000 + m and earlier increments
// are gone; what is `got` holds the updates that began after the reset returned (`must`) and
// at most those that returned after it began (`may`).
void expect_only_points_since_the_reset(const std::map<std::string, std::int64_t>& got,
                                        const std::vector<int>& must, const std::vector<int>& may) {
  for (std::size_t i = 0; i < must.size(); ++i) {
    const std::string member = "m" + std::to_string(i);
    const auto it = got.find(member);
    const std::int64_t points = it == got.end() ? 0 : it->second;
    EXPECT_GE(points, must[i]) << member;
    EXPECT_LE(points, may[i]) << member;
  }
}

TEST_F(ResetDropTest, ResetRacingUpdatesAndSpillsKeepsNothingFromBeforeIt) {
  score("spill", 0, 40, 1000, now);  // 40 hot; tick spills 30 of them: updates rehydrate
  ASSERT_FALSE(tick(now + Millis{1000}).any_failed());
  constexpr int kMembers = 40;
  constexpr int kUpdates = 4000;
  std::atomic<bool> reset_started{false}, reset_done{false};
  std::atomic<int> applied{0};
  // Per member: updates that began after the reset returned (their point must be there), and
  // updates that returned after the reset began (their point may be there).
  std::vector<int> must(kMembers, 0), may(kMembers, 0);
  std::thread writer([&] {
    redis::Connection c = test::connect_redis();
    cold::ColdStore store{test::postgres_url(), prefix};
    Leaderboards w(config, c, Clock(now), &store);
    for (int i = 0; i < kUpdates; ++i) {
      const int m = i % kMembers;
      const bool after_done = reset_done.load();
      const auto r = w.apply(Update{"spill", "m" + std::to_string(m), 1, now, ""});
      if (r.status != UpdateStatus::applied) continue;
      applied.fetch_add(1);
      if (after_done) ++must[static_cast<std::size_t>(m)];
      if (reset_started.load()) ++may[static_cast<std::size_t>(m)];
    }
  });
  // Spills of the period meanwhile (the reset waits for a running one; later ones wait).
  std::atomic<bool> writing_done{false};
  std::thread spiller([&] {
    redis::Connection c = test::connect_redis();
    cold::ColdStore store{test::postgres_url(), prefix};
    cold::History history{test::postgres_url(), prefix};
    for (int i = 0; i < 1000 && !writing_done.load(); ++i) {
      EXPECT_FALSE(lifecycle::Tick(config, c, store, history, Clock(now)).run({}).any_failed());
    }
  });
  // The reset lands in the middle of the writes (bounded by count, a generous deadline).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes{5};
  while (applied.load() < kUpdates / 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  reset_started = true;
  Leaderboards l = lb(now);
  const service::Reset r = l.moderation().reset("spill", "daily");
  reset_done = true;
  writer.join();
  writing_done = true;
  spiller.join();
  EXPECT_GT(r.total(), 0);
  ASSERT_EQ(applied.load(), kUpdates);
  expect_only_points_since_the_reset(listed("spill", "daily", now), must, may);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix +
                  ".cold_members WHERE board = 'spill' AND period = 'daily' AND points > " +
                  std::to_string(kUpdates)),
            0);
}

TEST_F(ResetDropTest, AResetStoppedBetweenItsStepsIsFinishedByRunningItAgain) {
  score("spill", 0, 30, 1000, now);
  ASSERT_FALSE(tick(now + Millis{1000}).any_failed());
  {
    // T1 alone, then the process "dies": its connection goes, and the lock with it.
    cold::ColdStore store{test::postgres_url(), prefix};
    cold::BoardReset t1(store.link());
    t1.lock({"spill", "daily", "2026-11-22"});
    EXPECT_EQ(t1.empty_period(true).cold, 20);
  }
  // Meanwhile reads list the hot part only, and a tick runs as usual.
  EXPECT_EQ(listed("spill", "daily", now).size(), 10U);
  ASSERT_FALSE(tick(now + Millis{2000}).any_failed());
  const service::Reset again = lb(now).moderation().reset("spill", "daily");
  EXPECT_EQ(again.hot, 10);
  EXPECT_EQ(again.cold, 0);
  EXPECT_TRUE(listed("spill", "daily", now).empty());
  EXPECT_EQ(lb(now).moderation().reset("spill", "daily").total(), 0);
}

TEST_F(ResetDropTest, ResetWaitsForASpillHoldingThePeriodLock) {
  score("spill", 0, 20, 100, now);
  ASSERT_FALSE(tick(now + Millis{1000}).any_failed());
  // The lock a spill holds for its whole run.
  const cold::PeriodKey day{"spill", "daily", "2026-11-22"};
  ASSERT_TRUE(archive.try_lock_period(day));
  std::atomic<bool> done{false};
  std::thread resetter([&] {
    redis::Connection c = test::connect_redis();
    cold::ColdStore store{test::postgres_url(), prefix};
    Leaderboards l(config, c, Clock(now), &store);
    l.moderation().reset("spill", "daily");
    done = true;
  });
  // Until the reset waits for the lock (PostgreSQL shows it), or ends (bounded by count).
  bool waiting = false;
  for (int i = 0; i < 3000 && !waiting && !done.load(); ++i) {
    waiting =
        count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") > 0;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  EXPECT_TRUE(waiting);
  EXPECT_FALSE(done.load());
  // Nothing removed while it waits: neither the cold rows nor the hot members.
  EXPECT_EQ(cold_rows("spill"), 2 * 10);
  EXPECT_EQ(
      conn.command({"ZCARD", hot::BoardKeys(prefix, "spill").live("daily", "2026-11-22")}).as_int(),
      10);
  archive.unlock_period(day);
  resetter.join();
  EXPECT_TRUE(done.load());
  EXPECT_TRUE(listed("spill", "daily", now).empty());
}

TEST_F(ResetDropTest, DropWithoutHistoryRemovesLiveDataKeepsHistoryAndBansAndIsIdempotent) {
  score("spill", 0, 30, 100, at("2026-11-21T12:00:00Z"));
  ASSERT_FALSE(tick(at("2026-11-22T00:02:00Z")).any_failed());  // archives 2026-11-21
  score("spill", 0, 30, 100, now);
  ASSERT_FALSE(tick(now + Millis{1000}).any_failed());  // spills today and this week
  ASSERT_GT(cold_rows("spill"), 0);
  ASSERT_EQ(lb(now).apply(Update{"spill", "m1", 1, now, "", {}, {}, false, "Ann"}).status,
            UpdateStatus::applied);
  const hot::BoardKeys board(prefix, "spill");
  // The bans cache (slice rm's key, spelled here: <prefix>:{<board>}:bans).
  const std::string bans = prefix + ":{spill}:bans";
  conn.command({"HSET", bans, "", "1", "cheat", "1"}).checked();
  score("small", 0, 3, 1, now);  // another board: untouched
  const std::int64_t spill_history = history_rows("spill");
  ASSERT_EQ(spill_history, 30);

  Leaderboards l = lb(now);
  const service::Drop d = l.moderation().drop("spill", false);
  EXPECT_FALSE(d.history);
  std::int64_t hot = 0, cold_n = 0;
  for (const auto& p : d.periods) {
    EXPECT_FALSE(p.archived);
    hot += p.hot;
    cold_n += p.cold;
  }
  EXPECT_GT(hot, 0);
  EXPECT_GT(cold_n, 0);
  EXPECT_GE(d.profiles, 1);
  EXPECT_EQ(cold_rows("spill"), 0);
  EXPECT_EQ(cold_pages("spill"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".profiles WHERE board = 'spill'"), 0);
  EXPECT_EQ(history_rows("spill"), spill_history);  // kept without --history
  EXPECT_TRUE(listed("spill", "daily", now).empty());
  EXPECT_TRUE(listed("spill", "weekly", now).empty());
  EXPECT_EQ(conn.command({"EXISTS", board.registry(), board.synced(), board.names()}).as_int(), 0);
  EXPECT_EQ(conn.command({"SISMEMBER", hot::boards_key(prefix), "spill"}).as_int(), 0);
  EXPECT_EQ(conn.command({"HGET", bans, "cheat"}).as_string(), "1");  // bans kept
  EXPECT_EQ(listed("small", "daily", now).size(), 3U);

  EXPECT_EQ(l.moderation().drop("spill", false).total(), 0);  // idempotent

  // A later event starts the board again, from zero.
  const auto r = lb(now).apply(Update{"spill", "m5", 4, now, ""});
  ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
  EXPECT_EQ(r.points.at(0).points, 4);
  EXPECT_EQ((listed("spill", "daily", now)), (std::map<std::string, std::int64_t>{{"m5", 4}}));
  EXPECT_EQ(conn.command({"SISMEMBER", hot::boards_key(prefix), "spill"}).as_int(), 1);
}

TEST_F(ResetDropTest, TheBoardsKeysStayWhileTheRegistryHoldsAPeriodTheDropDidNotEmpty) {
  // An event created a period after drop listed the registry: board_drop.lua answers with it.
  score("spill", 0, 3, 1, now);
  hot::BoardReset reset(prefix);
  const hot::BoardKeys board(prefix, "spill");
  const auto first = reset.drop_board_keys(conn, board, {"daily:2026-11-22"});
  EXPECT_EQ(first.again, std::vector<std::string>{"weekly:2026-W47"});
  EXPECT_EQ(conn.command({"EXISTS", board.registry(), board.synced()}).as_int(), 2);
  const auto second = reset.drop_board_keys(conn, board, {"daily:2026-11-22", "weekly:2026-W47"});
  EXPECT_TRUE(second.again.empty());
  EXPECT_EQ(conn.command({"EXISTS", board.registry(), board.synced()}).as_int(), 0);
}

TEST_F(ResetDropTest, DropWithHistoryEmptiesTheHistoryViewOfTheBoardOnly) {
  archive.set_large_period_rows(20);  // the 30-member day is archived as a large period
  score("spill", 0, 30, 100, at("2026-11-20T12:00:00Z"));
  score("spill", 0, 5, 100, at("2026-11-21T12:00:00Z"));
  score("small", 0, 4, 1, at("2026-11-21T12:00:00Z"));
  ASSERT_FALSE(tick(at("2026-11-22T00:02:00Z")).any_failed());  // archives the 20th and 21st
  ASSERT_EQ(count("SELECT count(*) FROM " + prefix +
                  ".periods WHERE board = 'spill' AND history_part IS NOT NULL"),
            1);
  score("spill", 0, 12, 100, now);
  const std::int64_t small_history = history_rows("small");
  ASSERT_EQ(small_history, 4);
  ASSERT_EQ(history_rows("spill"), 35);

  Leaderboards l = lb(now);
  const service::Drop d = l.moderation().drop("spill", true);
  EXPECT_TRUE(d.history);
  std::int64_t archived_rows = 0;
  for (const auto& p : d.periods) {
    if (p.archived) archived_rows += p.history;
  }
  EXPECT_EQ(archived_rows, 35);
  EXPECT_EQ(history_rows("spill"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".periods WHERE board = 'spill'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM pg_tables WHERE schemaname = '" + prefix +
                  "' AND tablename LIKE 'history\\_large\\_%'"),
            0);
  EXPECT_EQ(history_rows("small"), small_history);
  EXPECT_TRUE(listed("spill", "daily", now).empty());
  EXPECT_EQ(l.moderation().drop("spill", true).total(), 0);  // idempotent
}

}  // namespace
}  // namespace bk
