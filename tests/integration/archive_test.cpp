// Archiving against real Redis and PostgreSQL: a replayed fortnight equals a brute-force
// model row for row; kills, concurrent ticks and servers going away never archive a period
// twice or lose a row; member ids survive byte for byte; a vanished key is reported lost.
// (Merges, retention and a broken board: archive_*_test.cpp, the same binary.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "archive_fixture.h"
#include "hot/keys.h"

namespace bk {
namespace {

using namespace archive_test;  // NOLINT(google-build-using-namespace): the suite's fixture

TEST_F(ArchiveTest, AFortnightReplayedWithTicksEqualsTheBruteForceModel) {
  // 2027-03-21 .. 2027-04-04 in Berlin: a DST change (Mar 28, a 23-hour day) and a month end.
  std::mt19937 rng(2027);
  std::vector<Update> events;
  const Instant start = at("2027-03-20T23:00:00Z");  // Mar 21 00:00 Berlin
  for (int hour = 0; hour < 14 * 24; ++hour) {
    for (int k = 0; k < 6; ++k) {
      const std::string member = rng() % 10 == 0 ? "odd \"member\"\t#" + std::to_string(rng() % 5)
                                                 : "f" + std::to_string(rng() % 60);
      events.push_back({"fort", member, static_cast<std::int64_t>(1 + rng() % 40),
                        start + std::chrono::hours{hour} + Millis{rng() % 3600000}, ""});
    }
  }
  std::sort(events.begin(), events.end(),
            [](const Update& a, const Update& b) { return *a.at < *b.at; });
  Boards model;
  // Play in 8-hour slices, ticking after each: spills and archives happen along the way.
  std::size_t next = 0;
  for (Instant t = start + std::chrono::hours{8}; next < events.size();
       t += std::chrono::hours{8}) {
    std::vector<Update> slice;
    while (next < events.size() && *events[next].at < t) slice.push_back(events[next++]);
    play("fort", slice, model);
    const auto report = tick(t + Millis{1001});
    ASSERT_FALSE(report.any_failed());
  }
  const auto report = tick(at("2027-05-01T00:00:00Z"));
  ASSERT_FALSE(report.any_failed());
  EXPECT_EQ(model.size(), 15U + 3U + 2U);  // 14 days (+1 for the late-evening start), weeks, months
  expect_archived("fort", model);
  // Redis holds nothing live for the board any more: closed :meta markers and the board's
  // sync marker, each with a TTL.
  const hot::BoardKeys keys(prefix, "fort");
  EXPECT_EQ(conn.command({"ZCARD", keys.registry()}).as_int(), 0);
  for (const auto& k : test::keys_with_prefix(conn, prefix + ":{fort}")) {
    EXPECT_TRUE((k.size() > 5 && k.substr(k.size() - 5) == ":meta") || k == keys.synced())
        << "left behind: " << k;
    EXPECT_GT(conn.command({"PTTL", k}).as_int(), 0) << k;
  }
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".cold_members"), 0);

  // The SQL functions of the history schema.
  const auto want = test::brute_force(model[{"monthly", "2027-03"}]);
  EXPECT_EQ(test::psql("SELECT member FROM " + prefix + ".top('fort', 'monthly', '2027-03', 1)"),
            want[0].member + "\n");
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".member_ranks('fort', 'daily', 'f7')"),
            static_cast<std::int64_t>(std::count_if(model.begin(), model.end(), [](const auto& e) {
              return e.first.first == "daily" && e.second.count("f7") == 1;
            })));
  std::int64_t best = 1000000;
  for (const auto& [key, members] : model) {
    if (key.first != "daily" || members.count("f7") == 0) continue;
    for (const auto& s : test::brute_force(members)) {
      if (s.member == "f7") best = std::min(best, s.rank);
    }
  }
  EXPECT_EQ(count("SELECT rank FROM " + prefix + ".best_finish('fort', 'daily', 'f7')"), best);
}

