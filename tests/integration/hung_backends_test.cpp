// Reads never wait for a hung backend past their deadline. The test's own PostgreSQL or Redis
// is frozen (SIGSTOP: it takes connections and requests but never answers, as a stalled disk
// or a partition without refusals looks to a client) while serve (serve.read_timeout 1s)
// answers every route: each answer comes within the deadline and a margin, 503 with
// Retry-After naming the backend where the read needs it, 200 where it does not; /readyz says
// "hung"; SIGTERM ends serve, exit 0, within 5 s. Before deadlines, each of these reads waited
// for as long as the freeze lasted. With cold ranks in memory (serve.cold_rank_memory_mb, off
// in the other tests so that their reads need PostgreSQL), spilled members' reads are answered
// while PostgreSQL is frozen.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <future>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cold/cold_store.h"
#include "harness.h"
#include "own_postgres.h"
#include "pts_board.h"
#include "served.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
using test::Answer;
using test::Served;

const char* const kBoards = test::kPtsBoard;

constexpr const char* kYesterday = "2026-11-19T12:00:00Z";
constexpr const char* kNow = "2026-11-20T12:00:00Z";
const std::string& kDay = test::kPtsDaily;
constexpr milliseconds kDeadline{1000};
// What a read may take beyond its deadline: the answer's own work, and a loaded machine
// (the sanitized build beside other suites). Without deadlines these reads took as long as
// the freeze.
constexpr milliseconds kMargin{1500};

std::string member(int i) {
  return test::pts_member(i);
}

// The servers are the suite's own: freezing the shared ones would stop every other test.
class HungBackendsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    postgres_ = new test::PostgresServer();
    redis_ = new test::RedisServer();
  }
  static void TearDownTestSuite() {
    delete redis_;
    delete postgres_;
  }
  void TearDown() override {
    postgres_->thaw();
    redis_->thaw();
  }

  static test::PostgresServer* postgres_;
  static test::RedisServer* redis_;

  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_text_config(
      prefix, test::config_text_for(redis_->url(), prefix, kBoards, postgres_->url()) +
                  "serve:\n  read_timeout: 1s\n  cold_rank_memory_mb: 0\n");
  std::string log = "/tmp/" + prefix + "-serve.log";

  test::RunResult cli(std::vector<std::string> args, const char* now = kNow) {
    args.insert(args.begin(), {"--config", config_path, "--now", now});
    return test::run_cli(args);
  }

  // Yesterday (m00..m04) is archived; today m00..m19 have 100..81 points and a tick spilled
  // m05..m19 to PostgreSQL.
  void fill() {
    ASSERT_EQ(cli({"migrate"}).exit_code, 0);
    const Config config = parse_config(test::read_file(config_path), config_path, {});
    redis::Connection conn = redis_->connect();
    cold::ColdStore cold(postgres_->url(), prefix);
    for (const char* at : {kYesterday, kNow}) {
      service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(at)), &cold);
      const int members = at == kNow ? 20 : 5;
      for (int i = 0; i < members; ++i) {
        ASSERT_EQ(
            lb.apply(service::Update{"pts", member(i), 100 - i, *parse_rfc3339(at), ""}).status,
            service::UpdateStatus::applied);
      }
    }
    const test::RunResult r = cli({"tick"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  // The answer to `target` and how long it took (printed: the figures of the issue's note).
  static std::pair<Answer, milliseconds> timed(Served& s, const std::string& target) {
    const auto started = Steady::now();
    Answer a = s.get(target);
    const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - started);
    std::cout << "[ took     ] " << a.status << " in " << took.count() << " ms: " << target << "\n";
    return {a, took};
  }

  // /readyz's body once `backend` is reported `state` (within 5 s; the prober checks about
  // once a second, each check bounded by 1 s).
  static json readiness_once(Served& s, const std::string& backend, const std::string& state) {
    json body;
    for (int i = 0; i < 50; ++i) {
      body = s.get("/readyz").body;
      if (body.is_object() && body.value(backend, "") == state) break;
      std::this_thread::sleep_for(milliseconds{100});
    }
    return body;
  }

  // SIGTERM while `target` is being read by four clients: serve exits 0 within 5 s.
  static void stops_in_time(Served& s, const std::string& target) {
    std::vector<std::future<Answer>> reads;
    for (int i = 0; i < 4; ++i) {
      reads.push_back(std::async(std::launch::async, [port = s.port(), target] {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(30, 0);
        return test::answer_of(c.Get(target.c_str()));
      }));
    }
    std::this_thread::sleep_for(milliseconds{100});
    const auto started = Steady::now();
    ASSERT_EQ(kill(s.pid(), SIGTERM), 0);
    const int code = test::wait_cli(s.pid());
    const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - started);
    EXPECT_EQ(code, 0);
    EXPECT_LT(took.count(), 5000) << "SIGTERM to exit, in ms";
    std::cout << "[ took     ] SIGTERM to exit: " << took.count() << " ms\n";
    for (auto& r : reads) r.get();
  }
};

