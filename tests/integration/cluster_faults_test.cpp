// `ingest` on a busy board while the Redis Cluster under it changes (run by on_cluster.sh
// against the 3-master + 3-replica cluster tests/run.sh starts): a live migration of the
// board's slot and a manual failover lose nothing and count nothing twice; kill -9 of the
// board's master is ridden out by ingest itself, and what may be lost is what Redis's
// asynchronous replication loses (so: nothing counted twice, nothing dead-lettered).
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "harness.h"
#include "redis/error.h"
#include "redis/slots.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using namespace std::chrono_literals;

const char* kBoards = R"(  - name: "mig*"
    periods: [daily]
    max_points: 10000000
    hot_keep: 100000
    display: 10
    retention: {default: 3650d}
)";

struct Node {
  std::string id, host;
  int port = 0;
  bool master = false;
  std::string master_id;  // of a replica
};

std::vector<Node> nodes(redis::Connection& any) {
  std::vector<Node> out;
  const std::string text = any.master_command(0, {"CLUSTER", "NODES"}).as_string();
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    std::istringstream line(text.substr(at, end - at));
    at = end == std::string::npos ? text.size() : end + 1;
    std::string id, address, flags, master;
    if (!(line >> id >> address >> flags >> master)) continue;
    if (flags.find("fail") != std::string::npos) continue;
    Node n;
    n.id = id;
    n.host = address.substr(0, address.rfind(':'));
    n.port = std::atoi(address.c_str() + address.rfind(':') + 1);
    n.master = flags.find("master") != std::string::npos;
    if (!n.master) n.master_id = master;
    out.push_back(n);
  }
  return out;
}

redis::Connection plain(const std::string& host, int port) {
  redis::Options o = redis::parse_url(test::redis_url());
  o.host = host;
  o.port = port;
  return redis::Connection(o);
}

// The master serving `slot`.
Node owner_of(redis::Connection& c, int slot) {
  const redis::Reply slots = c.master_command(0, {"CLUSTER", "SLOTS"}).checked();
  for (const redis::Reply& r : slots.elements) {
    if (r.at(0).as_int() <= slot && slot <= r.at(1).as_int()) {
      for (const Node& n : nodes(c)) {
        if (n.id == r.at(2).at(2).as_string()) return n;
      }
    }
  }
  throw std::runtime_error("no master serves slot " + std::to_string(slot));
}

// A board whose slot's master does not also hold the stream: disturbing the board leaves
// the stream alone.
std::string board_apart_from(redis::Connection& c, const std::string& stream) {
  const std::string stream_master = owner_of(c, redis::key_slot(stream)).id;
  for (int i = 0;; ++i) {
    const std::string board = "mig" + std::to_string(i);
    if (owner_of(c, redis::key_slot("{" + board + "}")).id != stream_master) return board;
  }
}

bool caught_up(redis::Connection& c, const std::string& stream) {
  const redis::Reply groups = c.command({"XINFO", "GROUPS", stream});
  if (groups.is_error() || groups.elements.empty()) return false;
  const redis::Reply& g = groups.at(0);
  std::int64_t lag = -1, pending = -1;
  for (std::size_t i = 0; i + 1 < g.elements.size(); i += 2) {
    if (g.at(i).as_string() == "lag" && !g.at(i + 1).is_nil()) lag = g.at(i + 1).as_int();
    if (g.at(i).as_string() == "pending") pending = g.at(i + 1).as_int();
  }
  return lag == 0 && pending == 0;
}

// Commands of this test's own connection ride out a failover: reconnect and try again.
template <class F>
auto retrying(redis::Connection& c, F&& f) -> decltype(f()) {
  for (int attempt = 0;; ++attempt) {
    try {
      return f();
    } catch (const redis::ConnectionError&) {
      if (attempt == 100) throw;
      std::this_thread::sleep_for(200ms);
      try {
        c.reconnect();
      } catch (const redis::ConnectionError&) {
      }
    }
  }
}