TEST_F(ArchiveTest, MemberIdsOfEveryAllowedFormReadBackByteForByte) {
  const std::vector<std::string> ids{"quote\"d",    "tab\there",      "new\nline",
                                     "back\\slash", "emoji 🏆🎉",       "日本語の名前",
                                     "comma,semi;", "{braces}",       "\\N",
                                     "NULL",        "carriage\rret",  std::string(512, 'x'),
                                     "\x7f del",    " leading space", "e\xcc\x81 (combining)"};
  Boards model;
  std::vector<Update> events;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    events.push_back({"hours", ids[i], static_cast<std::int64_t>(i % 4),
                      at("2027-01-04T10:00:00Z") + std::chrono::seconds{i}, ""});
  }
  play("hours", events, model);
  ASSERT_FALSE(tick(at("2027-01-04T12:00:00Z")).any_failed());
  expect_archived("hours", model);
  const auto r = test::run_cli({"--config", test::write_config(prefix, kBoards), "history", "hours",
                                "hourly", "2027-01-04T10", "-n", "100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("member":"new\nline")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("member":"quote\"d")"), std::string::npos);
  // History needs PostgreSQL only: it answers with Redis unreachable.
  const auto without_redis =
      test::run_cli({"--config", test::write_config(prefix, kBoards), "history", "hours", "hourly",
                     "2027-01-04T10", "-n", "100", "--json"},
                    {"BOARDKEEPER_REDIS_URL=redis://127.0.0.1:1/0"});
  EXPECT_EQ(without_redis.exit_code, 0) << without_redis.err;
  EXPECT_EQ(without_redis.out, r.out);
}

TEST_F(ArchiveTest, AVanishedHotKeyIsRecordedLostAndReported) {
  Boards model;
  play("hours", {{"hours", "ann", 3, at("2027-01-05T10:00:00Z"), ""}}, model);
  conn.command({"DEL", hot::BoardKeys(prefix, "hours").live("hourly", "2027-01-05T10")}).checked();
  const auto report = tick(at("2027-01-05T12:00:00Z"));
  EXPECT_TRUE(report.any_failed());
  EXPECT_EQ(archive.status({"hours", "hourly", "2027-01-05T10"}), cold::PeriodStatus::lost);
  // Reported once: the registry entry is gone, so the next tick is clean.
  EXPECT_FALSE(tick(at("2027-01-05T12:05:00Z")).any_failed());
  const auto r = test::run_cli({"--config", test::write_config(prefix, kBoards), "history", "hours",
                                "hourly", "2027-01-05T10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("lost"), std::string::npos) << r.err;
}

TEST_F(ArchiveTest, FourConcurrentTicksArchiveEachOf200PeriodsExactlyOnce) {
  Boards model;
  std::vector<Update> events;
  const Instant start = at("2027-01-11T00:00:00Z");
  for (int h = 0; h < 200; ++h) {
    for (int k = 0; k < 3; ++k) {
      events.push_back({"hours", "m" + std::to_string((h + k) % 7), 1 + k,
                        start + std::chrono::hours{h} + std::chrono::minutes{k}, ""});
    }
  }
  play("hours", events, model, Millis{10});
  ASSERT_EQ(model.size(), 200U);
  const std::string path = test::write_config(prefix, kBoards);
  std::vector<int> pids;
  for (int i = 0; i < 4; ++i) {
    pids.push_back(
        test::spawn_cli({"--config", path, "--now=2027-02-01T00:00:00Z", "tick", "--json"},
                        "/tmp/bk-conc-" + prefix + "-" + std::to_string(i) + ".log"));
  }
  std::int64_t archived_by_someone = 0, flagged = 0;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(test::wait_cli(pids[static_cast<std::size_t>(i)]), 0);
    std::ifstream log("/tmp/bk-conc-" + prefix + "-" + std::to_string(i) + ".log");
    for (std::string line; std::getline(log, line);) {
      if (line.find("\"note\":\"archived ") != std::string::npos) ++archived_by_someone;
      if (line.find("\"rows_archived\":3,\"archived\":true,") != std::string::npos) ++flagged;
    }
  }
  EXPECT_EQ(archived_by_someone, 200);  // each period by exactly one of the four
  EXPECT_EQ(flagged, 200);              // and its --json line says so
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".periods WHERE status = 'archived'"), 200);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".history_rows"), 600);
  expect_archived("hours", model);
}

