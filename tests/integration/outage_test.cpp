// Outages against real servers of the test's own: a redis-server restarted (with and without
// AOF), connections killed, a frozen server, a server at maxmemory, and a connection cut
// under a tick. The consumer rides them out, probes tell the truth, nothing is counted twice.
// (Probes and memory: outage_probes_test.cpp; cuts: outage_cuts_test.cpp; one binary.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include "outage_fixture.h"

namespace bk {
namespace {

using namespace outage_test;  // NOLINT(google-build-using-namespace): the suite's fixture
using namespace std::chrono_literals;

void restart_while_ingesting(bool aof) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(aof);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string log = "/tmp/bk-outage-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};

  Model before;  // members m*: lost with the data when there is no AOF
  redis::Connection producer = server.connect();
  send_all(producer, before.events(stream, "a", "m", 20000, 300));
  wait_until_reading(server, stream);
  server.shutdown_nosave();  // very likely in the middle of a batch
  std::this_thread::sleep_for(500ms);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  server.start();

  Model after;  // members n*: written after the restart, applied whatever was lost
  redis::Connection again = server.connect();
  send_all(again, after.events(stream, "b", "n", 5000, 100));
  EXPECT_TRUE(caught_up(server, stream, 60s)) << test::read_file(log);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);

  const auto points = board_points(prefix, server);
  for (const auto& [member, sum] : after.sums) EXPECT_EQ(points.at(member), sum) << member;
  if (aof) {
    // Everything acknowledged was on disk: every event counts, exactly once.
    for (const auto& [member, sum] : before.sums) EXPECT_EQ(points.at(member), sum) << member;
    EXPECT_EQ(points.size(), before.sums.size() + after.sums.size());
  }
  const std::string text = test::read_file(log);
  EXPECT_NE(text.find("retrying in"), std::string::npos) << text;
  EXPECT_NE(text.find("redis is back"), std::string::npos) << text;
}

TEST(Outage, IngestRidesOutARedisRestartWithAofAndCountsEveryEventOnce) {
  restart_while_ingesting(true);
}

TEST(Outage, IngestRidesOutARedisRestartThatLostEverythingAndAppliesLaterEvents) {
  restart_while_ingesting(false);
}

// --drain started while Redis is down waits for it, applies everything, then exits 0.
TEST(Outage, DrainingWaitsForRedisInsteadOfExiting) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(true);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  Model model;
  {
    redis::Connection c = server.connect();
    send_all(c, model.events(stream, "d", "m", 3000, 50));
  }
  server.shutdown_nosave();
  const std::string log = "/tmp/bk-outage-drain-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest", "--drain"}, log);
  const test::Reaper reaper{pid};
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  server.start();  // the events come back from the AOF
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_EQ(board_points(prefix, server), model.sums);
}

TEST(Outage, IngestRidesOutKilledConnectionsAndCountsEveryEventOnce) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string log = "/tmp/bk-outage-kill-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  const std::string name = "boardkeeper:" + std::to_string(pid);

  // The producer kills from its own connection (SKIPME yes), so its writes are all certain.
  Model model;
  redis::Connection c = server.connect();
  std::int64_t killed = 0;
  // 30 rounds of events and kills, then kills alone until more than five connections died
  // (a consumer killed turn after turn backs off, so a kill may find it disconnected).
  for (int round = 0; round < 30 || (killed <= 5 && round < 130); ++round) {
    if (round < 30) send_all(c, model.events(stream, "k", "m", 1000, 200));
    std::this_thread::sleep_for(round < 30 ? 20ms : 200ms);
    if (round % 2 == 0) {
      killed += c.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).as_int();
    } else {
      killed += kill_clients_named(c, name);  // the consumer's connection, by its name
    }
  }
  EXPECT_GT(killed, 5);
  EXPECT_TRUE(caught_up(server, stream, 60s)) << test::read_file(log);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  const auto points = board_points(prefix, server);
  EXPECT_EQ(points.size(), model.sums.size());
  for (const auto& [member, sum] : model.sums) EXPECT_EQ(points.at(member), sum) << member;
}

// The consumer reads the next batch on a second connection while a batch applies. Cutting
// that connection alone, again and again, loses nothing and applies nothing twice: what it
// may have read is pending, and a pass over the pending list reads it again at once (long
// before reclaim_idle, 30 s by default, would let any consumer take it over).
TEST(Outage, CuttingTheReadAheadConnectionLosesNothingAndAppliesNothingTwice) {
  const std::string prefix = test::unique_prefix();
  OwnRedis server(false);
  const std::string path = write_config_for(prefix, server.url());
  const std::string stream = prefix + ":events";
  const std::string log = "/tmp/bk-outage-read-ahead-" + prefix + ".log";
  const int pid = test::spawn_cli({"--config", path, kNow, "ingest"}, log);
  const test::Reaper reaper{pid};
  const std::string name = "boardkeeper:" + std::to_string(pid) + ":read-ahead";

  // A killer cuts the connection as often as it can, so that some cuts fall after the
  // server delivered a read (its entries are pending) and before the consumer read them.
  std::atomic<bool> producing{true};
  std::atomic<std::int64_t> killed{0};
  std::thread killer([&] {
    redis::Connection k = server.connect();
    while (producing.load()) killed += kill_clients_named(k, name);
  });
  Model model;
  redis::Connection c = server.connect();
  for (int round = 0; round < 150; ++round) {
    send_all(c, model.events(stream, "r", "m", 500, 300));
    std::this_thread::sleep_for(5ms);
  }
  producing = false;
  killer.join();
  EXPECT_GT(killed.load(), 3);
  EXPECT_TRUE(caught_up(server, stream, 15s)) << test::read_file(log);
  EXPECT_TRUE(alive(pid)) << test::read_file(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(test::wait_cli(pid), 0) << test::read_file(log);
  EXPECT_EQ(board_points(prefix, server), model.sums);
}

TEST(Outage, BackoffDoublesFromItsFirstDelayUpToItsCapWithJitterBelowIt) {
  const lifecycle::Backoff b{Millis{100}, Millis{10000}};
  EXPECT_EQ(b.delay(1, 1.0), Millis{100});
  EXPECT_EQ(b.delay(2, 1.0), Millis{200});
  EXPECT_EQ(b.delay(5, 1.0), Millis{1600});
  EXPECT_EQ(b.delay(8, 1.0), Millis{10000});
  EXPECT_EQ(b.delay(1000000, 1.0), Millis{10000});
  EXPECT_EQ(b.delay(1, 0.0), Millis{50});  // jitter: between half and all of it
  EXPECT_EQ(b.delay(100, 0.0), Millis{5000});
}

}  // namespace
}  // namespace bk