// However a test that kills a master ends, the node comes back, as a replica of its
// successor: the cluster is 3 + 3 again for the suites after it.
struct Restarted {
  std::string dir;
  Node node;
  ~Restarted() {
    const std::string d = dir + "/" + std::to_string(node.port);
    // The node's own configuration (deploy/local/setup.sh: bk_start_redis_cluster).
    const std::string restart = "redis-server " + d + "/redis.conf --daemonize yes";
    EXPECT_EQ(std::system(restart.c_str()), 0);
    bool rejoined = false;
    for (int i = 0; i < 300 && !rejoined; ++i) {
      std::this_thread::sleep_for(100ms);
      try {
        const redis::Reply r = plain(node.host, node.port).command({"INFO", "replication"});
        rejoined = r.str.find("role:slave") != std::string::npos &&
                   r.str.find("master_link_status:up") != std::string::npos;
      } catch (const redis::RedisError&) {
      }
    }
    EXPECT_TRUE(rejoined) << "the killed node did not rejoin as a replica";
  }
};

// The process id of a node (to kill it).
int pid_of(const Node& n) {
  const std::string info = plain(n.host, n.port).command({"INFO", "server"}).as_string();
  const auto at = info.find("process_id:");
  return at == std::string::npos ? -1 : std::atoi(info.c_str() + at + 11);
}

// A number field of INFO replication ("master_repl_offset", "slave_repl_offset"); -1 when
// the node does not report it.
std::int64_t replication_field(const Node& n, const std::string& field) {
  const std::string info = plain(n.host, n.port).command({"INFO", "replication"}).as_string();
  const auto at = info.find(field + ":");
  return at == std::string::npos ? -1 : std::atoll(info.c_str() + at + field.size() + 1);
}

// XINFO GROUPS' entries-read of the stream's first group (0 before it exists).
std::int64_t entries_read(redis::Connection& c, const std::string& stream) {
  const redis::Reply groups = c.command({"XINFO", "GROUPS", stream});
  if (groups.is_error() || groups.elements.empty()) return 0;
  const redis::Reply& g = groups.at(0);
  for (std::size_t i = 0; i + 1 < g.elements.size(); i += 2) {
    if (g.at(i).as_string() == "entries-read" && !g.at(i + 1).is_nil()) return g.at(i + 1).as_int();
  }
  return 0;
}

class ClusterFaults : public ::testing::Test {
 protected:
  const std::string prefix = test::unique_prefix();
  const std::string stream = test::events_stream(prefix);
  std::string path = test::write_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  std::map<std::string, std::int64_t> want;
  std::atomic<int> produced{0};

  std::thread producer;  // joined however the test ends
  int ingest_pid = -1;   // killed however the test ends
  std::string board;
  int slot = 0;  // the board's
  ~ClusterFaults() override {
    if (producer.joinable()) producer.join();
    if (ingest_pid > 0) {
      kill(ingest_pid, SIGKILL);
      test::wait_cli(ingest_pid);
    }
  }

  // Migrates the schema, picks a board whose master does not hold the stream, starts
  // `ingest` and a producer of `events` events for the board, and returns once 8,000 are
  // in the stream: the board is busy.
  void start_busy_board(int events) {
    ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
    board = board_apart_from(conn, stream);
    slot = redis::key_slot("{" + board + "}");
    ingest_pid = test::spawn_cli(
        {"--config", path, "--now=2027-01-04T12:00:00Z", "ingest", "--reclaim-idle-ms", "500"},
        "/tmp/bk-cluster-faults-" + prefix + ".log");
    produce(events);
    while (produced.load() < 8000) std::this_thread::sleep_for(10ms);
  }

  // Produces `n` events (ids, 200 a pipeline, paced) for the board on `producer`.
  void produce(int n) {
    producer = std::thread([this, n] {
      redis::Connection own = test::connect_redis();
      std::mt19937 rng(11);
      std::vector<redis::Args> batch;
      const std::int64_t base = to_epoch_ms(*parse_rfc3339("2027-01-04T10:00:00Z"));
      for (int i = 0; i < n; ++i) {
        const std::string member = "m" + std::to_string(rng() % 300);
        const std::int64_t value = 1 + static_cast<std::int64_t>(rng() % 9);
        batch.push_back({"XADD", stream, "*", "board", board, "member", member, "value",
                         std::to_string(value), "at", std::to_string(base + i), "id",
                         "e" + std::to_string(i)});
        want[member] += value;
        if (batch.size() == 200 || i + 1 == n) {
          retrying(own, [&] {
            for (const auto& r : own.pipeline(batch)) r.checked();
            return 0;
          });
          produced += static_cast<int>(batch.size());
          batch.clear();
          std::this_thread::sleep_for(10ms);
        }
      }
    });
  }

