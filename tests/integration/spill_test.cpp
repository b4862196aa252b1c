// The cold tier against real Redis and PostgreSQL: spill beyond hot_keep, exact ranks across
// both tiers, rehydration, writers racing the spill, kills mid-spill, servers going away.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <fstream>
#include <map>
#include <random>
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

using test::brute_force;
using test::Model;
using test::same;

using service::Leaderboards;
using service::Standing;
using service::Update;
using service::UpdateStatus;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

const char* kBoards = R"(  - name: big
    periods: [daily]
    max_points: 10000000
    hot_keep: 100
    display: 10
    retention: {default: 3650d}
  - name: race
    periods: [daily, weekly]
    max_points: 10000000
    hot_keep: 50
    display: 10
    retention: {default: 3660d}
)";

class SpillTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  Instant now = at("2026-11-22T12:00:00Z");

  void SetUp() override { cold.migrate(); }

  std::int64_t hot_size(const std::string& board, const std::string& period,
                        const std::string& id) {
    return conn.command({"ZCARD", hot::BoardKeys(prefix, board).live(period, id)}).as_int();
  }

  // Applies and records in the model: increments with event time `t`.
  void add(Leaderboards& lb, std::map<std::string, Model>& model,
           const std::vector<Update>& updates) {
    for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
    for (const auto& u : updates) {
      Model& m = model[u.member];
      m.points += u.value;
      if (u.value != 0 || m.points == u.value) m.at = *u.at;
    }
  }

  void expect_board(Leaderboards& lb, const std::string& board, const std::string& period,
                    const std::map<std::string, Model>& model) {
    const auto want = brute_force(model);
    const auto ref = lb.resolve(board, period, std::nullopt);
    const auto got = lb.reads().top_at({ref}, 0, static_cast<std::int64_t>(want.size()) + 10);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_TRUE(same(got[i], want[i])) << "position " << i;
  }

  // Members' own reads (the ends of both tiers and 1,000 at random) and their neighbours
  // (300 positions) agree with the brute-force listing `want`.
  void expect_members_and_around(Leaderboards& lb, const service::PeriodRef& ref,
                                 const std::vector<Standing>& want, std::mt19937& rng) {
    std::vector<std::size_t> probe{0, 1, 98, 99, 100, 101, 102, 5000, 9998, 9999};
    for (int i = 0; i < 1000; ++i) probe.push_back(rng() % want.size());
    for (const std::size_t pos : probe) {
      const auto r = lb.reads().member({ref}, want[pos].member);
      ASSERT_TRUE(r) << want[pos].member;
      EXPECT_TRUE(same(*r, want[pos]));
    }
    for (int i = 0; i < 300; ++i) {
      const std::size_t pos =
          i < 6 ? std::vector<std::size_t>{0, 99, 100, 101, 9999, 5}[i] : rng() % want.size();
      const auto got = lb.reads().around({ref}, want[pos].member, 3);
      const std::size_t from = pos >= 3 ? pos - 3 : 0;
      const std::size_t to = std::min(want.size(), pos + 4);
      ASSERT_EQ(got.size(), to - from) << "around position " << pos;
      for (std::size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(same(got[k], want[from + k]));
    }
  }

  // Pages at any depth (past the hot members, PostgreSQL locates the page) equal the full
  // listing, ranks included.
  void expect_pages(Leaderboards& lb, const service::PeriodRef& ref,
                    const std::vector<Standing>& listing, std::mt19937& rng) {
    std::vector<std::int64_t> offsets{0, 95, 99, 100, 101, 4321, 9979, 9990, 9999};
    for (int i = 0; i < 200; ++i)
      offsets.push_back(static_cast<std::int64_t>(rng() % listing.size()));
    for (const std::int64_t offset : offsets) {
      const auto page = lb.reads().top_at({ref}, offset, 20);
      ASSERT_EQ(page.size(),
                std::min<std::size_t>(20, listing.size() - static_cast<std::size_t>(offset)))
          << "offset " << offset;
      for (std::size_t k = 0; k < page.size(); ++k) {
        ASSERT_TRUE(same(page[k], listing[static_cast<std::size_t>(offset) + k]))
            << "offset " << offset << " + " << k;
      }
    }
  }

  // A ticker that spills (chunks of 20) until no writer is left, counting its passes.
  void spill_while_writing(const std::atomic<int>& writers_left, std::atomic<int>& spill_passes) {
    redis::Connection own = test::connect_redis();
    cold::ColdStore own_cold(test::postgres_url(), prefix);
    cold::History own_archive(test::postgres_url(), prefix);
    lifecycle::Tick t(config, own, own_cold, own_archive, Clock(now));
    while (writers_left.load() > 0) {
      t.run({false, 20});
      ++spill_passes;
    }
  }

  // Another session holds a lock so the tick (config `path`, PostgreSQL application name
  // `app`) blocks inside its first cold-tier write, and then its connection is terminated;
  // PostgreSQL stays away: its retry of the board (on a new connection) is cut too. The
  // tick exits 3 and names PostgreSQL in its log.
  void tick_while_postgres_goes_away(const std::string& path, const std::string& app) {
    const std::string now_arg = "--now=2026-11-22T12:00:00Z";
    std::thread locker([&] {
      test::psql("BEGIN; LOCK TABLE " + prefix + ".cold_members IN ACCESS EXCLUSIVE MODE; " +
                 "SELECT pg_sleep(4); COMMIT;");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const std::string log = "/tmp/bk-pgdown-" + prefix + ".log";
    const int pid = test::spawn_cli({"--config", path, now_arg, "tick", "--chunk", "20"}, log);
    // Wait until the tick is stuck waiting for the lock, then cut its connection.
    for (int i = 0; i < 100; ++i) {
      if (test::psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app +
                     "' AND wait_event_type = 'Lock'") == "1\n") {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // PostgreSQL stays away: the tick's retry of the board (on a new connection) is cut too.
    for (siginfo_t exited{}; exited.si_pid == 0;
         waitid(P_PID, static_cast<id_t>(pid), &exited, WEXITED | WNOHANG | WNOWAIT)) {
      test::psql(
          "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = "
          "'" +
          app + "' AND wait_event_type = 'Lock'");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(test::wait_cli(pid), 3);
    locker.join();
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("postgresql"), std::string::npos) << text;
  }

  // 200 events of members spilled to the cold tier (positions 100 on of `want`).
  static std::vector<Update> rescore_cold_members(const std::vector<Standing>& want,
                                                  std::mt19937& rng) {
    std::vector<Update> again;
    for (int i = 0; i < 200; ++i) {
      const auto& member = want[100 + rng() % 9900].member;
      again.push_back({"big", member, static_cast<std::int64_t>(1 + rng() % 300),
                       at("2026-11-22T02:00:00Z") + std::chrono::seconds{i}, ""});
    }
    return again;
  }

  static constexpr int kWriters = 4;
  static constexpr int kPerWriter = 5000;
  static constexpr int kMembers = 500;

  // Each writer's events, from `base` on, recorded in `model`. Member i belongs to writer
  // i % 4, so "its last update" is well defined.
  static std::vector<std::vector<Update>> race_work(Instant base,
                                                    std::map<std::string, Model>& model) {
    std::vector<std::vector<Update>> work(kWriters);
    std::mt19937 rng(5);
    for (int j = 0; j < kPerWriter; ++j) {
      for (int t = 0; t < kWriters; ++t) {
        const int idx = static_cast<int>(rng() % (kMembers / kWriters)) * kWriters + t;
        Update u{"race", "p" + std::to_string(idx), static_cast<std::int64_t>(1 + rng() % 20),
                 base + Millis{j * kWriters + t}, ""};
        Model& m = model[u.member];
        m.points += u.value;
        m.at = *u.at;
        work[t].push_back(u);
      }
    }
    return work;
  }
};

TEST_F(SpillTest, TenThousandMembersSpillAndRankExactlyAcrossTiers) {
  Leaderboards lb(config, conn, Clock(now), &cold);
  std::mt19937 rng(11);
  std::map<std::string, Model> model;
  std::vector<Update> updates;
  for (int i = 0; i < 10000; ++i) {
    // Few distinct points and whole-second times: many ties, some on both.
    Update u{"big", "m" + std::to_string(i), static_cast<std::int64_t>(rng() % 400),
             at("2026-11-22T01:00:00Z") + std::chrono::seconds{rng() % 600}, ""};
    updates.push_back(u);
  }
  add(lb, model, updates);

  cold::History archive(test::postgres_url(), prefix);
  lifecycle::Tick tick(config, conn, cold, archive, Clock(now));
  const auto report = tick.run({});
  ASSERT_EQ(report.boards.size(), 1U);
  ASSERT_EQ(report.boards[0].periods.size(), 1U);
  EXPECT_EQ(report.boards[0].periods[0].spilled, 9900);
  EXPECT_EQ(hot_size("big", "daily", "2026-11-22"), 100);
  EXPECT_EQ(cold.reader().count({"big", "daily", "2026-11-22"}), 9900);
  // A spill this big is followed by fresh planner statistics (without them a member look-up
  // can scan the whole period through the listing index instead of one key probe).
  EXPECT_GE(std::stoll(test::psql("SELECT reltuples::bigint FROM pg_class WHERE oid = '" + prefix +
                                  ".cold_members'::regclass")),
            9900);

  const auto want = brute_force(model);
  expect_board(lb, "big", "daily", model);
  const auto ref = lb.resolve("big", "daily", std::nullopt);
  // periods counts both tiers.
  auto members = [&] {
    const auto p = lb.reads().periods("big");
    return std::array<std::int64_t, 3>{p.at(0).current_members, p.at(0).hot_members,
                                       p.at(0).cold_members};
  };
  EXPECT_EQ(members(), (std::array<std::int64_t, 3>{10000, 100, 9900}));
  ASSERT_NO_FATAL_FAILURE(expect_members_and_around(lb, ref, want, rng));
  expect_pages(lb, ref, want, rng);

  // Cold members score again: they come back with their cold points plus the new ones.
  const std::vector<Update> again = rescore_cold_members(want, rng);
  // Past the end: nothing.
  EXPECT_TRUE(lb.reads().top_at({ref}, 10000, 20).empty());
  EXPECT_TRUE(lb.reads().top_at({ref}, 123456789, 20).empty());

  add(lb, model, again);
  EXPECT_GT(lb.counters().rehydrated, 150);
  expect_board(lb, "big", "daily", model);
  expect_pages(lb, ref, brute_force(model), rng);  // with stale cold rows of the rehydrated members
  // Rehydrated members count once, as hot (their cold rows are stale until the next spill).
  const auto now_members = members();
  EXPECT_EQ(now_members[0], 10000);
  EXPECT_GT(now_members[1], 250);
  EXPECT_EQ(now_members[1] + now_members[2], 10000);
  // The next tick trims back to hot_keep; nothing changes in the ranking.
  tick.run({});
  EXPECT_EQ(hot_size("big", "daily", "2026-11-22"), 100);
  expect_board(lb, "big", "daily", model);
}

TEST_F(SpillTest, WritersRacingASpillLoopLoseNothing) {
  const Instant base = at("2026-11-22T03:00:00Z");
  // Member i belongs to writer i % 4, so "its last update" is well defined: every member's
  // achieved_at must be the time of the last event its writer sent for it.
  std::map<std::string, Model> model;
  const std::vector<std::vector<Update>> work = race_work(base, model);
  std::atomic<int> writers_left{kWriters};
  std::atomic<int> spill_passes{0};
  // Two tickers spill the same periods at once (overlapping cron runs): the period lock
  // makes one of them skip, so a cold row can never go backwards.
  auto spill_loop = [&] { spill_while_writing(writers_left, spill_passes); };
  std::thread ticker(spill_loop);
  std::thread second_ticker(spill_loop);
  std::vector<std::thread> writers;
  std::vector<std::string> refusals(kWriters);
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      redis::Connection own = test::connect_redis();
      cold::ColdStore own_cold(test::postgres_url(), prefix);
      Leaderboards lb(config, own, Clock(now), &own_cold);
      for (std::size_t i = 0; i < work[t].size() && refusals[t].empty(); i += 7) {
        // The last chunk waits for four spill passes, so that at least four ran while this
        // writer was writing, however slow the machine.
        while (i + 7 >= work[t].size() && spill_passes.load() < 4) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        const std::vector<Update> chunk(
            work[t].begin() + static_cast<long>(i),
            work[t].begin() + static_cast<long>(std::min(work[t].size(), i + 7)));
        for (const auto& r : lb.apply(chunk)) {
          if (r.status != UpdateStatus::applied) refusals[t] = r.reason;
        }
      }
      --writers_left;  // always, or the ticker would wait forever
    });
  }
  for (auto& w : writers) w.join();
  ticker.join();
  second_ticker.join();
  for (const auto& r : refusals) ASSERT_EQ(r, "") << "a writer's update was refused";

  Leaderboards lb(config, conn, Clock(now), &cold);
  expect_board(lb, "race", "daily", model);
  expect_board(lb, "race", "weekly", model);
  cold::History archive(test::postgres_url(), prefix);
  lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({});
  EXPECT_EQ(hot_size("race", "daily", "2026-11-22"), 50);
  expect_board(lb, "race", "daily", model);
  expect_board(lb, "race", "weekly", model);
}

