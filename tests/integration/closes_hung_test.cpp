// Close notices against hung backends (issue 39): the test's own Redis or PostgreSQL frozen
// (SIGSTOP: it takes connections and requests and never answers). `closes` ends by its deadline
// (exit 3, naming PostgreSQL as not answering); a tick held at a pause point of
// core/stop_points.h while a server freezes, then let go, ends by its bound with the exit code
// and report of an outage, leaves nothing half-written and its notices pending, and the next
// tick publishes each of them exactly once.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "core/stop_points.h"
#include "harness.h"
#include "hot/keys.h"
#include "own_postgres.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

const Instant kDay = *parse_rfc3339("2027-03-01T00:00:00Z");
// What an end may take beyond its bound: the exit's own work on a loaded machine. Before the
// bounds, these commands waited for as long as the freeze lasted.
constexpr milliseconds kMargin{5000};
constexpr int kTickTimeoutS = 2;  // tick's --postgres-timeout in these tests

const char* const kBoards = R"(  - name: arena
    periods: [hourly]
    max_points: 1000000
    hot_keep: 4
    display: 2
    notice_top: 3
    archive: {grace: 1m}
    retention: {default: 3650d}
)";

// How a spawned command ended.
struct Ended {
  int code = -1;
  milliseconds took{0};
  std::string log;
};

class ClosesHungTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    postgres_ = new test::PostgresServer();
    redis_ = new test::RedisServer();
  }
  static void TearDownTestSuite() {
    delete redis_;
    delete postgres_;
  }
  void SetUp() override {
    const auto r = cli({"migrate"}, kDay);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void TearDown() override {
    postgres_->thaw();
    redis_->thaw();
    std::remove(log.c_str());
  }

  static test::PostgresServer* postgres_;
  static test::RedisServer* redis_;

  std::string prefix = test::unique_prefix();
  std::string path = test::write_text_config(
      prefix, test::config_text_for(redis_->url(), prefix, kBoards, postgres_->url()));
  std::string log = "/tmp/" + prefix + "-hung.log";
  std::string stream = hot::closes_key(prefix);

  static std::string at(Instant t) { return "--now=" + format_rfc3339(t); }

  test::RunResult cli(std::vector<std::string> args, Instant now) {
    args.insert(args.begin(), {"--config", path, at(now)});
    return test::run_cli(args);
  }

  // Three members score in hour `hour` of kDay.
  void fill(int hour) {
    const Config config = parse_config(test::read_file(path), path, {});
    redis::Connection conn = redis_->connect();
    cold::ColdStore cold(postgres_->url(), prefix);
    const Instant start = kDay + std::chrono::hours{hour};
    service::Leaderboards lb(config, conn, Clock(start + std::chrono::minutes{30}), &cold);
    for (int i = 0; i < 3; ++i) {
      const service::Update u{"arena", "m" + std::to_string(i), 10 + i,
                              start + std::chrono::seconds{i}, ""};
      ASSERT_EQ(lb.apply(u).status, service::UpdateStatus::applied);
    }
  }

  // `args` spawned and held at `point` (its first arrival); `meanwhile` runs while it is held,
  // then it goes on: how it ended (waited for at most a minute, then killed).
  Ended held_at(const std::string& point, const std::vector<std::string>& args,
                const std::function<void()>& meanwhile) {
    std::vector<std::string> argv{"--config", path};
    argv.insert(argv.end(), args.begin(), args.end());
    const int pid = test::spawn_cli(argv, log, {std::string(kStopAtVariable) + "=" + point + ":1"});
    test::Reaper reaper{pid};
    Ended e;
    if (!test::wait_stopped(pid, std::chrono::seconds{60}, e.code)) {
      ADD_FAILURE() << "never reached " << point << ": " << test::read_file(log);
      return e;
    }
    meanwhile();
    const auto started = Steady::now();
    ::kill(pid, SIGCONT);
    if (test::wait_stopped(pid, std::chrono::seconds{60}, e.code)) {
      ADD_FAILURE() << "stopped again";
    }
    e.took = std::chrono::duration_cast<milliseconds>(Steady::now() - started);
    e.log = test::read_file(log);
    std::cout << "[ took     ] " << point << ": exit " << e.code << " after " << e.took.count()
              << " ms\n";
    return e;
  }

  std::int64_t count(const std::string& sql) {
    return std::stoll(test::psql_at(postgres_->url(), sql));
  }
  std::int64_t archived() {
    return count("SELECT count(*) FROM " + prefix + ".periods WHERE status = 'archived'");
  }
  std::int64_t notices(const std::string& where = "true") {
    return count("SELECT count(*) FROM " + prefix + ".period_closes WHERE " + where);
  }

  // Nothing half-written: an archived period has its notice and every notice its period, with
  // as many history rows as the notice says.
  void expect_whole() {
    const std::string same =
        " n.board = p.board AND n.period = p.period AND n.period_id = p.period_id";
    EXPECT_EQ(notices(), archived());
    EXPECT_EQ(
        count("SELECT count(*) FROM " + prefix + ".periods p WHERE status = 'archived'" +
              " AND NOT EXISTS (SELECT 1 FROM " + prefix + ".period_closes n WHERE" + same + ")"),
        0);
    EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".period_closes n WHERE members <>" +
                    " (SELECT count(*) FROM " + prefix + ".history p WHERE" + same + ")"),
              0);
  }

  // Every notice is in the stream once, as the entry <seq>-1, and none is pending.
  void expect_exactly_once() {
    expect_whole();
    EXPECT_EQ(notices("published_at IS NULL"), 0);
    std::vector<std::string> want;
    std::istringstream seqs(test::psql_at(
        postgres_->url(), "SELECT seq FROM " + prefix + ".period_closes ORDER BY seq"));
    for (std::string seq; std::getline(seqs, seq);) want.push_back(seq + "-1");
    std::vector<std::string> got;
    redis::Connection conn = redis_->connect();
    for (const redis::Reply& e : conn.command({"XRANGE", stream, "-", "+"}).elements) {
      got.push_back(e.at(0).as_string());
    }
    EXPECT_EQ(got, want);
  }

  // Ticks at `now` until every due period is archived and published (a period whose claim the
  // cut tick's server session still held waits for the next): the last exits 0.
  void finish(Instant now, std::int64_t due) {
    for (int run = 0; run < 5; ++run) {
      const auto r = cli({"tick"}, now);
      if (archived() == due && notices("published_at IS NULL") == 0) {
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        return;
      }
    }
    ADD_FAILURE() << "5 ticks did not finish the work";
  }
};