  // Once the producer is done: waits until the group has every entry acknowledged, then
  // stops ingest (a clean exit).
  void finish() {
    if (producer.joinable()) producer.join();
    bool done = false;
    for (int i = 0; i < 600 && !done; ++i) {
      done = retrying(conn, [&] { return caught_up(conn, stream); });
      if (!done) std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(done) << test::read_file("/tmp/bk-cluster-faults-" + prefix + ".log");
    kill(ingest_pid, SIGTERM);
    EXPECT_EQ(test::wait_cli(ingest_pid), 0)
        << test::read_file("/tmp/bk-cluster-faults-" + prefix + ".log");
    ingest_pid = -1;
  }

  std::map<std::string, std::int64_t> board_points() {
    const Config config = test::make_config(prefix, kBoards);
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339("2027-01-04T12:00:00Z")));
    std::map<std::string, std::int64_t> got;
    for (const auto& r : lb.reads().top_at({lb.resolve(board, "daily", std::nullopt)}, 0, 1000)) {
      got[r.member] = r.points;
    }
    return got;
  }

  std::int64_t dead_letters() { return conn.command({"XLEN", stream + ":dead"}).as_int(); }
};

TEST_F(ClusterFaults, ALiveMigrationOfABusyBoardsSlotLosesNothingAndCountsNothingTwice) {
  ASSERT_NO_FATAL_FAILURE(start_busy_board(30000));

  const Node from = owner_of(conn, slot);
  Node to;
  for (const Node& n : nodes(conn)) {
    if (n.master && n.id != from.id) to = n;
  }
  redis::Connection source = plain(from.host, from.port);
  redis::Connection target = plain(to.host, to.port);
  const std::string s = std::to_string(slot);
  const std::string to_port = std::to_string(test::migrate_port(target, to.port));
  ASSERT_EQ(target.command({"CLUSTER", "SETSLOT", s, "IMPORTING", from.id}).as_string(), "OK");
  ASSERT_EQ(source.command({"CLUSTER", "SETSLOT", s, "MIGRATING", to.id}).as_string(), "OK");
  // A key at a time, slowly: ingest keeps writing to the board all along.
  for (;;) {
    const redis::Reply keys = source.command({"CLUSTER", "GETKEYSINSLOT", s, "1"}).checked();
    if (keys.elements.empty()) break;
    const redis::Reply r =
        source.command({"MIGRATE", to.host, to_port, keys.at(0).as_string(), "0", "5000"});
    ASSERT_FALSE(r.is_error()) << r.str;
    std::this_thread::sleep_for(50ms);
  }
  for (const Node& n : nodes(conn)) {
    if (!n.master) continue;
    ASSERT_EQ(plain(n.host, n.port).command({"CLUSTER", "SETSLOT", s, "NODE", to.id}).as_string(),
              "OK");
  }
  finish();
  EXPECT_EQ(board_points(), want);
  EXPECT_EQ(dead_letters(), 0);
  EXPECT_EQ(owner_of(conn, slot).id, to.id);
}

TEST_F(ClusterFaults, AManualFailoverLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(start_busy_board(20000));
  const Node master = owner_of(conn, slot);
  Node replica;
  for (const Node& n : nodes(conn)) {
    if (!n.master && n.master_id == master.id) replica = n;
  }
  ASSERT_FALSE(replica.id.empty());
  ASSERT_EQ(plain(replica.host, replica.port).command({"CLUSTER", "FAILOVER"}).as_string(), "OK");
  for (int i = 0; i < 100 && owner_of(conn, slot).id != replica.id; ++i) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(owner_of(conn, slot).id, replica.id);
  finish();
  EXPECT_EQ(board_points(), want);
  EXPECT_EQ(dead_letters(), 0);
}

