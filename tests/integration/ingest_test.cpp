// The stream consumer against a real Redis: concurrent producers, concurrent consumers, one
// killed midway and restarted; every event counts exactly once, bad ones are dead-lettered
// (and acknowledged only once their dead letter is written).
// (Pending entries: ingest_pending_test.cpp; a failing board: ingest_failing_board_test.cpp;
// one binary.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "hot/keys.h"
#include "ingest_fixture.h"
#include "lifecycle/ingest.h"

namespace bk {
namespace {

using namespace ingest_test;  // NOLINT(google-build-using-namespace): the suite's fixture
using namespace std::chrono_literals;

constexpr int kProducers = 3;
constexpr int kPerProducer = 33334;  // 100,002 events

// What the producers sent: valid events' points per member (a repeated id counts once) and
// malformed ones counted, per producer; events sent so far.
struct Produced {
  std::vector<std::map<std::string, std::int64_t>> sums =
      std::vector<std::map<std::string, std::int64_t>>(kProducers);
  std::vector<int> malformed = std::vector<int>(kProducers, 0);
  std::atomic<int> produced{0};
};

// Producer `p`'s kPerProducer events into `stream`, 500 a pipeline, recorded in `model`.
void produce(int p, const std::string& stream, Produced& model) {
  redis::Connection own = test::connect_redis();
  std::mt19937 rng(static_cast<unsigned>(p));
  std::vector<redis::Args> batch;
  for (int n = 0; n < kPerProducer; ++n) {
    const std::string member = "m" + std::to_string(rng() % 1000);
    const std::string value = std::to_string(1 + rng() % 10);
    const std::string at = std::to_string(to_epoch_ms(*parse_rfc3339("2027-01-04T10:00:00Z")) + n);
    if (n % 1000 == 999) {  // malformed: goes to the dead-letter stream
      batch.push_back({"XADD", stream, "*", "board", "ing", "member", member, "value", "x"});
      ++model.malformed[static_cast<std::size_t>(p)];
    } else {
      const std::string id = "p" + std::to_string(p) + "-" + std::to_string(n);
      batch.push_back({"XADD", stream, "*", "board", "ing", "member", member, "value", value, "at",
                       at, "id", id});
      if (n % 500 == 0) batch.push_back(batch.back());  // delivered twice, counted once
      model.sums[static_cast<std::size_t>(p)][member] += std::stoll(value);
    }
    if (batch.size() >= 500) {
      for (const auto& r : own.pipeline(batch)) r.checked();
      model.produced += static_cast<int>(batch.size());
      batch.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  for (const auto& r : own.pipeline(batch)) r.checked();
}

TEST(Ingest, ProducersAndAKilledConsumerLoseNothingAndCountNothingTwice) {
  const std::string prefix = test::unique_prefix();
  const std::string path = test::write_config(prefix, kBoards);
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  const std::string stream = test::events_stream(prefix);
  redis::Connection conn = test::connect_redis();
  // The model: valid events by id (a repeated id counts once), malformed ones counted.
  Produced model;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] { produce(p, stream, model); });
  }
  const std::vector<std::string> args{
      "--config", path, "--now=2027-01-04T12:00:00Z", "ingest", "--reclaim-idle-ms", "500"};
  const int b = test::spawn_cli(args, "/tmp/bk-ingest-b-" + prefix + ".log");
  int a = test::spawn_cli(args, "/tmp/bk-ingest-a-" + prefix + ".log");
  while (model.produced.load() < 40000) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(a, SIGKILL);
  EXPECT_EQ(test::wait_cli(a), 128 + SIGKILL);
  a = test::spawn_cli(args, "/tmp/bk-ingest-a2-" + prefix + ".log");
  for (auto& t : producers) t.join();

  // Wait until the group has read everything and nothing is pending.
  EXPECT_TRUE(caught_up(conn, {stream}, 1200));
  kill(a, SIGTERM);
  kill(b, SIGTERM);
  EXPECT_EQ(test::wait_cli(a), 0);  // a clean stop after the current batch
  EXPECT_EQ(test::wait_cli(b), 0);

