// Archiving against real Redis and PostgreSQL: a replayed fortnight equals a brute-force
// model row for row; kills, concurrent ticks and servers going away never archive a period
// twice or lose a row; member ids survive byte for byte; a vanished key is reported lost.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "hot/keys.h"
#include "lifecycle/tick.h"
#include "model.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using service::Leaderboards;
using service::Update;
using service::UpdateStatus;
using test::Model;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

// Dates are in 2027 with a 10-year retention: Redis expires keys by its own clock.
const char* kBoards = R"(  - name: fort
    periods: [daily, weekly, monthly]
    timezone: Europe/Berlin
    max_points: 1000000
    hot_keep: 8
    display: 5
    retention: {default: 3650d}
  - name: hours
    periods: [hourly]
    max_points: 1000
    archive: {grace: 1m}
    retention: {default: 3650d}
  - name: big
    periods: [daily]
    max_points: 10000000
    hot_keep: 30000
    display: 10
    archive: {grace: 30d}
    retention: {default: 3650d}
)";

using Boards = std::map<std::pair<std::string, std::string>, std::map<std::string, Model>>;

class ArchiveTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};

  void SetUp() override { cold.migrate(); }

  // Applies events (in order, each at its own time) and records them in the model, per
  // period of the board.
  void play(const std::string& board, const std::vector<Update>& events, Boards& model,
            Millis processing_delay = Millis{1000}) {
    const BoardConfig* c = config.board_for(board);
    for (const Update& u : events) {
      Leaderboards lb(config, conn, Clock(*u.at + processing_delay), &cold);
      const auto r = lb.apply(u);
      ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
      for (const PeriodSpec& p : c->periods) {
        Model& m = model[{p.name, period_containing(p, *c->zone, *u.at).id}][u.member];
        m.points += u.value;
        m.at = *u.at;
      }
    }
  }

  lifecycle::TickReport tick(Instant now) {
    return lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({});
  }

  void expect_archived(const std::string& board, const Boards& model) {
    for (const auto& [key, members] : model) {
      const cold::PeriodKey pk{board, key.first, key.second};
      ASSERT_EQ(archive.status(pk), cold::PeriodStatus::archived) << key.first << " " << key.second;
      const auto want = test::brute_force(members);
      const auto got = archive.history(pk, 1000000);
      ASSERT_EQ(got.size(), want.size()) << key.first << " " << key.second;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const service::Standing g{got[i].rank, got[i].member, got[i].points, got[i].achieved_at};
        ASSERT_TRUE(test::same(g, want[i])) << key.first << " " << key.second << " position " << i;
        ASSERT_EQ(got[i].position, static_cast<std::int64_t>(i + 1));
      }
    }
  }

  std::int64_t count(const std::string& sql) { return std::stoll(test::psql(sql)); }
};

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

// Fills `days` daily periods of board "big" with 50,000 members each and spills 20,000 of
// each to the cold tier, so archives merge both tiers.
Boards fill_big(ArchiveTest* t, redis::Connection& conn, cold::ColdStore& cold,
                const Config& config, const std::vector<std::string>& days) {
  Boards model;
  std::mt19937 rng(4);
  for (const std::string& day : days) {
    const Instant base = *parse_rfc3339(day + "T01:00:00Z");
    std::vector<Update> events;
    auto& m = model[{"daily", day}];
    for (int i = 0; i < 50000; ++i) {
      Update u{"big", "u" + std::to_string(i), static_cast<std::int64_t>(rng() % 100000),
               base + Millis{rng() % 3600000}, ""};
      m[u.member] = Model{u.value, *u.at};
      events.push_back(u);
    }
    Leaderboards lb(config, conn, Clock(base + std::chrono::hours{2}), &cold);
    for (const auto& r : lb.apply(events)) EXPECT_EQ(r.status, UpdateStatus::applied) << r.reason;
  }
  (void)t;
  return model;
}