TEST_F(ClusterFaults, AKilledMasterIsRiddenOutByIngestItself) {
  const char* dir = std::getenv("BK_CLUSTER_DIR");
  ASSERT_NE(dir, nullptr) << "BK_CLUSTER_DIR is not set: run the tests through tests/run.sh";
  ASSERT_NO_FATAL_FAILURE(start_busy_board(20000));
  const Node master = owner_of(conn, slot);
  bool has_replica = false;
  for (const Node& n : nodes(conn)) has_replica = has_replica || n.master_id == master.id;
  ASSERT_TRUE(has_replica) << "the cluster lost a replica earlier: " << master.port;
  const std::string info = plain(master.host, master.port).command({"INFO", "server"}).as_string();
  const auto at = info.find("process_id:");
  ASSERT_NE(at, std::string::npos);
  const int redis_pid = std::atoi(info.c_str() + at + 11);
  // However the test ends, the killed node comes back (see Restarted).
  const Restarted restart{dir, master};
  ASSERT_EQ(kill(redis_pid, SIGKILL), 0);
  // Its replica takes over (cluster-node-timeout 2 s); ingest finds the new master itself.
  bool promoted = false;
  for (int i = 0; i < 200 && !promoted; ++i) {
    std::this_thread::sleep_for(100ms);
    try {  // mid-failover the slot may have no live master for a moment
      promoted = retrying(conn, [&] { return owner_of(conn, slot).id != master.id; });
    } catch (const std::runtime_error&) {
    }
  }
  EXPECT_TRUE(promoted);
  finish();
  // What asynchronous replication lost is missing; nothing is counted twice.
  const auto got = retrying(conn, [&] { return board_points(); });
  std::int64_t total = 0, wanted = 0;
  for (const auto& [member, points] : want) {
    wanted += points;
    const auto g = got.find(member);
    if (g == got.end()) continue;
    EXPECT_LE(g->second, points) << member;
    total += g->second;
  }
  EXPECT_GT(total, wanted / 2);
  EXPECT_EQ(retrying(conn, [&] { return dead_letters(); }), 0);
}

// (board, member) -> points.
using BoardPoints = std::map<std::pair<std::string, std::string>, std::int64_t>;
constexpr int kBoardCount = 12, kEntries = 15000;

// A backlog without event ids (ids would dedupe by themselves): 12 boards, on every master;
// what each (board, member) should get.
BoardPoints add_backlog(redis::Connection& conn, const std::string& stream) {
  BoardPoints wanted;
  std::mt19937 rng(31);
  std::vector<redis::Args> batch;
  const std::int64_t base = to_epoch_ms(*parse_rfc3339("2027-01-04T10:00:00Z"));
  for (int i = 0; i < kEntries; ++i) {
    const std::string b = "migs" + std::to_string(rng() % kBoardCount);
    const std::string member = "p" + std::to_string(rng() % 400);
    const std::int64_t value = 1 + static_cast<std::int64_t>(rng() % 9);
    batch.push_back({"XADD", stream, "*", "board", b, "member", member, "value",
                     std::to_string(value), "at", std::to_string(base + i)});
    wanted[{b, member}] += value;
    if (batch.size() == 500 || i + 1 == kEntries) {
      for (const auto& r : conn.pipeline(batch)) r.checked();
      batch.clear();
    }
  }
  return wanted;
}

// What the 12 boards hold.
BoardPoints points_of_migs(redis::Connection& conn, const std::string& prefix) {
  const Config config = test::make_config(prefix, kBoards);
  const Instant now = *parse_rfc3339("2027-01-04T12:00:00Z");
  BoardPoints got;
  for (int b = 0; b < kBoardCount; ++b) {
    const std::string name = "migs" + std::to_string(b);
    for (const auto& [member, points] :
         retrying(conn, [&] { return test::points_of(conn, config, name, "daily", now); })) {
      got[{name, member}] = points;
    }
  }
  return got;
}