TEST_F(ArchiveTest, KilledArchivesLeaveNothingOrEverythingAndFinishExactlyOnce) {
  std::vector<std::string> days;
  for (int d = 11; d <= 22; ++d) days.push_back("2027-01-" + std::to_string(d));
  Boards model = fill_big(conn, cold, config, days);
  // One tick while every day is still within its 30-day grace: each spills 20,000.
  lifecycle::Tick(config, conn, cold, archive, Clock(at("2027-01-23T00:00:00Z"))).run({});
  ASSERT_EQ(cold.reader().count({"big", "daily", days[0]}), 20000);
  const std::string path = test::write_config(prefix, kBoards);
  // Every other run archives each day as a large period: a table of its own, created,
  // filled, indexed and attached in the archive's transaction.
  const std::string large_path = "/tmp/bk-test-" + prefix + "-large.yaml";
  std::ofstream(large_path) << test::config_text(prefix, kBoards)
                            << "history:\n  large_period_rows: 40000\n";
  std::mt19937 rng(8);
  int kills = 0;
  for (int run = 0; run < 200 && kills < 20; ++run) {
    const int pid = test::spawn_cli(
        {"--config", run % 2 == 0 ? path : large_path, "--now=2027-03-01T00:00:00Z", "tick"},
        "/tmp/bk-kill-archive-" + prefix + ".log");
    // The first 20 kills come early in a run (no run can finish twelve periods that fast),
    // the later ones anywhere in it, until a run finishes.
    std::this_thread::sleep_for(std::chrono::milliseconds(30 + rng() % (kills < 20 ? 250 : 700)));
    kill(pid, SIGKILL);
    const int code = test::wait_cli(pid);
    if (code == 128 + SIGKILL) ++kills;
    // Every period is either not archived at all or archived completely. Status and rows
    // are read in one statement (one snapshot): the server may still be committing the
    // transaction of a run killed just after it sent COMMIT.
    for (const auto& day : days) {
      const std::string seen =
          test::psql("SELECT coalesce((SELECT status FROM " + prefix +
                     ".periods WHERE board = 'big' AND period = 'daily' AND period_id = '" + day +
                     "'), 'none') || ' ' || (SELECT count(*) FROM " + prefix +
                     ".history WHERE period_id = '" + day + "')");
      if (seen.rfind("archived ", 0) == 0) {
        ASSERT_EQ(seen, "archived 50000\n") << day;
      } else {
        ASSERT_EQ(seen.substr(seen.find(' ')), " 0\n") << day;
      }
    }
    if (code == 0) break;  // a run finished everything
  }
  EXPECT_GE(kills, 20);
  const auto r = test::run_cli({"--config", large_path, "--now=2027-03-01T00:00:00Z", "tick"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_archived("big", model);
  // Both ways were taken (the killed runs' large periods left no table behind).
  EXPECT_GT(count("SELECT count(*) FROM " + prefix + ".periods WHERE history_part IS NOT NULL"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM pg_tables WHERE schemaname = '" + prefix +
                  "' AND tablename LIKE 'history\\_large\\_%'"),
            count("SELECT count(*) FROM " + prefix + ".periods WHERE history_part IS NOT NULL"));
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".cold_members"), 0);
}

std::int64_t count_of(const std::string& sql) {
  return std::stoll(test::psql(sql));
}

// The tick under test: its schema and key prefix, its config file, its PostgreSQL
// application name.
struct TickUnderTest {
  std::string prefix, path, app;
};

