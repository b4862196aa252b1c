// One Connection to a real Redis Cluster (the 3 masters + 3 replicas tests/run.sh starts):
// slots as the cluster computes them, pipelines spread over the masters with replies in
// command order, send/receive, scripts on every master, and a live slot migration during
// which commands follow ASK and, after it, MOVED.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "harness.h"
#include "redis/connection.h"
#include "redis/script.h"
#include "redis/slots.h"

namespace bk::redis {
namespace {

Options seed() {
  const char* url = std::getenv("BK_TEST_REDIS_CLUSTER_URL");
  if (url == nullptr || *url == '\0') {
    ADD_FAILURE() << "BK_TEST_REDIS_CLUSTER_URL is not set: run the tests through tests/run.sh";
    throw std::runtime_error("no test cluster");
  }
  Options o = parse_url(url);
  o.cluster = true;
  return o;
}

// A plain connection to one node (host:port), for the CLUSTER commands of the test.
Connection node(const std::string& host, int port) {
  Options o = seed();
  o.cluster = false;
  o.host = host;
  o.port = port;
  return Connection(o);
}

struct Master {
  std::string id, host;
  int port = 0;
};

// The masters and which of them serves `slot`.
std::vector<Master> masters_of(Connection& c, int slot, std::size_t& owner) {
  std::vector<Master> out;
  const Reply slots = c.master_command(0, {"CLUSTER", "SLOTS"}).checked();
  for (const Reply& range : slots.elements) {
    const Reply& m = range.at(2);
    Master master{m.at(2).as_string(), m.at(0).as_string(), static_cast<int>(m.at(1).as_int())};
    std::size_t i = 0;
    while (i < out.size() && out[i].id != master.id) ++i;
    if (i == out.size()) out.push_back(master);
    if (range.at(0).as_int() <= slot && slot <= range.at(1).as_int()) owner = i;
  }
  return out;
}

TEST(Cluster, KeySlotsAreTheClustersOwn) {
  Connection c(seed());
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string key = "k" + std::to_string(rng());
    if (i % 3 == 0) key = "lb:{board" + std::to_string(i) + "}:daily:2026-11-26";
    if (i % 7 == 0) key = "{}" + key;
    EXPECT_EQ(key_slot(key), c.command({"CLUSTER", "KEYSLOT", key}).as_int()) << key;
  }
}

TEST(Cluster, PipelinesSpanEveryMasterAndKeepCommandOrder) {
  Connection c(seed());
  ASSERT_EQ(c.masters(), 3U);
  const std::string p = test::unique_prefix();
  std::vector<Args> sets, gets;
  for (int i = 0; i < 300; ++i) {
    const std::string key = p + ":" + std::to_string(i);
    sets.push_back({"SET", key, "v" + std::to_string(i), "PX", "60000"});
    gets.push_back({"GET", key});
  }
  for (const Reply& r : c.pipeline(sets)) EXPECT_EQ(r.as_string(), "OK");
  const auto got = c.pipeline(gets);
  for (int i = 0; i < 300; ++i)
    EXPECT_EQ(got[static_cast<std::size_t>(i)].as_string(), "v" + std::to_string(i));
  // The keys really are spread: each master holds some.
  for (std::size_t m = 0; m < c.masters(); ++m) {
    const Reply keys = c.master_command(m, {"KEYS", p + ":*"});
    EXPECT_GT(keys.elements.size(), 50U) << "master " << m;
  }
  // send/receive: replies in the order sent, whichever node answers.
  c.send(gets);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(c.receive().as_string(), "v" + std::to_string(i));
  // A script runs wherever its key lives (loaded on every master).
  Script echo("return redis.call('GET', KEYS[1])");
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(echo.eval(c, {p + ":" + std::to_string(i)}, {}).as_string(), "v" + std::to_string(i));
  }
}

// A slot moves from its master to another while the connection keeps working: during the
// move a key not yet at the target is written there (ASK), keys still at the source are
// read there; after it, the stale slot map is corrected by MOVED.
TEST(Cluster, ALiveSlotMigrationIsFollowedThroughAskAndMoved) {
  Connection c(seed());
  const std::string tag = "{" + test::unique_prefix() + "}";
  const int slot = key_slot(tag);
  std::size_t from = 0;
  const std::vector<Master> m = masters_of(c, slot, from);
  ASSERT_EQ(m.size(), 3U);
  const std::size_t to = (from + 1) % m.size();
  const std::string old_key = tag + ":old", new_key = tag + ":new";
  ASSERT_EQ(c.command({"SET", old_key, "1"}).as_string(), "OK");
  Connection source = node(m[from].host, m[from].port);
  Connection target = node(m[to].host, m[to].port);
  const std::string s = std::to_string(slot);
  ASSERT_EQ(target.command({"CLUSTER", "SETSLOT", s, "IMPORTING", m[from].id}).as_string(), "OK");
  ASSERT_EQ(source.command({"CLUSTER", "SETSLOT", s, "MIGRATING", m[to].id}).as_string(), "OK");

  // Mid-move: the new key goes to the target (ASK), the old one is still read at the source.
  EXPECT_EQ(c.command({"SET", new_key, "2"}).as_string(), "OK");
  EXPECT_EQ(target.command({"ASKING"}).as_string(), "OK");
  EXPECT_EQ(target.command({"GET", new_key}).as_string(), "2");
  EXPECT_EQ(c.command({"GET", old_key}).as_string(), "1");
  EXPECT_EQ(c.command({"GET", new_key}).as_string(), "2");

  // Every key of the slot moves (other tests' keys may share it), then the slot.
  for (;;) {
    const Reply keys = source.command({"CLUSTER", "GETKEYSINSLOT", s, "100"}).checked();
    if (keys.elements.empty()) break;
    Args migrate{"MIGRATE", m[to].host, std::to_string(test::migrate_port(target, m[to].port)),
                 "",        "0",        "5000",
                 "KEYS"};
    for (const Reply& k : keys.elements) migrate.push_back(k.as_string());
    ASSERT_EQ(source.command(migrate).as_string(), "OK");
  }
  for (const Master& each : m) {
    Connection n = node(each.host, each.port);
    ASSERT_EQ(n.command({"CLUSTER", "SETSLOT", s, "NODE", m[to].id}).as_string(), "OK");
  }
  // The connection still believes the source has the slot: MOVED corrects it.
  EXPECT_EQ(c.command({"GET", old_key}).as_string(), "1");
  EXPECT_EQ(c.command({"INCR", new_key}).as_int(), 3);
  const auto both = c.pipeline({{"GET", old_key}, {"GET", new_key}});
  EXPECT_EQ(both[0].as_string(), "1");
  EXPECT_EQ(both[1].as_string(), "3");
  EXPECT_EQ(target.command({"GET", old_key}).as_string(), "1");  // really moved
  c.command({"DEL", old_key});
  c.command({"DEL", new_key});
}

}  // namespace
}  // namespace bk::redis