test::PostgresServer* ClosesHungTest::postgres_ = nullptr;
test::RedisServer* ClosesHungTest::redis_ = nullptr;

TEST_F(ClosesHungTest, TheClosesCommandEndsByItsDeadlineWhenPostgresIsFrozen) {
  fill(0);
  const Instant now = kDay + std::chrono::hours{2};
  ASSERT_EQ(cli({"tick"}, now).exit_code, 0);
  ASSERT_EQ(cli({"closes"}, now).exit_code, 0);
  postgres_->freeze();
  const int pid = test::spawn_cli({"--config", path, "closes", "--json"}, log);
  test::Reaper reaper{pid};
  const auto started = Steady::now();
  int code = -1;
  EXPECT_FALSE(test::wait_stopped(pid, std::chrono::seconds{60}, code));
  const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - started);
  std::cout << "[ took     ] closes: exit " << code << " after " << took.count() << " ms\n";
  EXPECT_EQ(code, 3);
  EXPECT_LT(took.count(), 10000 + kMargin.count());
  const std::string said = test::read_file(log);
  EXPECT_NE(said.find("postgresql at 127.0.0.1:" + std::to_string(postgres_->port())),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("no answer within the call's deadline (the server may be hung)"),
            std::string::npos)
      << said;
}

// Redis stops answering as tick is about to add the first notice (the archives committed):
// the add gives up at Redis's command timeout (10 s), and tick ends as it does when Redis is
// down at that point (the same exit code, the notices FAILED and pending in its report and
// metrics); the next tick with Redis back publishes every notice once (the add the frozen
// Redis still held, if it ran it on waking, is found in the stream, not repeated).
TEST_F(ClosesHungTest, ATickWhoseRedisFreezesWhilePublishingEndsAsWhenItIsDown) {
  const std::string metrics = "/tmp/" + prefix + ".prom";
  const auto pending_in = [&] {
    return test::read_file(metrics).find("\nboardkeeper_close_notices_pending 2\n") !=
           std::string::npos;
  };
  fill(0);
  fill(1);
  const Instant first = kDay + std::chrono::hours{2} + std::chrono::minutes{5};
  const Ended down = held_at("publish.before_xadd", {at(first), "tick", "--metrics-file", metrics},
                             [&] { redis_->stop(); });
  EXPECT_NE(down.log.find("close notices  FAILED"), std::string::npos) << down.log;
  EXPECT_TRUE(pending_in()) << test::read_file(metrics);
  redis_->start();
  finish(first, 2);
  expect_exactly_once();

  fill(2);
  fill(3);
  const Instant second = first + std::chrono::hours{2};
  const Ended hung = held_at("publish.before_xadd", {at(second), "tick", "--metrics-file", metrics},
                             [&] { redis_->freeze(); });
  EXPECT_EQ(hung.code, down.code) << hung.log;
  EXPECT_LT(hung.took.count(), 10000 + kMargin.count());
  EXPECT_NE(hung.log.find("close notices  FAILED"), std::string::npos) << hung.log;
  EXPECT_NE(hung.log.find("FAILED: redis 127.0.0.1:" + std::to_string(redis_->port())),
            std::string::npos)
      << hung.log;
  EXPECT_NE(hung.log.find("  2 pending: the next tick publishes them"), std::string::npos)
      << hung.log;
  EXPECT_TRUE(pending_in()) << test::read_file(metrics);
  EXPECT_EQ(archived(), 4);
  expect_whole();
  redis_->thaw();
  finish(second, 4);
  expect_exactly_once();
  std::remove(metrics.c_str());
}

