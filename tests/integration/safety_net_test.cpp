// PostgreSQL as the safety net: whatever the cold tier holds survives what Redis forgets
// (FLUSHALL, a restart without persistence, a rollback to an older snapshot), and one
// member's stream events keep their order across a PostgreSQL outage. Each test runs a
// Redis of its own, as it flushes or restarts it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

#include "cold/cold_store.h"
#include "harness.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using namespace std::chrono_literals;

// hot_keep 2: a tick spills everyone ranked third or lower.
const char* kBoards = R"(  - name: d
    periods: [daily]
    max_points: 1000000
    hot_keep: 2
    display: 2
    retention: {daily: 400d}
  - name: q
    periods: [daily]
    max_points: 1000000
    hot_keep: 1
    display: 1
    retention: {daily: 400d}
  - name: r
    periods: [daily]
    update: replace
    max_points: 1000000
    hot_keep: 1
    display: 1
    max_clock_skew: 1000d
    retention: {daily: 400d}
)";

const char* kDay = "2026-11-20";
const char* kDuring = "--now=2026-11-20T12:00:00Z";
const char* kAfter = "--now=2026-11-21T00:11:00Z";  // past the end + 10m grace

class SafetyNetTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();

  // The CLI on `config`, checked for the exit code.
  test::RunResult bk(const std::string& config, std::vector<std::string> args, int want = 0) {
    args.insert(args.begin(), {"--config", config});
    auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, want) << "boardkeeper";
    for (const auto& a : args) std::cerr << " " << a;
    std::cerr << "\n" << r.out << r.err;
    return r;
  }

  // "member:points" of the archived period, in rank order.
  std::string history(const std::string& board) {
    return test::psql(
        "SELECT string_agg(member || ':' || points, ' ' ORDER BY rank, member) FROM " + prefix +
        ".history WHERE board = '" + board + "' AND period_id = '" + kDay + "'");
  }
  std::string period_row(const std::string& board) {
    return test::psql(
        "SELECT status || ' hot=' || hot_members || ' cold=' || cold_members ||"
        " ' hot_lost=' || hot_lost FROM " +
        prefix + ".periods WHERE board = '" + board + "'");
  }
};

TEST_F(SafetyNetTest,
       FlushallAfterASpillArchivesEveryColdMemberAndAReturningMemberGetsItsColdPoints) {
  test::RedisServer redis;
  const std::string config =
      test::write_text_config(prefix, test::config_text_for(redis.url(), prefix, kBoards));
  bk(config, {"migrate"});
  for (const auto& [member, points] : std::vector<std::pair<std::string, std::string>>{
           {"m1", "500"}, {"m2", "400"}, {"m5", "105"}, {"m3", "30"}, {"m4", "20"}}) {
    bk(config, {kDuring, "add", "d", member, points});
  }
  bk(config, {kDuring, "add", "q", "top", "9"});
  bk(config, {kDuring, "add", "q", "low", "3"});
  bk(config, {kDuring, "tick"});
  ASSERT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".cold_members"), "4\n");

  // Redis forgets everything (FLUSHALL; a restart without persistence is the same).
  redis.connect().command({"FLUSHALL"}).checked();
  // Counting the members of a board Redis has no trace of consults the cold tier (Redis
  // cannot vouch that nothing spilled): q's cold member is there, its hot one is gone.
  const auto counted = bk(config, {kDuring, "periods", "q", "--json"});
  EXPECT_NE(counted.out.find(R"("members":1,"hot_members":0,"cold_members":1)"), std::string::npos)
      << counted.out;

  // A spilled member who scores again gets its cold points back, plus the new ones.
  const auto back = bk(config, {kDuring, "add", "d", "m5", "1"});
  EXPECT_NE(back.out.find("daily 2026-11-20 = 106"), std::string::npos) << back.out;
  bk(config, {kDuring, "add", "d", "m6", "7"});
  // Reads see the cold members although Redis has no trace of them.
  const auto rank = bk(config, {kDuring, "rank", "d", "daily", "m3", "--json"});
  EXPECT_NE(rank.out.find("\"points\":30"), std::string::npos) << rank.out;

  // tick archives every period that has cold rows, also the one Redis has no trace of (q).
  const std::string metrics = "/tmp/bk-" + prefix + ".prom";
  const auto archived = bk(config, {kAfter, "tick", "--metrics-file", metrics});
  EXPECT_NE(archived.out.find("HOT PART LOST"), std::string::npos) << archived.out;
  std::ifstream file(metrics);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\nboardkeeper_tick_periods_hot_lost 2\n"), std::string::npos) << text;
  std::remove(metrics.c_str());
  EXPECT_EQ(history("d"), "m5:106 m3:30 m4:20 m6:7\n");  // m1 and m2 lived only in Redis
  EXPECT_EQ(period_row("d"), "archived hot=2 cold=2 hot_lost=true\n");
  EXPECT_EQ(history("q"), "low:3\n");
  EXPECT_EQ(period_row("q"), "archived hot=0 cold=1 hot_lost=true\n");
  EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".cold_members"), "0\n");
  // A second tick has nothing left to do.
  const auto again = bk(config, {kAfter, "tick"});
  EXPECT_EQ(again.out.find("archived"), std::string::npos) << again.out;
}