  std::map<std::string, std::int64_t> want;
  int bad = 0;
  for (int p = 0; p < kProducers; ++p) {
    for (const auto& [m, v] : model.sums[static_cast<std::size_t>(p)]) want[m] += v;
    bad += model.malformed[static_cast<std::size_t>(p)];
  }
  EXPECT_EQ(ing_points(conn, prefix), want);
  const redis::Reply dead = conn.command({"XRANGE", stream + ":dead", "-", "+"}).checked();
  EXPECT_EQ(static_cast<int>(dead.elements.size()), bad);
  for (const auto& e : dead.elements) {
    EXPECT_EQ(e.at(1).at(0).as_string(), "reason");
    EXPECT_NE(e.at(1).at(1).as_string().find("value 'x'"), std::string::npos);
  }
}

// Entries no event can be made of without guessing go to the dead letters with their
// reason: a field twice, an event id past 512 bytes or with a control character (the rule of
// HTTP's ids too), an event time outside 1970-9999 (as
// epoch milliseconds too: ±2^63 must not become a garbage date in the reason).
TEST(Ingest, EntriesWithDoubledFieldsHugeIdsOrImpossibleTimesAreDeadLettered) {
  const std::string prefix = test::unique_prefix();
  const std::string path = test::write_config(prefix, kBoards);
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  redis::Connection conn = test::connect_redis();
  const std::string stream = test::events_stream(prefix);
  const std::vector<std::pair<std::vector<std::string>, std::string>> entries{
      {{"board", "ing", "member", "a", "value", "1", "value", "5"},
       "field 'value' appears more than once"},
      {{"board", "ing", "member", "b", "member", "c", "value", "1"},
       "field 'member' appears more than once"},
      {{"board", "ing", "member", "d", "value", "1", "id", std::string(513, 'x')},
       "event id is 513 bytes, more than 512"},
      {{"board", "ing", "member", "d", "value", "1", "id", "e\x01x"},
       "event id contains the control character U+0001 at byte offset 1"},
      {{"board", "ing", "member", "e", "value", "1", "at", "9223372036854775807"},
       "event time 9223372036854775807 ms since 1970 is outside 1970-01-01T00:00:00Z .. "
       "9999-12-31T23:59:59.999Z"},
      {{"board", "ing", "member", "f", "value", "1", "at", "-9223372036854775808"},
       "event time -9223372036854775808 ms since 1970 is outside"},
      {{"board", "ing", "member", "g", "value", "2"}, ""},  // fine
  };
  for (const auto& [fields, reason] : entries) {
    redis::Args add{"XADD", stream, "*"};
    add.insert(add.end(), fields.begin(), fields.end());
    conn.command(add).checked();
  }
  const auto run =
      test::run_cli({"--config", path, "--now=2027-01-04T12:00:00Z", "ingest", "--drain"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const redis::Reply dead = conn.command({"XRANGE", stream + ":dead", "-", "+"}).checked();
  ASSERT_EQ(dead.elements.size(), entries.size() - 1);
  for (std::size_t i = 0; i + 1 < entries.size(); ++i) {
    const redis::Reply& fields = dead.at(i).at(1);
    ASSERT_EQ(fields.at(0).as_string(), "reason");
    EXPECT_NE(fields.at(1).as_string().find(entries[i].second), std::string::npos)
        << fields.at(1).as_string();
  }
  EXPECT_EQ(ing_points(conn, prefix), (std::map<std::string, std::int64_t>{{"g", 2}}));
}

// Three streams, each with a hash tag of its own: on the test cluster each one on another
// master (their slots in the three thirds that its masters serve), so one consumer reads
// three nodes and waits on one at a time. Events arrive on every stream while it waits:
// all of them count once, the malformed ones are dead-lettered beside their own stream.
TEST(Ingest, OneConsumerReadsStreamsOnSeveralNodes) {
  const std::string prefix = test::unique_prefix();
  const std::string path = test::write_config(prefix, kBoards);
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  const std::vector<std::string> streams = streams_on_three_masters(prefix);
  std::vector<std::string> args{"--config", path, "--now=2027-01-04T12:00:00Z", "ingest"};
  for (const std::string& s : streams) args.insert(args.end(), {"--stream", s});
  const int consumer = test::spawn_cli(args, "/tmp/bk-ingest-nodes-" + prefix + ".log");
  test::Reaper reaper{consumer};

  redis::Connection conn = test::connect_redis();
  std::map<std::string, std::int64_t> want;
  std::vector<int> malformed(streams.size(), 0);
  std::mt19937 rng(11);
  for (int round = 0; round < 30; ++round) {
    // Each round on one stream only, often while the consumer waits on another.
    const std::size_t s = rng() % streams.size();
    std::vector<redis::Args> batch;
    for (int n = 0; n < 200; ++n) {
      const std::string member = "m" + std::to_string(rng() % 300);
      if (n == 199) {
        batch.push_back({"XADD", streams[s], "*", "board", "ing", "member", member, "value", "x"});
        ++malformed[s];
        continue;
      }
      const std::string value = std::to_string(1 + rng() % 10);
      batch.push_back({"XADD", streams[s], "*", "board", "ing", "member", member, "value", value,
                       "id", "r" + std::to_string(round) + "-" + std::to_string(n)});
      want[member] += std::stoll(value);
    }
    for (const auto& r : conn.pipeline(batch)) r.checked();
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 150));
  }
  EXPECT_TRUE(caught_up(conn, streams, 600))
      << test::read_file("/tmp/bk-ingest-nodes-" + prefix + ".log");
  kill(consumer, SIGTERM);
  EXPECT_EQ(test::wait_cli(consumer), 0);

  EXPECT_EQ(ing_points(conn, prefix), want);
  for (std::size_t s = 0; s < streams.size(); ++s) {
    EXPECT_EQ(conn.command({"XLEN", streams[s] + ":dead"}).as_int(), malformed[s]) << streams[s];
  }
}

// A consumer group lost on one stream's node (a restart without persistence, a flush): the
// consumer creates it again and reads that stream from its start (its events carry ids, so
// none counts twice), while the entries the same round trip delivered from the other
// streams are applied at once, not left pending (reclaim_idle is long here: a take-over
// would not come within the test).
TEST(Ingest, AGroupLostOnOneStreamIsCreatedAgainWithoutHoldingUpTheOthers) {
  const std::string prefix = test::unique_prefix();
  const std::string path = test::write_config(prefix, kBoards);
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  const std::vector<std::string> streams = streams_on_three_masters(prefix);
  std::vector<std::string> args{
      "--config", path, "--now=2027-01-04T12:00:00Z", "ingest", "--reclaim-idle-ms", "600000"};
  for (const std::string& s : streams) args.insert(args.end(), {"--stream", s});
  const std::string log = "/tmp/bk-ingest-lost-" + prefix + ".log";
  const int consumer = test::spawn_cli(args, log);
  test::Reaper reaper{consumer};

  redis::Connection conn = test::connect_redis();
  std::map<std::string, std::int64_t> want;
  int n = 0;
  const auto produce = [&] {
    std::vector<redis::Args> batch;
    for (int i = 0; i < 300; ++i, ++n) {
      const std::string member = "m" + std::to_string(n % 50);
      batch.push_back({"XADD", streams[static_cast<std::size_t>(n) % streams.size()], "*", "board",
                       "ing", "member", member, "value", "2", "id", "e" + std::to_string(n)});
      want[member] += 2;
    }
    for (const auto& r : conn.pipeline(batch)) r.checked();
  };
  produce();
  ASSERT_TRUE(caught_up(conn, streams, 300)) << test::read_file(log);
  ASSERT_EQ(conn.command({"XGROUP", "DESTROY", streams[1], "boardkeeper"}).as_int(), 1);
  produce();
  EXPECT_TRUE(caught_up(conn, streams, 300)) << test::read_file(log);
  kill(consumer, SIGTERM);
  EXPECT_EQ(test::wait_cli(consumer), 0);

  EXPECT_EQ(ing_points(conn, prefix), want);
}

}  // namespace
}  // namespace bk