TEST_F(ArchiveTest, KilledArchivesLeaveNothingOrEverythingAndFinishExactlyOnce) {
  std::vector<std::string> days;
  for (int d = 11; d <= 22; ++d) days.push_back("2027-01-" + std::to_string(d));
  Boards model = fill_big(this, conn, cold, config, days);
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

TEST_F(ArchiveTest, PostgresOrRedisGoingAwayMidArchiveLosesNothing) {
  const std::vector<std::string> days{"2027-01-25"};
  Boards model = fill_big(this, conn, cold, config, days);
  tick(at("2027-01-26T00:00:00Z"));  // spill 20,000 to the cold tier
  const std::string app = "bk_" + prefix;
  const std::string path = "/tmp/bk-test-" + prefix + "-app.yaml";
  std::ofstream(path) << test::config_text(prefix, kBoards,
                                           test::postgres_url() + "?application_name=" + app);
  archive.ensure_partitions(at("2027-01-01T00:00:00Z"), at("2027-04-01T00:00:00Z"));

  // PostgreSQL: another session locks the month's history partition, so the archive's write
  // into history waits; then the tick's connections are terminated, each time it waits there
  // (its retry of the board too). The lock is held until the test releases it (at most 30 s).
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
  const cold::PeriodKey key{"big", "daily", "2027-01-25"};
  EXPECT_EQ(archive.status(key), cold::PeriodStatus::open);
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".history_rows"), 0);
  const hot::BoardKeys keys(prefix, "big");
  EXPECT_EQ(conn.command({"ZCARD", keys.live("daily", "2027-01-25")}).as_int(), 30000);
  EXPECT_EQ(cold.reader().count(key), 20000);

  // Redis: the tick's Redis connection is cut while its COPY of the hot members is streaming
  // (chunks of 10 members: 3,000 reads from Redis, a window the poll below cannot miss), and
  // Redis stays away: the connection of the tick's retry of the board is cut too.
  pid = test::spawn_cli({"--config", path, "--now=2027-03-01T00:00:00Z", "tick", "--chunk", "10"},
                        log);
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

// The archive's merge runs in PostgreSQL (only the hot members travel). On random boards of
// every order and tie-break, with ties, members spilled and rehydrated, and stale cold rows
// (a cold row of a member that is hot: the hot value wins), the history equals the
// contract's listing computed here from the events, row for row. Run twice: into the shared
// month partition, and as large periods (each into a table of its own, indexed after).
class ArchiveMergeTest : public ::testing::TestWithParam<bool> {};