TEST_F(SafetyNetTest, RedisRestartedFromASnapshotTakenBeforeARehydrationKeepsTheColdPoints) {
  test::RedisServer redis;
  const std::string config =
      test::write_text_config(prefix, test::config_text_for(redis.url(), prefix, kBoards));
  bk(config, {"migrate"});
  bk(config, {kDuring, "add", "d", "m1", "500"});
  bk(config, {kDuring, "add", "d", "m2", "400"});
  bk(config, {kDuring, "add", "d", "m5", "105"});
  bk(config, {kDuring, "tick"});                // m5 is cold now
  redis.connect().command({"SAVE"}).checked();  // the snapshot Redis will come back from

  const auto rehydrated = bk(config, {kDuring, "add", "d", "m5", "1"});
  EXPECT_NE(rehydrated.out.find("= 106"), std::string::npos) << rehydrated.out;
  redis.stop();   // SHUTDOWN NOSAVE: the rehydration is lost with Redis...
  redis.start();  // ...which loads the snapshot taken before it

  const auto rank = bk(config, {kDuring, "rank", "d", "daily", "m5", "--json"});
  EXPECT_NE(rank.out.find("\"points\":105"), std::string::npos) << rank.out;
  bk(config, {kAfter, "tick"});
  EXPECT_EQ(history("d"), "m1:500 m2:400 m5:105\n");
}

TEST_F(SafetyNetTest, ALongRunningWriterRegistersItsBoardsAgainAfterRedisLostThem) {
  test::RedisServer redis;
  const std::string text = test::config_text_for(redis.url(), prefix, kBoards);
  const std::string config_path = test::write_text_config(prefix, text);
  bk(config_path, {"migrate"});
  const Config config = parse_config(text, "test.yaml", {});
  redis::Connection conn = redis.connect();
  cold::ColdStore cold(test::postgres_url(), prefix);
  // One writer for the whole test, as `ingest` is: it remembers which boards it registered.
  service::Leaderboards boards(config, conn, Clock(parse_rfc3339("2026-11-20T12:00:00Z").value()),
                               &cold);
  const service::Update u{"d", "m1", 5, parse_rfc3339("2026-11-20T11:00:00Z"), "", ""};
  ASSERT_EQ(boards.apply(u).status, service::UpdateStatus::applied);
  EXPECT_EQ(conn.command({"SISMEMBER", prefix + ":boards", "d"}).as_int(), 1);
  conn.command({"FLUSHALL"}).checked();
  ASSERT_EQ(boards.apply(u).status, service::UpdateStatus::applied);
  // Without the board in <prefix>:boards, tick would never archive what it writes.
  EXPECT_EQ(conn.command({"SISMEMBER", prefix + ":boards", "d"}).as_int(), 1);
  bk(config_path, {kAfter, "tick"});
  EXPECT_EQ(history("d"), "m1:5\n");
}