TEST_F(SpillTest, TickKilledAtRandomMomentsLosesOrDoublesNothing) {
  const std::string path = test::write_config(prefix, kBoards);
  const std::string now_arg = "--now=2026-11-22T12:00:00Z";
  Leaderboards lb(config, conn, Clock(now), &cold);
  std::map<std::string, Model> model;
  std::mt19937 rng(99);
  int kills = 0;
  int next_member = 0;
  for (int round = 0; round < 80 && kills < 20; ++round) {
    std::vector<Update> updates;
    for (int i = 0; i < 1500; ++i) {  // new members, spilled by the next tick
      updates.push_back({"big", "k" + std::to_string(next_member++),
                         static_cast<std::int64_t>(rng() % 1000),
                         at("2026-11-22T04:00:00Z") + Millis{rng() % 100000}, ""});
    }
    for (int i = 0; i < 200 && next_member > 1500; ++i) {  // known members: many cold
      updates.push_back({"big",
                         "k" + std::to_string(rng() % static_cast<unsigned>(next_member - 1500)),
                         static_cast<std::int64_t>(1 + rng() % 50),
                         at("2026-11-22T05:00:00Z") + Millis{round * 1000 + i}, ""});
    }
    add(lb, model, updates);
    const int pid = test::spawn_cli({"--config", path, now_arg, "tick", "--chunk", "100"},
                                    "/tmp/bk-kill-" + prefix + ".log");
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 120));
    kill(pid, SIGKILL);
    if (test::wait_cli(pid) == 128 + SIGKILL) ++kills;
    expect_board(lb, "big", "daily", model);  // right after the kill: nothing lost or doubled
  }
  EXPECT_GE(kills, 20);
  const auto r = test::run_cli({"--config", path, now_arg, "tick"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hot_size("big", "daily", "2026-11-22"), 100);
  expect_board(lb, "big", "daily", model);
}