TEST_P(ArchiveMergeTest, RandomBoardsOfEveryOrderAndTieBreakArchiveAsTheirListing) {
  const bool large = GetParam();
  struct Kind {
    std::string name, order, tie, resolution;
  };
  const std::vector<Kind> kinds{{"dese", "desc", "earliest", "s"},
                                {"desl", "desc", "latest", "ms"},
                                {"ascn", "asc", "none", "ms"},
                                {"asce", "asc", "earliest", "s"},
                                {"ascl", "asc", "latest", "s"}};
  std::string yaml;
  for (const Kind& k : kinds) {
    yaml += "  - name: " + k.name + "\n    periods: [daily]\n    order: " + k.order +
            "\n    tie_break: " + k.tie + "\n    time_resolution: " + k.resolution +
            "\n    max_points: 1000\n    hot_keep: 6\n    display: 3\n"
            "    archive: {grace: 1m}\n    retention: {default: 3650d}\n";
  }
  const std::string prefix = test::unique_prefix();
  const Config config = test::make_config(prefix, yaml);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold(test::postgres_url(), prefix);
  cold.migrate();
  cold::History archive(test::postgres_url(), prefix);
  if (large) archive.set_large_period_rows(1);
  const std::string day = "2027-02-10";
  const Instant start = at("2027-02-10T00:00:00Z");
  auto tick = [&](Instant now) {
    ASSERT_FALSE(lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({}).any_failed());
  };
  std::mt19937 rng(12);
  struct Member {
    std::int64_t points = 0;
    Instant when;
  };
  std::map<std::string, std::map<std::string, Member>> model;  // board -> member -> state
  // Members whose ids differ in bytes that collations order differently.
  const std::vector<std::string> names{"a",   "B",   "b",  "_x", "Z9", "z",  "é", "e", "10", "9",
                                       "a b", "a-b", "ab", "A",  "ß",  "ss", "m", "n", "o",  "p",
                                       "q",   "r",   "s",  "t",  "u",  "v",  "w", "x", "y",  "00"};
  // Events in time order, many within one second (ties at 1 s resolution); values small
  // (ties in points).
  Instant t = start + std::chrono::hours{1};
  auto play = [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (rng() % 12 == 0) t += Millis{1000 + rng() % 1500};
      const Kind& k = kinds[rng() % kinds.size()];
      const std::string& member = names[rng() % names.size()];
      const std::int64_t value = 1 + static_cast<std::int64_t>(rng() % 3);
      Leaderboards lb(config, conn, Clock(t + Millis{10}), &cold);
      const auto r = lb.apply(Update{k.name, member, value, t, ""});
      ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
      Member& m = model[k.name][member];
      m.points += value;
      const Millis res{k.resolution == "s" ? 1000 : 1};
      m.when = start + (t - start) / res * res;
    }
  };
  play(300);
  tick(t + Millis{1000});  // each board spills down to 6
  play(300);               // rehydrates some, spills again below
  tick(t + Millis{1000});
  play(100);
  // Stale cold rows: rows for members that are hot now, with scores they no longer have.
  for (const Kind& k : kinds) {
    const auto hot_members =
        conn.command({"ZRANGE", hot::BoardKeys(prefix, k.name).live("daily", day), "0", "2"});
    std::vector<cold::ColdRow> stale;
    for (const auto& e : hot_members.elements) {
      stale.push_back({e.as_string(), 0, k.order == "desc" ? 1000 : 0, start});
    }
    ASSERT_FALSE(stale.empty());
    cold.upsert({k.name, "daily", day}, stale);
  }
  tick(at("2027-02-11T00:05:00Z"));

  for (const Kind& k : kinds) {
    SCOPED_TRACE(k.name);
    const bool desc = k.order == "desc";
    const bool tied = k.tie != "none";
    struct Row {
      std::string member;
      std::int64_t points;
      Instant when;
    };
    std::vector<Row> want;
    for (const auto& [member, m] : model[k.name]) want.push_back({member, m.points, m.when});
    auto better = [&](const Row& a, const Row& b) {  // strictly better, ignoring the member
      if (a.points != b.points) return desc ? a.points > b.points : a.points < b.points;
      if (!tied || a.when == b.when) return false;
      return k.tie == "earliest" ? a.when < b.when : a.when > b.when;
    };
    std::sort(want.begin(), want.end(), [&](const Row& a, const Row& b) {
      if (better(a, b)) return true;
      if (better(b, a)) return false;
      return a.member < b.member;  // bytewise
    });
    const auto got = archive.history({k.name, "daily", day}, 1000);
    ASSERT_EQ(got.size(), want.size());
    std::int64_t rank = 0;
    std::size_t same_points = 0, ties = 0;  // next to the one before: equal points; equal rank
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (i > 0 && want[i - 1].points == want[i].points) ++same_points;
      if (i == 0 || better(want[i - 1], want[i])) {
        rank = static_cast<std::int64_t>(i + 1);
      } else {
        ++ties;
      }
      EXPECT_EQ(got[i].position, static_cast<std::int64_t>(i + 1));
      EXPECT_EQ(got[i].member, want[i].member) << "position " << i + 1;
      EXPECT_EQ(got[i].points, want[i].points) << want[i].member;
      EXPECT_EQ(got[i].rank, rank) << want[i].member;
      if (tied) {
        ASSERT_TRUE(got[i].achieved_at.has_value());
        EXPECT_EQ(*got[i].achieved_at, want[i].when) << want[i].member;
      } else {
        EXPECT_FALSE(got[i].achieved_at.has_value());
      }
    }
    // Otherwise the test would not see the order the tie-break gives, or ranks shared.
    EXPECT_GT(same_points, 0U) << "the events made no equal points";
    if (k.resolution == "s" || !tied) {
      EXPECT_GT(ties, 0U) << "the events made no full ties";
    }
    // The view and the SQL functions read the same rows, wherever they live.
    const std::string where =
        " WHERE board = '" + k.name + "' AND period = 'daily' AND period_id = '" + day + "'";
    EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".history" + where),
              std::to_string(want.size()) + "\n");
    EXPECT_EQ(test::psql("SELECT string_agg(member || ':' || rank, ',') FROM " + prefix + ".top('" +
                         k.name + "', 'daily', '" + day + "', 3)"),
              got[0].member + ":" + std::to_string(got[0].rank) + "," + got[1].member + ":" +
                  std::to_string(got[1].rank) + "," + got[2].member + ":" +
                  std::to_string(got[2].rank) + "\n");
    EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".history_large" + where),
              large ? std::to_string(want.size()) + "\n" : "0\n");
    EXPECT_EQ(test::psql("SELECT history_part IS NOT NULL FROM " + prefix + ".periods" + where),
              large ? "t\n" : "f\n");
  }
  EXPECT_EQ(std::stoll(test::psql("SELECT count(*) FROM " + prefix + ".cold_members")), 0);
}