// PostgreSQL: another session locks the month's history partition, so the archive's write
// into history waits; then the tick's connections are terminated, each time it waits there
// (its retry of the board too). The lock is held until the test releases it (at most 30 s).
// The tick exits 3.
void tick_while_postgres_goes_away(const TickUnderTest& t) {
  const auto count = count_of;
  const std::string& prefix = t.prefix;
  const std::string& path = t.path;
  const std::string& app = t.app;
  const std::string release = "bk_release_" + prefix;
  std::thread locker([&] {
    test::psql("BEGIN; LOCK TABLE " + prefix + ".history_rows_y2027m01 IN ACCESS EXCLUSIVE MODE; " +
               "DO 'BEGIN FOR i IN 1..1200 LOOP PERFORM pg_sleep(0.025); "
               "PERFORM pg_stat_clear_snapshot(); EXIT WHEN EXISTS (SELECT 1 FROM "
               "pg_stat_activity WHERE application_name = ''" +
               release + "''); END LOOP; END'; COMMIT;");
  });
  // The tick starts once the lock is held (a fixed pause lost the race on a loaded machine:
  // the tick archived before psql had the lock).
  for (int i = 0; i < 400; ++i) {
    if (count("SELECT count(*) FROM pg_locks WHERE granted AND mode = 'AccessExclusiveLock' "
              "AND relation = '" +
              prefix + ".history_rows_y2027m01'::regclass") > 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  const std::string log = "/tmp/bk-archive-down-" + prefix + ".log";
  int pid = test::spawn_cli({"--config", path, "--now=2027-03-01T00:00:00Z", "tick"}, log);
  int terminated = 0;
  for (siginfo_t exited{}; exited.si_pid == 0;
       waitid(P_PID, static_cast<id_t>(pid), &exited, WEXITED | WNOHANG | WNOWAIT)) {
    if (count("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app +
              "' AND wait_event_type = 'Lock'") > 0) {
      test::psql(
          "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
          "application_name = '" +
          app + "'");
      ++terminated;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(test::wait_cli(pid), 3);
  EXPECT_GE(terminated, 1);
  test::psql("SET application_name = '" + release + "'; SELECT pg_sleep(0.5)");
  locker.join();
}

// Redis: the tick's Redis connection is cut while its COPY of the hot members is streaming
// (chunks of 10 members: 3,000 reads from Redis, a window the poll below cannot miss), and
// Redis stays away: the connection of the tick's retry of the board is cut too. The tick
// exits 3.
void tick_while_redis_goes_away(redis::Connection& conn, const TickUnderTest& t) {
  const auto count = count_of;
  const std::string& app = t.app;
  const std::string log = "/tmp/bk-archive-down-" + t.prefix + ".log";
  const int pid = test::spawn_cli(
      {"--config", t.path, "--now=2027-03-01T00:00:00Z", "tick", "--chunk", "10"}, log);
  bool cut = false;
  for (siginfo_t exited{}; exited.si_pid == 0;
       waitid(P_PID, static_cast<id_t>(pid), &exited, WEXITED | WNOHANG | WNOWAIT)) {
    if (!cut && count("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app +
                      "' AND query LIKE 'COPY%'") == 0) {
      continue;
    }
    // Every server's connections of the tick (on a cluster, one per master).
    for (std::size_t m = 0; m < conn.masters(); ++m) {
      std::istringstream lines(conn.master_command(m, {"CLIENT", "LIST"}).as_string());
      for (std::string line; std::getline(lines, line);) {
        if (line.find("name=boardkeeper:" + std::to_string(pid) + " ") == std::string::npos) {
          continue;
        }
        const auto id = line.substr(3, line.find(' ') - 3);
        conn.master_command(m, {"CLIENT", "KILL", "ID", id});  // gone meanwhile: an error reply
        cut = true;
      }
    }
  }
  const int code = test::wait_cli(pid);
  EXPECT_TRUE(cut) << "the tick finished before its Redis connection could be cut";
  EXPECT_EQ(code, 3);
}

TEST_F(ArchiveTest, PostgresOrRedisGoingAwayMidArchiveLosesNothing) {
  const std::vector<std::string> days{"2027-01-25"};
  Boards model = fill_big(conn, cold, config, days);
  tick(at("2027-01-26T00:00:00Z"));  // spill 20,000 to the cold tier
  const std::string app = "bk_" + prefix;
  const std::string path = "/tmp/bk-test-" + prefix + "-app.yaml";
  std::ofstream(path) << test::config_text(prefix, kBoards,
                                           test::postgres_url() + "?application_name=" + app);
  archive.ensure_partitions(at("2027-01-01T00:00:00Z"), at("2027-04-01T00:00:00Z"));

  tick_while_postgres_goes_away({prefix, path, app});
  const cold::PeriodKey key{"big", "daily", "2027-01-25"};
  EXPECT_EQ(archive.status(key), cold::PeriodStatus::open);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".history_rows"), 0);
  const hot::BoardKeys keys(prefix, "big");
  EXPECT_EQ(conn.command({"ZCARD", keys.live("daily", "2027-01-25")}).as_int(), 30000);
  EXPECT_EQ(cold.reader().count(key), 20000);

  tick_while_redis_goes_away(conn, {prefix, path, app});
  // Either nothing was archived and everything is still in Redis and the cold tier, or the
  // commit happened first and only the freeing of keys is left: nothing was deleted unarchived.
  if (archive.status(key) == cold::PeriodStatus::open) {
    EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".history_rows"), 0);
    EXPECT_EQ(conn.command({"ZCARD", keys.live("daily", "2027-01-25")}).as_int(), 30000);
  }
  const auto r = test::run_cli({"--config", path, "--now=2027-03-01T00:00:00Z", "tick"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_archived("big", model);
  EXPECT_EQ(conn.command({"EXISTS", keys.live("daily", "2027-01-25")}).as_int(), 0);
}

}  // namespace
}  // namespace bk