TEST_F(SpillTest, PostgresAwayMeansExit3AndNothingLeavesRedis) {
  Leaderboards lb(config, conn, Clock(now), &cold);
  std::map<std::string, Model> model;
  std::vector<Update> updates;
  for (int i = 0; i < 3000; ++i) {
    updates.push_back(
        {"big", "q" + std::to_string(i), i, at("2026-11-22T04:00:00Z") + Millis{i}, ""});
  }
  add(lb, model, updates);
  const std::string now_arg = "--now=2026-11-22T12:00:00Z";

  // Unreachable from the start.
  const std::string dead = test::write_config(prefix + "dead", kBoards);
  {
    std::ofstream(dead) << test::config_text(prefix, kBoards,
                                             "postgresql://boardkeeper:pw@127.0.0.1:1/boards");
  }
  auto r = test::run_cli({"--config", dead, now_arg, "tick"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("postgresql"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(":pw@"), std::string::npos) << "password leaked: " << r.err;
  EXPECT_EQ(hot_size("big", "daily", "2026-11-22"), 3000);

  // Going away in the middle of a spill: another session holds a lock so the tick blocks
  // inside its first cold-tier write, and then the tick's connection is terminated.
  const std::string app = "bk_" + prefix;
  const std::string path = "/tmp/bk-test-" + prefix + "-app.yaml";
  std::ofstream(path) << test::config_text(prefix, kBoards,
                                           test::postgres_url() + "?application_name=" + app);
  tick_while_postgres_goes_away(path, app);
  // The chunk was marked stale but nothing was removed from Redis.
  EXPECT_EQ(hot_size("big", "daily", "2026-11-22"), 3000);
  expect_board(lb, "big", "daily", model);
  r = test::run_cli({"--config", test::write_config(prefix, kBoards), now_arg, "tick"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hot_size("big", "daily", "2026-11-22"), 100);
  expect_board(lb, "big", "daily", model);
}

TEST_F(SpillTest, RedisAwayMeansExit3) {
  const std::string path = "/tmp/bk-test-" + prefix + "-noredis.yaml";
  std::string text = test::config_text(prefix, kBoards);
  text.replace(text.find(test::redis_url()), test::redis_url().size(), "redis://127.0.0.1:1/0");
  std::ofstream(path) << text;
  const auto r = test::run_cli({"--config", path, "tick"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("redis"), std::string::npos) << r.err;
}

TEST_F(SpillTest, ASpillNeverMovesMembersOfAFrozenPeriod) {
  Leaderboards lb(config, conn, Clock(now), &cold);
  std::map<std::string, Model> model;
  std::vector<Update> updates;
  for (int i = 0; i < 300; ++i) {
    updates.push_back({"big", "z" + std::to_string(i), i, now - std::chrono::hours{1}, ""});
  }
  add(lb, model, updates);
  // An archive froze the period (a tick with a later clock); a tick that still sees it as
  // open must not spill under it.
  conn.command({"HSET", hot::BoardKeys(prefix, "big").meta("daily", "2026-11-22"), "closed", "1"})
      .checked();
  cold::History archive(test::postgres_url(), prefix);
  const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({});
  ASSERT_EQ(report.boards.size(), 1U);
  EXPECT_EQ(report.boards[0].periods.at(0).spilled, 0);
  EXPECT_EQ(hot_size("big", "daily", "2026-11-22"), 300);
  EXPECT_EQ(cold.reader().count({"big", "daily", "2026-11-22"}), 0);
}

// A stream batch whose member needs its cold rows is sent again after the look-up: time
// enough for another consumer to take its entries over (reclaim_idle) and apply some of
// them. The resend is checked against the in-flight markers, so those are not applied
// twice. Here the other consumer's work is entry 1000-0 marked before the batch (the
// script knows entries by id alone; our first send, a fresh read, does not look).
TEST_F(SpillTest, AStreamBatchSentAgainAfterItsColdLookUpSkipsEntriesAppliedMeanwhile) {
  Leaderboards lb(config, conn, Clock(now), &cold);
  std::map<std::string, Model> model;
  std::vector<Update> updates;
  updates.reserve(150);
  for (int i = 0; i < 150; ++i) {
    updates.push_back({"big", "s" + std::to_string(i), 1000 + i, now - std::chrono::hours{2}, ""});
  }
  add(lb, model, updates);
  cold::History archive(test::postgres_url(), prefix);
  lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({});
  ASSERT_EQ(cold.reader().count({"big", "daily", "2026-11-22"}), 50);  // s0..s49

  const Instant t = now - std::chrono::hours{1};
  Update other{"big", "s149", 1, t, ""};
  other.order_token = "1000-0";
  other.stream = "s";
  ASSERT_EQ(lb.apply(other).status, UpdateStatus::applied);

  // s0 is cold: two increments of one sign coalesce, the call answers "cold", and the
  // event goes again with s0's cold row.
  Update first{"big", "s0", 5, t, ""};
  first.order_token = "1000-0";
  first.stream = "s";
  Update second{"big", "s0", 7, t + std::chrono::seconds{1}, ""};
  second.order_token = "1001-0";
  second.stream = "s";
  const auto got = lb.apply(std::vector<Update>{first, second});
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].status, UpdateStatus::duplicate) << got[0].reason;
  EXPECT_EQ(got[1].status, UpdateStatus::applied) << got[1].reason;
  const auto s0 = lb.reads().member({lb.resolve("big", "daily", std::nullopt)}, "s0");
  ASSERT_TRUE(s0.has_value());
  EXPECT_EQ(s0->points, 1000 + 7);
}

TEST_F(SpillTest, DryRunChangesNothing) {
  Leaderboards lb(config, conn, Clock(now), &cold);
  std::map<std::string, Model> model;
  std::vector<Update> updates;
  for (int i = 0; i < 300; ++i)
    updates.push_back({"big", "d" + std::to_string(i), i, now - std::chrono::hours{1}, ""});
  add(lb, model, updates);
  const auto r = test::run_cli({"--config", test::write_config(prefix, kBoards),
                                "--now=2026-11-22T12:00:00Z", "tick", "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("would spill 200 of 300"), std::string::npos) << r.out;
  EXPECT_EQ(hot_size("big", "daily", "2026-11-22"), 300);
  EXPECT_TRUE(
      conn.command({"HGET", hot::BoardKeys(prefix, "big").meta("daily", "2026-11-22"), "spilled"})
          .is_nil());
}

// The spill generation (serve keeps cold indexes by it, service/cold_index.h) moves to at
// least Redis's clock in microseconds, not by one from 0, and so never repeats one a period
// had before Redis lost its data.
TEST_F(SpillTest, ASpillGenerationNeverRepeatsAfterRedisLostItsData) {
  const std::string config_path = test::write_config(prefix, kBoards);
  const hot::BoardKeys board(prefix, "big");
  const hot::PeriodKeys keys(board, "daily", "2026-11-22");
  hot::BoardScripts scripts(prefix, true);
  // 300 more members, then a tick that spills 200 of them: the spill generation after it.
  const auto spill = [&](int round) {
    Leaderboards lb(config, conn, Clock(now), &cold);
    std::vector<Update> updates;
    for (int i = 0; i < 300; ++i) {
      updates.push_back({"big", "r" + std::to_string(round) + "-" + std::to_string(i), i + 1,
                         now - std::chrono::hours{1}, ""});
    }
    for (const auto& r : lb.apply(updates)) EXPECT_EQ(r.status, UpdateStatus::applied) << r.reason;
    const auto r = test::run_cli({"--config", config_path, "--now=2026-11-22T12:00:00Z", "tick"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string gen = scripts.generation(conn, keys);
    return std::stoll(gen.substr(0, gen.find(':')));
  };
  const std::int64_t first = spill(1);
  EXPECT_GT(first, 1'700'000'000'000'000) << "microseconds of Redis's clock";
  const std::int64_t second = spill(2);
  EXPECT_GT(second, first);
  // Redis loses the board's keys; the next spills start again from the clock.
  conn.command({"DEL", keys.live, keys.meta, keys.stale, board.synced(), board.registry()})
      .checked();
  const std::int64_t after_loss = spill(3);
  EXPECT_GT(after_loss, second);
}

}  // namespace
}  // namespace bk