INSTANTIATE_TEST_SUITE_P(SharedOrOwnTable, ArchiveMergeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Large" : "Shared";
                         });

// History retention: periods past their period name's retention lose their rows (a month
// partition whose periods are all due is dropped whole), keep their periods row (pruned_at
// set); other periods, names kept forever and other boards are untouched; a dry run and a
// re-run change nothing.
TEST(HistoryRetentionTest, DuePeriodsArePrunedWholeMonthsDroppedTheRestUntouched) {
  const std::string prefix = test::unique_prefix();
  const std::string boards = R"(  - name: keep
    periods: [daily]
    max_points: 1000
    retention: {default: 3650d}
  - name: ret
    periods: [daily, monthly]
    max_points: 1000
    retention: {default: 3650d}
  - name: other
    periods: [weekly]
    max_points: 1000
    retention: {default: 3650d}
)";
  const std::string text =
      test::config_text(prefix, boards) + "history:\n  retention:\n    daily: 30d\n";
  const Config config = parse_config(text, "test.yaml", {});
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold(test::postgres_url(), prefix);
  cold.migrate();
  cold::History archive(test::postgres_url(), prefix);
  auto add = [&](const std::string& board, const char* when) {
    Leaderboards lb(config, conn, Clock(at(when)), &cold);
    for (const char* m : {"ann", "bob", "cy"}) {
      ASSERT_EQ(lb.apply(Update{board, m, 5, at(when), ""}).status, UpdateStatus::applied);
    }
  };
  add("keep", "2026-12-10T10:00:00Z");
  add("keep", "2026-12-11T10:00:00Z");
  add("keep", "2027-01-05T10:00:00Z");
  add("ret", "2027-01-06T10:00:00Z");
  add("ret", "2027-01-07T10:00:00Z");
  add("other", "2027-01-05T10:00:00Z");
  add("keep", "2027-02-25T10:00:00Z");
  add("ret", "2027-02-25T10:00:00Z");
  const std::string q = prefix + ".";
  auto count = [&](const std::string& sql) { return std::stoll(test::psql(sql)); };
  auto rows_of = [&](const std::string& board, const std::string& period, const std::string& id) {
    return count("SELECT count(*) FROM " + q + "history_rows WHERE board = '" + board +
                 "' AND period = '" + period + "' AND period_id = '" + id + "'");
  };
  auto tick = [&](const char* now, bool dry_run = false) {
    lifecycle::TickOptions o;
    o.dry_run = dry_run;
    const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(at(now))).run(o);
    EXPECT_FALSE(report.any_failed()) << report.history.error;
    return report.history;
  };

  // Feb 1: everything up to January is archived; the December days are past 30 days and
  // alone in their month: the partition goes whole.
  auto h = tick("2027-02-01T00:30:00Z");
  EXPECT_EQ(h.periods, 2);
  EXPECT_EQ(h.rows, 6);
  EXPECT_EQ(h.partitions, 1);
  EXPECT_EQ(test::psql("SELECT to_regclass('" + q + "history_rows_y2026m12') IS NULL"), "t\n");
  EXPECT_EQ(count("SELECT count(*) FROM " + q +
                  "periods WHERE period_id IN ('2026-12-10', '2026-12-11') AND pruned_at IS NOT "
                  "NULL AND status = 'archived' AND members = 3"),
            2);
  EXPECT_EQ(rows_of("keep", "daily", "2027-01-05"), 3);  // not due yet (ended Jan 6)

  // A dry run says what would go and removes nothing.
  h = tick("2027-03-01T00:30:00Z", true);
  EXPECT_EQ(h.periods, 3);
  EXPECT_EQ(h.rows, 9);
  EXPECT_EQ(rows_of("keep", "daily", "2027-01-05"), 3);

  // Mar 1: the January days go row by row, as the month also holds periods kept forever
  // (ret's January, other's first week); the February days are not due.
  h = tick("2027-03-01T00:30:00Z");
  EXPECT_EQ(h.periods, 3);
  EXPECT_EQ(h.rows, 9);
  EXPECT_EQ(h.partitions, 0);
  for (const auto& [board, id] : std::vector<std::pair<std::string, std::string>>{
           {"keep", "2027-01-05"}, {"ret", "2027-01-06"}, {"ret", "2027-01-07"}}) {
    EXPECT_EQ(rows_of(board, "daily", id), 0) << board << " " << id;
  }
  EXPECT_EQ(rows_of("ret", "monthly", "2027-01"), 3);
  EXPECT_EQ(rows_of("other", "weekly", "2027-W01"), 3);
  EXPECT_EQ(rows_of("keep", "daily", "2027-02-25"), 3);
  EXPECT_EQ(rows_of("ret", "daily", "2027-02-25"), 3);
  EXPECT_EQ(rows_of("ret", "monthly", "2027-02"), 3);
  EXPECT_EQ(test::psql("SELECT to_regclass('" + q + "history_rows_y2027m01') IS NOT NULL"), "t\n");
  EXPECT_EQ(count("SELECT count(*) FROM " + q + "periods WHERE pruned_at IS NOT NULL"), 5);

  // Again: nothing more.
  const std::int64_t before = count("SELECT count(*) FROM " + q + "history_rows");
  h = tick("2027-03-01T00:40:00Z");
  EXPECT_EQ(h.periods, 0);
  EXPECT_EQ(count("SELECT count(*) FROM " + q + "history_rows"), before);

  // The history command says the rows are gone rather than showing an empty period.
  const auto r =
      test::run_cli({"--config", test::write_text_config(prefix, text),
                     "--now=2027-03-01T00:40:00Z", "history", "keep", "daily", "2027-01-05"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("history.retention"), std::string::npos) << r.err;
}