// Every (board, member) got what it should, none more.
void expect_counted_once(const BoardPoints& wanted, const BoardPoints& got) {
  int above = 0;
  std::int64_t sum_got = 0, sum_wanted = 0;
  std::string examples;
  for (const auto& [key, points] : wanted) {
    sum_wanted += points;
    const auto g = got.find(key);
    const std::int64_t have = g == got.end() ? 0 : g->second;
    sum_got += have;
    if (have > points && ++above <= 3) {
      examples += " " + key.first + "/" + key.second + ": " + std::to_string(have) + " for " +
                  std::to_string(points);
    }
  }
  EXPECT_EQ(above, 0) << "of " << wanted.size() << " (board, member) pairs, e.g." << examples;
  EXPECT_EQ(sum_got, sum_wanted);
  EXPECT_EQ(got.size(), wanted.size());
}

// The stream's master dies after its replica was cut off (it missed the deliveries and the
// acknowledgements of its last moments, not the entries): the promoted replica delivers
// entries again that were applied, some as pending (their acknowledgement was lost), some
// as new (their delivery was lost). Each is applied once all the same: markers go only
// once the stream's replicas hold the acknowledgements that make them unneeded, and a call
// of new entries looks for markers that reach them.
TEST_F(ClusterFaults, AFailoverOfTheStreamsMasterToAReplicaCutOffCountsNothingTwice) {
  const char* dir = std::getenv("BK_CLUSTER_DIR");
  ASSERT_NE(dir, nullptr) << "BK_CLUSTER_DIR is not set: run the tests through tests/run.sh";
  ASSERT_EQ(test::run_cli({"--config", path, "migrate"}).exit_code, 0);
  const BoardPoints wanted = add_backlog(conn, stream);
  const Node master = owner_of(conn, redis::key_slot(stream));
  Node replica;
  for (const Node& n : nodes(conn)) {
    if (!n.master && n.master_id == master.id) replica = n;
  }
  ASSERT_FALSE(replica.id.empty()) << "the cluster lost a replica earlier: " << master.port;
  // Every entry has reached the replica.
  const std::int64_t written = replication_field(master, "master_repl_offset");
  for (int i = 0; i < 300 && replication_field(replica, "slave_repl_offset") < written; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_GE(replication_field(replica, "slave_repl_offset"), written);
  const int redis_pid = pid_of(master);
  ASSERT_GT(redis_pid, 0);
  const Restarted restart{dir, master};

  const std::string log = "/tmp/bk-cluster-faults-" + prefix + ".log";
  ingest_pid = test::spawn_cli(
      {"--config", path, "--now=2027-01-04T12:00:00Z", "ingest", "--reclaim-idle-ms", "500"}, log);
  for (int i = 0; i < 3000 && entries_read(conn, stream) < 2000; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_GE(entries_read(conn, stream), 2000) << test::read_file(log);
  // The replica cut off: its link to the master killed, and a resync refused (it now
  // authenticates with a password the master does not have, so its handshake fails).
  redis::Connection cut = plain(replica.host, replica.port);
  ASSERT_EQ(cut.command({"CONFIG", "SET", "masterauth", "bk-cut-off"}).as_string(), "OK");
  ASSERT_FALSE(cut.command({"CLIENT", "KILL", "TYPE", "master"}).is_error());
  // Ingest goes on with the master alone for a while: deliveries, acknowledgements,
  // markers pruned (bounds are looked at every second).
  std::this_thread::sleep_for(2500ms);
  ASSERT_EQ(kill(redis_pid, SIGKILL), 0);
  ASSERT_EQ(cut.command({"CLUSTER", "FAILOVER", "TAKEOVER"}).as_string(), "OK");
  ASSERT_EQ(cut.command({"CONFIG", "SET", "masterauth", ""}).as_string(), "OK");
  bool promoted = false;
  for (int i = 0; i < 200 && !promoted; ++i) {
    try {  // mid-failover the slot may have no live master for a moment
      promoted =
          retrying(conn, [&] { return owner_of(conn, redis::key_slot(stream)).id == replica.id; });
    } catch (const std::runtime_error&) {
    }
    if (!promoted) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(promoted);
  finish();  // every entry acknowledged, ingest alive and exiting 0 on SIGTERM

  expect_counted_once(wanted, points_of_migs(conn, prefix));
  EXPECT_EQ(retrying(conn, [&] { return dead_letters(); }), 0);
}

}  // namespace
}  // namespace bk