// PostgreSQL stops answering at each point of tick's close path, the archive's transaction
// (claimed, filled, with its notice written but not committed, committed) and the publisher's
// (before and after an add, its bookkeeping): the call waiting on it gives up after
// --postgres-timeout and tick ends naming the server, exit 3 from an archive, exit 1 with the
// notices FAILED from the publisher (as any failure to publish); nothing is half-written (an
// archive and its notice commit together or not at all); the next tick completes the work, each
// notice in the stream once. Before the bound, tick waited for as long as the freeze lasted.
TEST_F(ClosesHungTest,
       ATickWhosePostgresFreezesAtAnyPointEndsByItsTimeoutAndLeavesNothingHalfDone) {
  // The archive's five points, then the publisher's four.
  const std::vector<std::string> points{
      "archive.begin",       "archive.before_commit", "notice.before_commit",
      "notice.written",      "archive.released",      "publish.marked_through",
      "publish.before_xadd", "publish.after_xadd",    "mark.done"};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const int hour = 2 * static_cast<int>(i);
    fill(hour);
    fill(hour + 1);
    const Instant now = kDay + std::chrono::hours{hour + 2} + std::chrono::minutes{5};
    const Ended e =
        held_at(points[i], {at(now), "tick", "--postgres-timeout", std::to_string(kTickTimeoutS)},
                [&] { postgres_->freeze(); });
    // The archives' failure ends the pass (exit 3); the publisher's lands in its report.
    const bool publishing = i >= 5;
    EXPECT_EQ(e.code, publishing ? 1 : 3) << points[i] << ": " << e.log;
    EXPECT_LT(e.took.count(), kTickTimeoutS * 1000 + kMargin.count()) << points[i];
    const std::string server = "postgresql at 127.0.0.1:" + std::to_string(postgres_->port());
    EXPECT_NE(e.log.find(server), std::string::npos) << points[i] << ": " << e.log;
    EXPECT_NE(e.log.find("no answer within the call's deadline (the server may be hung)"),
              std::string::npos)
        << points[i] << ": " << e.log;
    if (publishing) {
      EXPECT_NE(e.log.find("close notices  FAILED: " + server), std::string::npos) << e.log;
      // The count failed with the rest: the report and the summary say so, never "0 pending".
      EXPECT_NE(e.log.find("pending unknown (the count failed)"), std::string::npos) << e.log;
      EXPECT_EQ(e.log.find(", 0 pending"), std::string::npos) << e.log;
    }
    postgres_->thaw();
    expect_whole();
    finish(now, 2 * static_cast<std::int64_t>(i + 1));
    expect_exactly_once();
  }
}

}  // namespace
}  // namespace bk