// Each period name keeps its history for its own retention, counted from the period's end:
// with daily 30d and weekly 400d, a tick removes only the daily period that ended more than
// 30 days ago. (Pruning a period as soon as it ended would remove all four here: the two
// weeks and the daily period that were not due.)
TEST(HistoryRetentionTest, EachPeriodIsKeptForItsOwnRetentionFromItsEnd) {
  const std::string prefix = test::unique_prefix();
  const std::string text = test::config_text(prefix, R"(  - name: mixed
    periods: [daily, weekly]
    max_points: 1000
    retention: {default: 3650d}
)") + "history:\n  retention:\n    daily: 30d\n    weekly: 400d\n";
  const Config config = parse_config(text, "test.yaml", {});
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold(test::postgres_url(), prefix);
  cold.migrate();
  cold::History archive(test::postgres_url(), prefix);
  for (const char* when : {"2027-01-05T10:00:00Z", "2027-01-20T10:00:00Z"}) {
    Leaderboards lb(config, conn, Clock(at(when)), &cold);
    ASSERT_EQ(lb.apply(Update{"mixed", "ann", 5, at(when), ""}).status, UpdateStatus::applied);
  }
  std::int64_t pruned = 0;
  for (const char* now : {"2027-02-01T00:30:00Z", "2027-02-10T00:30:00Z"}) {
    const auto report =
        lifecycle::Tick(config, conn, cold, archive, Clock(at(now))).run(lifecycle::TickOptions{});
    EXPECT_FALSE(report.any_failed()) << report.history.error;
    pruned += report.history.periods;
  }
  EXPECT_EQ(pruned, 1);
  const auto rows_of = [&](const std::string& period, const std::string& id) {
    return test::psql("SELECT count(*) FROM " + prefix +
                      ".history_rows WHERE board = 'mixed' AND period = '" + period +
                      "' AND period_id = '" + id + "'");
  };
  EXPECT_EQ(rows_of("daily", "2027-01-05"), "0\n");  // ended Jan 6: past 30 days on Feb 10
  EXPECT_EQ(rows_of("daily", "2027-01-20"), "1\n");  // ended Jan 21: 20 days
  EXPECT_EQ(rows_of("weekly", "2027-W01"), "1\n");   // 400 days
  EXPECT_EQ(rows_of("weekly", "2027-W03"), "1\n");
}

