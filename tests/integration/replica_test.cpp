// serve's reads on a PostgreSQL streaming replica (postgres.read_url): a replica paused behind
// the primary (pg_wal_replay_pause()) never gives a stale rank or a missing member, because
// a read goes to the replica only once it has replayed what the primary had written when
// the read began; a replica stopped or frozen sends reads to the primary. The test's own
// primary and replica (pg_basebackup -R); cold ranks from memory off, so that every cold read
// asks PostgreSQL.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
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
using test::Answer;
using test::Served;

const char* const kBoards = test::kPtsBoard;

constexpr const char* kNow = "2026-11-20T12:00:00Z";
const std::string& kDay = test::kPtsDaily;

std::string member(int i) {
  return test::pts_member(i);
}

class ReplicaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    primary_ = new test::PostgresServer();
    replica_ = new test::PostgresServer(test::PostgresServer::ReplicaOf{*primary_});
  }
  static void TearDownTestSuite() {
    delete replica_;
    delete primary_;
  }
  void TearDown() override {
    replica_->thaw();
    replica_->sql("SELECT pg_wal_replay_resume()");
  }

  static test::PostgresServer* primary_;
  static test::PostgresServer* replica_;

  std::string prefix = test::unique_prefix();
  // The suite's primary, its replica as read_url; serve's cold ranks from memory off.
  std::string config_text() const {
    std::string text = test::config_text_for(test::redis_url(), prefix, kBoards, primary_->url()) +
                       "serve:\n  read_timeout: 2s\n  cold_rank_memory_mb: 0\n";
    const std::string schema = "  schema: " + prefix + "\n";
    return text.replace(text.find(schema), schema.size(),
                        schema + "  read_url: " + replica_->url() + "\n");
  }
  std::string config_path = test::write_text_config(prefix, config_text());
  std::string log = "/tmp/" + prefix + "-serve.log";
  Config config = parse_config(test::read_file(config_path), config_path, {});
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{primary_->url(), prefix};

  // Members `from`..`to` (exclusive) score `best` - i points; then a tick spills all but the
  // best five.
  void scores_then_spill(int from, int to, std::int64_t best = 1000) {
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kNow)), &cold);
    for (int i = from; i < to; ++i) {
      ASSERT_EQ(
          lb.apply(service::Update{"pts", member(i), best - i, *parse_rfc3339(kNow), ""}).status,
          service::UpdateStatus::applied);
    }
    const test::RunResult r = test::run_cli({"--config", config_path, "--now", kNow, "tick"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  // The replica has replayed everything the primary wrote until now.
  void caught_up() {
    const std::string at = primary_->sql("SELECT pg_current_wal_lsn()");
    for (int i = 0; i < 100; ++i) {
      if (replica_
              ->sql("SELECT pg_last_wal_replay_lsn() >= '" + at.substr(0, at.find('\n')) +
                    "'::pg_lsn")
              .rfind("t", 0) == 0) {
        return;
      }
      std::this_thread::sleep_for(milliseconds{50});
    }
    FAIL() << "the replica did not catch up within 5 s";
  }
  // A counter of serve's /metrics (0 when absent).
  static double metric(Served& s, const std::string& sample) {
    const std::string text = s.get("/metrics").text;
    const auto at = text.find("\n" + sample + " ");
    return at == std::string::npos ? 0 : std::stod(text.substr(at + sample.size() + 2));
  }
  // members/{m}'s rank and points as serve answers them.
  static std::pair<std::int64_t, std::int64_t> standing(Served& s, const std::string& m) {
    const Answer a = s.get(kDay + "/members/" + m);
    EXPECT_EQ(a.status, 200) << m << ": " << a.text;
    return {a.body.value("rank", 0), a.body.value("points", 0)};
  }
};

test::PostgresServer* ReplicaTest::primary_ = nullptr;
test::PostgresServer* ReplicaTest::replica_ = nullptr;

const std::string kToReplica = "boardkeeper_postgres_replica_reads_total{to=\"replica\"}";
const std::string kBehind = "boardkeeper_postgres_replica_reads_total{to=\"primary_behind\"}";
const std::string kFailed = "boardkeeper_postgres_replica_reads_total{to=\"primary_failed\"}";

TEST_F(ReplicaTest, AReplicaPausedBehindNeverGivesAStaleRankOrAMissingMember) {
  ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  scores_then_spill(0, 20);  // m05..m19 cold
  caught_up();
  Served s(config_path, log, kNow);
  caught_up();  // serve's start wrote too (its cursor key)
  EXPECT_EQ(standing(s, "m15"), (std::pair<std::int64_t, std::int64_t>{16, 985}));
  EXPECT_GT(metric(s, kToReplica), 0) << "the replica answered while in step";
  const Answer ready = s.get("/readyz");
  EXPECT_EQ(ready.body.value("postgres_replica", ""), "ok") << ready.text;
  EXPECT_GE(ready.body.value("postgres_replica_lag_bytes", -1), 0) << ready.text;

  // The replica stops replaying. Ten more members, all above m15, and a tick: m20..m24 stay
  // hot, m25..m29 and m00..m04 are cold rows the primary has and the replica has not.
  replica_->sql("SELECT pg_wal_replay_pause()");
  scores_then_spill(20, 30, 3000);
  const double behind_before = metric(s, kBehind);
  service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kNow)), &cold);
  const auto want =
      lb.reads().ranks({lb.resolve("pts", "daily", std::nullopt)}, {"m15", "m25", "m02"});
  ASSERT_TRUE(want[0] && want[1] && want[2]);
  EXPECT_EQ(want[0]->rank, 26);
  EXPECT_EQ(want[1]->rank, 6);
  EXPECT_EQ(want[2]->rank, 13);
  EXPECT_EQ(standing(s, "m15").first, 26);
  EXPECT_EQ(standing(s, "m25").first, 6) << "a member only the primary's rows have";
  EXPECT_EQ(standing(s, "m02").first, 13);
  EXPECT_GT(metric(s, kBehind), behind_before) << "reads went to the primary";

  // Replaying again: the replica answers again, as exactly.
  replica_->sql("SELECT pg_wal_replay_resume()");
  caught_up();
  const double replica_before = metric(s, kToReplica);
  EXPECT_EQ(standing(s, "m25").first, 6);
  EXPECT_GT(metric(s, kToReplica), replica_before);
}

TEST_F(ReplicaTest, AStoppedOrFrozenReplicaSendsReadsToThePrimary) {
  ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  scores_then_spill(0, 20);
  caught_up();
  Served s(config_path, log, kNow);
  EXPECT_EQ(standing(s, "m15").first, 16);

  replica_->stop();
  EXPECT_EQ(standing(s, "m16").first, 17);
  EXPECT_GT(metric(s, kFailed), 0);
  Answer ready = s.get("/readyz");
  for (int i = 0; i < 50 && ready.body.value("postgres_replica", "") != "unreachable"; ++i) {
    std::this_thread::sleep_for(milliseconds{100});
    ready = s.get("/readyz");
  }
  EXPECT_EQ(ready.body.value("postgres_replica", ""), "unreachable") << ready.text;
  EXPECT_EQ(ready.body.value("ready", false), true) << ready.text;
  replica_->start();
  caught_up();

  // Frozen: the replica gets half of the read's deadline, then the primary answers.
  std::this_thread::sleep_for(std::chrono::seconds{6});  // the stopped replica's rest is over
  replica_->freeze();
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(standing(s, "m17").first, 18);
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds{2000} + milliseconds{1500});
  replica_->thaw();
}

}  // namespace
}  // namespace bk