test::PostgresServer* HungBackendsTest::postgres_ = nullptr;
test::RedisServer* HungBackendsTest::redis_ = nullptr;

TEST_F(HungBackendsTest, AHungPostgresCostsAReadItsDeadlineAndHotReadsNothing) {
  fill();
  Served s(config_path, log, kNow);
  ASSERT_EQ(s.get(kDay + "/top?limit=10").status, 200);  // connected, deployment checked
  postgres_->freeze();
  // Every read that needs PostgreSQL answers 503 naming it within the deadline; the first
  // page answers from Redis with total null (or 503 when its count was the read that found
  // PostgreSQL hung).
  for (const std::string& target :
       {kDay + "/members/m15", kDay + "/members?ids=m01,m15,m16", kDay + "/members/m15/around",
        kDay + "/top?period_id=2026-11-19", kDay + "/history", kDay + "/top?limit=10",
        kDay + "/top?limit=10&cursor=x", std::string("/v1/boards/pts/periods")}) {
    const auto [a, took] = timed(s, target);
    EXPECT_LT(took.count(), (kDeadline + kMargin).count()) << target;
    if (a.status == 503) {
      EXPECT_NE(error_of(a).find("PostgreSQL"), std::string::npos) << target << ": " << a.text;
    } else {
      EXPECT_TRUE(a.status == 200 || a.status == 400) << target << ": " << a.text;
    }
  }
  // A hot member's read needs no PostgreSQL: answered, at once, while it is still frozen.
  for (int i = 0; i < 5; ++i) {
    const auto [a, took] = timed(s, kDay + "/members/m0" + std::to_string(i));
    EXPECT_EQ(a.status, 200) << a.text;
    EXPECT_EQ(a.body.value("rank", 0), i + 1) << a.text;
    EXPECT_LT(took.count(), kDeadline.count()) << "a hot read, in ms";
  }
  const auto first = timed(s, kDay + "/top?limit=3");
  EXPECT_EQ(first.first.status, 200) << first.first.text;
  EXPECT_TRUE(first.first.body["total"].is_null()) << first.first.text;
  EXPECT_LT(first.second.count(), kDeadline.count());
  const json ready = readiness_once(s, "postgres", "hung");
  EXPECT_EQ(ready.value("postgres", ""), "hung") << ready.dump();
  EXPECT_EQ(ready.value("ready", false), true) << ready.dump();
  stops_in_time(s, kDay + "/members/m16");
  EXPECT_NE(test::read_file(log).find("postgresql is hung"), std::string::npos);
}

// Cold ranks from memory: once serve holds the spilled period's cold rows (one spill
// generation of them), its spilled members' ranks, neighbourhoods and the first page's total
// need no PostgreSQL, so they are answered, exactly, while it is frozen. An archived period's
// read still needs it (503 within the deadline).
TEST_F(HungBackendsTest, SpilledMembersAreAnsweredFromMemoryWhilePostgresIsHung) {
  fill();
  const std::string memory_config = test::write_text_config(
      prefix + "-memory", test::config_text_for(redis_->url(), prefix, kBoards, postgres_->url()) +
                              "serve:\n  read_timeout: 1s\n  cold_rank_memory_mb: 8\n");
  Served s(memory_config, log, kNow);
  const Answer before = s.get(kDay + "/members/m15/around?k=2");  // asks for the cold ranks
  ASSERT_EQ(before.status, 200) << before.text;
  bool loaded = false;
  for (int i = 0; i < 100 && !loaded; ++i) {
    loaded = s.get("/metrics").text.find("\nboardkeeper_cold_rank_periods 1") != std::string::npos;
    if (!loaded) std::this_thread::sleep_for(milliseconds{50});
  }
  ASSERT_TRUE(loaded) << s.get("/metrics").text;
  postgres_->freeze();
  const auto [around, took] = timed(s, kDay + "/members/m15/around?k=2");
  EXPECT_EQ(around.status, 200) << around.text;
  EXPECT_EQ(around.body, before.body);
  EXPECT_LT(took.count(), kDeadline.count());
  const auto [ids, ids_took] = timed(s, kDay + "/members?ids=m01,m15,m19,nobody");
  ASSERT_EQ(ids.status, 200) << ids.text;
  ASSERT_EQ(ids.body["records"].size(), 3u) << ids.text;
  EXPECT_EQ(ids.body["records"][1].value("rank", 0), 16) << ids.text;
  EXPECT_EQ(ids.body["records"][2].value("rank", 0), 20) << ids.text;
  EXPECT_LT(ids_took.count(), kDeadline.count());
  const auto [first, first_took] = timed(s, kDay + "/top?limit=3");
  EXPECT_EQ(first.body.value("total", 0), 20) << first.text;
  const auto [archived, archived_took] = timed(s, kDay + "/top?period_id=2026-11-19");
  EXPECT_EQ(archived.status, 503) << archived.text;
  EXPECT_LT(archived_took.count(), (kDeadline + kMargin).count());
  stops_in_time(s, kDay + "/members/m16");
}