// A large period's history is a table of its own: retention drops it whole, and leaves the
// shared month partition's other periods (and the tables of periods not due) alone.
TEST(HistoryRetentionTest, ALargePeriodsTableIsDroppedWhole) {
  const std::string prefix = test::unique_prefix();
  const std::string text = test::config_text(prefix, R"(  - name: ret
    periods: [daily]
    max_points: 1000
    retention: {default: 3650d}
  - name: keep
    periods: [weekly]
    max_points: 1000
    retention: {default: 3650d}
)") + "history:\n  retention:\n    daily: 30d\n";
  const Config config = parse_config(text, "test.yaml", {});
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold(test::postgres_url(), prefix);
  cold.migrate();
  cold::History archive(test::postgres_url(), prefix);
  archive.set_large_period_rows(3);
  auto add = [&](const std::string& board, const char* when, std::vector<const char*> members) {
    Leaderboards lb(config, conn, Clock(at(when)), &cold);
    for (const char* m : members) {
      ASSERT_EQ(lb.apply(Update{board, m, 5, at(when), ""}).status, UpdateStatus::applied);
    }
  };
  add("ret", "2027-01-05T10:00:00Z", {"ann", "bob", "cy"});   // large
  add("ret", "2027-01-06T10:00:00Z", {"ann", "bob"});         // shared partition
  add("ret", "2027-01-20T10:00:00Z", {"ann", "bob", "cy"});   // large, not due yet
  add("keep", "2027-01-05T10:00:00Z", {"ann", "bob", "cy"});  // large, kept
  const std::string q = prefix + ".";
  auto count = [&](const std::string& sql) { return std::stoll(test::psql(sql)); };
  auto rows_of = [&](const std::string& id) {
    return count("SELECT count(*) FROM " + q + "history WHERE board = 'ret' AND period_id = '" +
                 id + "'");
  };
  auto tick = [&](const char* now) {
    const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(at(now))).run({});
    EXPECT_FALSE(report.any_failed()) << report.history.error;
    return report.history;
  };
  tick("2027-02-01T00:30:00Z");  // archives everything
  const std::string part_of_first = test::psql(
      "SELECT history_part FROM " + q + "periods WHERE board = 'ret' AND period_id = '2027-01-05'");
  ASSERT_NE(part_of_first, "\n");
  const std::string table =
      q + "history_large_" + part_of_first.substr(0, part_of_first.size() - 1);
  EXPECT_EQ(test::psql("SELECT to_regclass('" + table + "') IS NOT NULL"), "t\n");

  auto h = tick("2027-02-10T00:30:00Z");  // Jan 5 and 6 are past 30 days
  EXPECT_EQ(h.periods, 2);
  EXPECT_EQ(h.rows, 5);
  EXPECT_EQ(h.partitions, 1);  // the large period's table; the month keeps `keep`
  EXPECT_EQ(test::psql("SELECT to_regclass('" + table + "') IS NULL"), "t\n");
  EXPECT_EQ(rows_of("2027-01-05"), 0);
  EXPECT_EQ(rows_of("2027-01-06"), 0);
  EXPECT_EQ(rows_of("2027-01-20"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM " + q + "history WHERE board = 'keep'"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM " + q + "periods WHERE pruned_at IS NOT NULL"), 2);

  h = tick("2027-02-10T00:40:00Z");  // again: nothing more
  EXPECT_EQ(h.periods, 0);
  EXPECT_EQ(rows_of("2027-01-20"), 3);
}

