// Outages against a redis-server of the test's own, seen from outside: /readyz and the
// metrics follow Redis stopped, frozen and back; dead letters refused at maxmemory stay
// pending until memory returns.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include "outage_fixture.h"

namespace bk {
namespace {

using namespace outage_test;  // NOLINT(google-build-using-namespace): the suite's fixture
using namespace std::chrono_literals;

TEST(Outage, ReadinessFollowsRedisStoppedFrozenAndBackWhileTheConsumerStaysAlive) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string log = "/tmp/bk-outage-probes-" + prefix + ".log";
  const int pid =
      test::spawn_cli({"--config", path, kNow, "ingest", "--listen", "127.0.0.1:0"}, log);
  const test::Reaper reaper{pid};
  const int port = listening_port(log);
  ASSERT_GT(port, 0);
  ASSERT_TRUE(answers(port, "/readyz", 200, 10s)) << test::read_file(log);
  EXPECT_EQ(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 0);

  // Stopped: not ready within seconds, alive all along, the failures counted.
  server.shutdown_nosave();
  EXPECT_TRUE(answers(port, "/readyz", 503, 5s)) << test::read_file(log);
  for (int i = 0; i < 4; ++i, std::this_thread::sleep_for(1s)) {
    EXPECT_EQ(get(port, "/healthz").status, 200);
    EXPECT_EQ(get(port, "/readyz").status, 503);
  }
  EXPECT_GE(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 2);
  server.start();
  EXPECT_TRUE(answers(port, "/readyz", 200, 20s)) << test::read_file(log);
  EXPECT_EQ(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 0);
  Model model;
  redis::Connection c = server.connect();
  send_all(c, model.events(stream, "r", "m", 50, 10));
  EXPECT_TRUE(caught_up(server, stream, 20s)) << test::read_file(log);

  // Frozen (SIGSTOP): not ready well before the 10 s command timeout gives up.
  server.freeze();
  const auto turned = answers(port, "/readyz", 503, 9s);
  EXPECT_TRUE(turned) << test::read_file(log);
  if (turned) {
    EXPECT_LT(turned->count(), 8.0);
  }
  EXPECT_EQ(get(port, "/healthz").status, 200);
  std::this_thread::sleep_for(12s);  // past the command timeout: a failure, still alive
  EXPECT_EQ(get(port, "/healthz").status, 200);
  EXPECT_EQ(get(port, "/readyz").status, 503);
  EXPECT_GE(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 1);
  server.thaw();
  EXPECT_TRUE(answers(port, "/readyz", 200, 20s)) << test::read_file(log);
  EXPECT_EQ(metric(port, "boardkeeper_backend_consecutive_failures", kRedis), 0);
  send_all(c, model.events(stream, "r", "m", 50, 10));
  EXPECT_TRUE(caught_up(server, stream, 20s)) << test::read_file(log);
  EXPECT_EQ(board_points(prefix, server), model.sums);

  // SIGTERM during a backoff sleep: a prompt, clean exit.
  server.shutdown_nosave();
  std::this_thread::sleep_for(3s);
  const auto asked = Steady::now();
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_LT(std::chrono::duration<double>(Steady::now() - asked).count(), 3.0);
}

// --- dead letters at maxmemory ---------------------------------------------------------

// Bad events (malformed, unknown board), then maxmemory below what is used, in one
// transaction: the consumer reads them when no dead letter can be written any more. Returns
// the bad events' stream ids.
std::set<std::string> add_bad_events_at_maxmemory(redis::Connection& c, const std::string& stream) {
  c.command({"MULTI"}).checked();
  for (int i = 0; i < 5; ++i) {
    c.command({"XADD", stream, "*", "board", "ing", "member", "x", "value", "many"});
    c.command({"XADD", stream, "*", "board", "nope", "member", "y", "value", "1"});
  }
  c.command({"CONFIG", "SET", "maxmemory", "1"});
  const redis::Reply added = c.command({"EXEC"}).checked();
  std::set<std::string> bad;
  for (std::size_t i = 0; i < 10; ++i) bad.insert(added.at(i).as_string());
  return bad;
}

TEST(Outage, DeadLettersRefusedAtMaxmemoryStayPendingUntilMemoryReturns) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string dead = stream + ":dead";
  redis::Connection c = server.connect();
  c.command({"XGROUP", "CREATE", stream, "boardkeeper", "0", "MKSTREAM"}).checked();
  const std::set<std::string> bad = add_bad_events_at_maxmemory(c, stream);

  const std::string log = "/tmp/bk-outage-oom-" + prefix + ".log";
  const int pid =
      test::spawn_cli({"--config", path, kNow, "ingest", "--listen", "127.0.0.1:0"}, log);
  const test::Reaper reaper{pid};
  const int port = listening_port(log);
  ASSERT_GT(port, 0);
  // Read, refused, and left pending: nothing acknowledged without its dead letter.
  bool read_all = false;
  for (int i = 0; i < 100 && !read_all; ++i, std::this_thread::sleep_for(100ms)) {
    const redis::Reply groups = c.command({"XINFO", "GROUPS", stream}).checked();
    read_all = field(groups.at(0), "lag") == 0;
  }
  EXPECT_TRUE(read_all);
  std::this_thread::sleep_for(1500ms);
  const redis::Reply pending = c.command({"XPENDING", stream, "boardkeeper", "-", "+", "100"});
  std::set<std::string> held;
  for (const auto& p : pending.checked().elements) held.insert(p.at(0).as_string());
  EXPECT_EQ(held, bad);
  EXPECT_EQ(c.command({"EXISTS", dead}).as_int(), 0);
  EXPECT_GE(metric(port, "boardkeeper_ingest_dead_letter_failures_total"), 10);
  const std::string text = test::read_file(log);
  EXPECT_NE(text.find(*bad.begin()), std::string::npos) << text;  // names the entry
  EXPECT_NE(text.find("OOM"), std::string::npos) << text;         // and Redis's reason

  // Memory back: the dead letters are written and the pending list drains.
  c.command({"CONFIG", "SET", "maxmemory", "0"}).checked();
  bool drained = false;
  for (int i = 0; i < 300 && !drained; ++i, std::this_thread::sleep_for(100ms)) {
    drained = c.command({"XPENDING", stream, "boardkeeper"}).at(0).as_int() == 0;
  }
  EXPECT_TRUE(drained) << test::read_file(log);
  EXPECT_EQ(test::dead_lettered_ids(c, dead), bad);
  EXPECT_EQ(c.command({"XLEN", dead}).as_int(), 10);
  EXPECT_EQ(metric(port, "boardkeeper_ingest_events_dead_lettered_total"), 10);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
}

// --- tick ------------------------------------------------------------------------------

// A TCP proxy of the test's own in front of a server (the suite's Redis or PostgreSQL):

}  // namespace
}  // namespace bk