// Head of line: while PostgreSQL hangs, reads that need it hold their lane's workers until
// their deadline (3 s here); a read that Redis alone answers takes a worker of its own lane
// at once. With one pool of workers it waited behind them for a whole deadline.
TEST_F(HungBackendsTest, ReadsRedisAnswersNeverWaitForWorkersHeldByPostgresReads) {
  fill();
  const std::string slow_config = test::write_text_config(
      prefix + "-3s", test::config_text_for(redis_->url(), prefix, kBoards, postgres_->url()) +
                          "serve:\n  read_timeout: 3s\n  cold_rank_memory_mb: 0\n");
  Served s(slow_config, log, kNow, {}, {}, {"--workers", "4"});
  ASSERT_EQ(s.get(kDay + "/members/m01").status, 200);
  postgres_->freeze();
  std::vector<std::future<Answer>> held;
  for (int i = 0; i < 12; ++i) {
    held.push_back(std::async(std::launch::async, [port = s.port()] {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(30, 0);
      return test::answer_of(c.Get((kDay + "/members?ids=m15,m16,m17").c_str()));
    }));
  }
  std::this_thread::sleep_for(milliseconds{300});  // the 12 are queued or waiting on PostgreSQL
  for (int i = 0; i < 3; ++i) {
    const auto [a, took] = timed(s, kDay + "/members/m0" + std::to_string(i));
    EXPECT_EQ(a.status, 200) << a.text;
    EXPECT_LT(took.count(), 1000) << "a hot read waited, in ms";
  }
  for (auto& h : held) EXPECT_EQ(h.get().status, 503);
}

TEST_F(HungBackendsTest, AHungRedisCostsAReadItsDeadlineAndArchivedReadsNothing) {
  fill();
  Served s(config_path, log, kNow);
  ASSERT_EQ(s.get(kDay + "/top?limit=10").status, 200);
  redis_->freeze();
  for (const std::string& target :
       {kDay + "/top?limit=10", kDay + "/members/m01", kDay + "/members?ids=m01,m15"}) {
    const auto [a, took] = timed(s, target);
    EXPECT_LT(took.count(), (kDeadline + kMargin).count()) << target;
    EXPECT_EQ(a.status, 503) << target << ": " << a.text;
    EXPECT_NE(error_of(a).find("Redis did not answer in time"), std::string::npos) << a.text;
  }
  // An archived period's read needs PostgreSQL only.
  for (int i = 0; i < 3; ++i) {
    const auto [a, took] = timed(s, kDay + "/top?period_id=2026-11-19");
    EXPECT_EQ(a.status, 200) << a.text;
    EXPECT_EQ(a.body["records"].size(), 5U) << a.text;
    EXPECT_LT(took.count(), kDeadline.count()) << "an archived read, in ms";
  }
  const json ready = readiness_once(s, "redis", "hung");
  EXPECT_EQ(ready.value("redis", ""), "hung") << ready.dump();
  EXPECT_EQ(ready.value("ready", true), false) << ready.dump();
  EXPECT_EQ(s.get("/readyz").status, 503);
  stops_in_time(s, kDay + "/members/m02");
}