// A tick with one broken board: the board whose keys are of the wrong type (an operator's
// SET, a stray tool) fails alone, exit 1, named with Redis's error in the report (text and
// --json) and in the summary; the other boards' closed periods are archived and their open
// ones spilled (boards are visited by name: "broken" comes between them); the metrics file is
// written; the broken keys are left as they are (never recorded lost, never deleted).
const char* kThreeBoards = R"(  - name: alpha
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 3650d}
  - name: broken
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 3650d}
  - name: charlie
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 3650d}
)";

class TickWithABrokenBoardTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kThreeBoards);
  Config config = test::make_config(prefix, kThreeBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};
  std::string metrics_file = "/tmp/bk-tick-broken-" + prefix + ".prom";
  const hot::BoardKeys broken{prefix, "broken"};

  void SetUp() override { cold.migrate(); }
  void TearDown() override { std::remove(metrics_file.c_str()); }

  // Every board: 12 members on Jan 4 (closed by the tick's time: to archive) and 9 on
  // Jan 5 (open: 4 past hot_keep to spill).
  void fill() {
    for (const char* board : {"alpha", "charlie", "broken"}) {
      for (const auto& [day, n] :
           {std::pair{"2027-01-04T09:00:00Z", 12}, std::pair{"2027-01-05T09:00:00Z", 9}}) {
        Leaderboards lb(config, conn, Clock(at(day)), &cold);
        std::vector<Update> updates;
        for (int i = 0; i < n; ++i) {
          updates.push_back({board, "m" + std::to_string(i), 1 + i, at(day), ""});
        }
        for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, UpdateStatus::applied);
      }
    }
  }

  test::RunResult tick(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path, "--now", "2027-01-05T12:00:00Z"});
    return test::run_cli(args);
  }

  // The value of an unlabelled sample in the metrics file (NaN when it is missing).
  double metric(const std::string& name) {
    std::istringstream lines(test::read_file(metrics_file));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
    }
    ADD_FAILURE() << name << " is not in " << metrics_file;
    return std::nan("");
  }

  // What a tick with `broken` broken must do, whichever of its keys is of the wrong type.
  void expect_only_the_broken_board_fails() {
    auto r = tick({"--log-format", "json", "tick", "--json", "--metrics-file", metrics_file});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    // The report (--json): the broken board's error line, naming it and Redis's reason.
    std::string error_line;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);) {
      if (line.find("\"board\":\"broken\"") != std::string::npos) {
        EXPECT_TRUE(error_line.empty()) << "more than one line for board broken:\n" << r.out;
        error_line = line;
      }
    }
    EXPECT_NE(error_line.find("\"error\":"), std::string::npos) << r.out;
    EXPECT_NE(error_line.find("WRONGTYPE"), std::string::npos) << r.out;
    // ... and the other boards' periods: Jan 4 archived, Jan 5 spilled.
    for (const char* board : {"alpha", "charlie"}) {
      const std::string b = std::string("{\"board\":\"") + board + "\"";
      EXPECT_NE(r.out.find(b + ",\"period\":\"daily\",\"period_id\":\"2027-01-04\""),
                std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find(b + ",\"period\":\"daily\",\"period_id\":\"2027-01-05\",\"hot_before\":"
                               "9,\"spilled\":4"),
                std::string::npos)
          << r.out;
    }
    // The summary line (JSON log on stderr).
    EXPECT_NE(r.err.find("\"boards\":3,\"boards_failed\":1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"archived\":2,\"rows_archived\":24"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"exit_code\":1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("broken"), std::string::npos) << r.err;  // the error is logged
    // The pass's metrics file.
    EXPECT_EQ(metric("boardkeeper_tick_exit_code"), 1);
    EXPECT_EQ(metric("boardkeeper_tick_boards"), 3);
    EXPECT_EQ(metric("boardkeeper_tick_boards_failed"), 1);
    EXPECT_EQ(metric("boardkeeper_tick_redis_errors"), 1);
    EXPECT_EQ(metric("boardkeeper_tick_postgres_errors"), 0);
    EXPECT_EQ(metric("boardkeeper_tick_periods_archived"), 2);
    EXPECT_EQ(metric("boardkeeper_tick_members_spilled"), 8);
    // In PostgreSQL: the healthy boards' Jan 4 in history, 12 rows each; the broken board's
    // neither archived nor recorded lost.
    for (const char* board : {"alpha", "charlie"}) {
      EXPECT_EQ(archive.status({board, "daily", "2027-01-04"}), cold::PeriodStatus::archived)
          << board;
      EXPECT_EQ(archive.history({board, "daily", "2027-01-04"}, 100).size(), 12u) << board;
    }
    EXPECT_EQ(archive.status({"broken", "daily", "2027-01-04"}), cold::PeriodStatus::open);

    // Again, text report: the board is named FAILED with the error; nothing else to do.
    r = tick({"tick", "--metrics-file", metrics_file});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    const auto failed = r.out.find("broken  FAILED: ");
    ASSERT_NE(failed, std::string::npos) << r.out;
    EXPECT_NE(r.out.find("WRONGTYPE", failed), std::string::npos) << r.out;
    EXPECT_EQ(metric("boardkeeper_tick_boards_failed"), 1);
    EXPECT_EQ(metric("boardkeeper_tick_periods_archived"), 0);
    EXPECT_EQ(archive.status({"broken", "daily", "2027-01-04"}), cold::PeriodStatus::open);
  }
};

TEST_F(TickWithABrokenBoardTest, ARegistryOfTheWrongTypeFailsItsBoardAlone) {
  fill();
  conn.command({"DEL", broken.registry()}).checked();
  conn.command({"SET", broken.registry(), "not a registry"}).checked();
  expect_only_the_broken_board_fails();
  EXPECT_EQ(conn.command({"TYPE", broken.registry()}).checked().as_string(), "string");
}

TEST_F(TickWithABrokenBoardTest, AClosedPeriodOfTheWrongTypeFailsItsBoardAlone) {
  fill();
  const std::string live = broken.live("daily", "2027-01-04");
  conn.command({"DEL", live}).checked();
  conn.command({"SET", live, "not a board"}).checked();
  expect_only_the_broken_board_fails();
  EXPECT_EQ(conn.command({"TYPE", live}).checked().as_string(), "string");
  EXPECT_EQ(conn.command({"GET", live}).checked().as_string(), "not a board");
}

}  // namespace
}  // namespace bk