// A per-test database, so that PostgreSQL can be made unreachable for this test alone.
class PrivateDatabase {
 public:
  explicit PrivateDatabase(std::string name) : name_(std::move(name)) {
    test::psql("CREATE DATABASE " + name_);
  }
  ~PrivateDatabase() { test::psql("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)"); }
  std::string url() const {
    const std::string shared = test::postgres_url();
    return shared.substr(0, shared.rfind('/') + 1) + name_;
  }
  // New connections are refused and the open ones are cut: PostgreSQL is "down".
  void go_away() {
    test::psql("ALTER DATABASE " + name_ + " ALLOW_CONNECTIONS false");
    test::psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" +
               name_ + "'");
  }
  void come_back() { test::psql("ALTER DATABASE " + name_ + " ALLOW_CONNECTIONS true"); }

 private:
  std::string name_;
};

// Polls until `done` or ~20 s.
template <class F>
bool eventually(F&& done) {
  for (int i = 0; i < 400; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

TEST_F(SafetyNetTest, OneMembersEventsApplyInStreamOrderAcrossAPostgresOutage) {
  PrivateDatabase db("db_" + prefix);
  auto redis = test::connect_redis();
  const std::string config =
      test::write_text_config(prefix, test::config_text(prefix, kBoards, db.url()));
  const char* now = "--now=2026-11-20T12:00:00Z";
  bk(config, {"migrate"});
  bk(config, {now, "add", "r", "m1", "100"});
  bk(config, {now, "add", "r", "m2", "50"});
  bk(config, {now, "tick"});  // m2 is cold now: its next event needs a rehydration
  const std::string stream = prefix + ":events";
  const std::string live = prefix + ":{r}:daily:2026-11-20";
  const int ingest =
      test::spawn_cli({"--config", config, now, "ingest", "--reclaim-idle-ms", "500"},
                      "/tmp/bk-" + prefix + ".log");
  const auto xadd = [&](const std::string& member, const std::string& value) {
    redis
        .command({"XADD", stream, "*", "board", "r", "member", member, "value", value, "at",
                  "2026-11-20T11:00:00Z"})
        .checked();
  };
  const auto pending = [&] {
    return redis.command({"XPENDING", stream, "boardkeeper"}).at(0).as_int();
  };
  // Entries the group has read (the stream itself is trimmed once they are acknowledged).
  const auto entries_read = [&] {
    const redis::Reply groups = redis.command({"XINFO", "GROUPS", stream}).checked();
    const redis::Reply& g = groups.at(0);
    for (std::size_t i = 0; i + 1 < g.elements.size(); i += 2) {
      if (g.at(i).as_string() == "entries-read") return g.at(i + 1).as_int();
    }
    return std::int64_t{-1};
  };

  // ingest makes its group when it starts; XPENDING before that is a NOGROUP error.
  ASSERT_TRUE(eventually([&] {
    const redis::Reply groups = redis.command({"XINFO", "GROUPS", stream});
    return groups.type == redis::Reply::Type::array && !groups.elements.empty();
  }));
  db.go_away();
  xadd("m2", "60");  // A: waits for PostgreSQL
  ASSERT_TRUE(eventually([&] { return pending() == 1; }));
  db.come_back();
  xadd("m2", "70");   // B: later; must not overtake A
  xadd("m1", "200");  // another member is not held up
  ASSERT_TRUE(eventually([&] {
    return pending() == 0 && entries_read() == 3 &&
           !redis.command({"ZSCORE", live, "m1"}).is_nil() &&
           redis.command({"ZSCORE", live, "m2"}).type != redis::Reply::Type::nil;
  }));
  kill(ingest, SIGTERM);
  EXPECT_EQ(test::wait_cli(ingest), 0);
  const auto m2 = bk(config, {now, "rank", "r", "daily", "m2", "--json"});
  EXPECT_NE(m2.out.find("\"points\":70"), std::string::npos) << m2.out;  // A then B
  const auto m1 = bk(config, {now, "rank", "r", "daily", "m1", "--json"});
  EXPECT_NE(m1.out.find("\"points\":200"), std::string::npos) << m1.out;
  EXPECT_TRUE(redis.command({"HLEN", prefix + ":{r}:held"}).as_int() == 0);
}

}  // namespace
}  // namespace bk