// ingest: a turn whose rehydration look-up meets a hung PostgreSQL ends by its deadline
// (10 s) instead of waiting for as long as the freeze lasts: a stop is not held up, and the
// event, still pending, is applied once PostgreSQL answers again.
TEST_F(HungBackendsTest, IngestDoesNotWaitOnAHungPostgresAndAppliesTheEventAfter) {
  fill();
  redis::Connection conn = redis_->connect();
  const std::string stream = test::events_stream(prefix);
  const std::string at = std::to_string(to_epoch_ms(*parse_rfc3339(kNow)));
  std::vector<std::string> ingest{"--config", config_path, "--now", kNow, "ingest"};
  const std::string ingest_log = "/tmp/" + prefix + "-ingest.log";
  const int pid = test::spawn_cli(ingest, ingest_log);
  test::Reaper reaper{pid};
  conn.command({"XADD", stream, "*", "board", "pts", "member", "m00", "value", "1", "at", at})
      .checked();
  const Config config = parse_config(test::read_file(config_path), config_path, {});
  cold::ColdStore cold(postgres_->url(), prefix);
  const auto points_now = [&] {
    return test::points_of(conn, config, "pts", "daily", *parse_rfc3339(kNow), &cold);
  };
  for (int i = 0; i < 100 && points_now()["m00"] != 101; ++i) {
    std::this_thread::sleep_for(milliseconds{100});
  }
  postgres_->freeze();
  // m15 is spilled: applying its event looks its cold row up in PostgreSQL.
  conn.command({"XADD", stream, "*", "board", "pts", "member", "m15", "value", "5", "at", at})
      .checked();
  std::this_thread::sleep_for(milliseconds{1500});
  const auto started = Steady::now();
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(ingest_log);
  const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - started);
  EXPECT_LT(took.count(), 10000 + kMargin.count()) << "SIGTERM to exit, in ms";
  postgres_->thaw();
  ingest.insert(ingest.end(), {"--drain", "--reclaim-idle-ms", "500"});
  const test::RunResult drained = test::run_cli(ingest);
  EXPECT_EQ(drained.exit_code, 0) << drained.err;
  auto points = points_now();
  EXPECT_EQ(points["m15"], 90);  // 85 + 5, once
  EXPECT_EQ(points["m00"], 101);
}

// A write waits for PostgreSQL only when its member may be cold (a spilled period, a member
// Redis does not hold): then it answers 503 naming it within the deadline (later ones at once,
// PostgreSQL being known hung) and applies nothing; a hot member's write is applied at once
// while PostgreSQL is frozen, and SIGTERM amid cold writes ends serve within 5 s.
TEST_F(HungBackendsTest, AHungPostgresCostsAColdWriteItsDeadlineAndHotWritesNothing) {
  fill();
  const std::string writer = "hung-writer-5d1c";
  Served s(config_path, log, kNow, {{"BOARDKEEPER_SERVE_WRITE_TOKENS", writer}});
  const httplib::Headers as_writer{{"Authorization", "Bearer " + writer}};
  const auto write = [&](const std::string& m) {
    const auto started = Steady::now();
    Answer a = s.post("/v1/boards/pts/members/" + m + "/scores", R"({"value": 1})", as_writer);
    const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - started);
    std::cout << "[ took     ] write " << m << ": " << a.status << " in " << took.count()
              << " ms\n";
    return std::pair{a, took};
  };
  ASSERT_EQ(write("m00").first.status, 200);
  postgres_->freeze();
  for (const char* m : {"m15", "newcomer"}) {  // spilled; never seen (may be cold)
    const auto [a, took] = write(m);
    EXPECT_EQ(a.status, 503) << m << ": " << a.text;
    EXPECT_NE(error_of(a).find("PostgreSQL"), std::string::npos) << a.text;
    EXPECT_LT(took.count(), (kDeadline + kMargin).count()) << m;
  }
  const auto [hot, took] = write("m01");
  EXPECT_EQ(hot.status, 200) << hot.text;
  EXPECT_LT(took.count(), kDeadline.count()) << "a hot write, in ms";
  std::vector<std::future<std::pair<Answer, milliseconds>>> waiting;
  for (int i = 0; i < 4; ++i) waiting.push_back(std::async(std::launch::async, write, "m16"));
  std::this_thread::sleep_for(milliseconds{100});
  const auto started = Steady::now();
  ASSERT_EQ(kill(s.pid(), SIGTERM), 0);
  EXPECT_EQ(test::wait_cli(s.pid()), 0);
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(Steady::now() - started).count(), 5000);
  for (auto& w : waiting) w.get();
  postgres_->thaw();
  const Config config = parse_config(test::read_file(config_path), config_path, {});
  redis::Connection conn = redis_->connect();
  cold::ColdStore cold(postgres_->url(), prefix);
  auto points = test::points_of(conn, config, "pts", "daily", *parse_rfc3339(kNow), &cold);
  EXPECT_EQ(points["m15"], 85) << "nothing applied";
  EXPECT_EQ(points.count("newcomer"), 0U);
  EXPECT_EQ(points["m01"], 100);  // 99 + 1
  EXPECT_EQ(points["m16"], 84) << "the writes SIGTERM cut applied nothing";
}

}  // namespace
}  // namespace bk
