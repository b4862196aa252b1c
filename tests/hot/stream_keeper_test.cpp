// The stream scripts against a real Redis: each group's bound from its pending entries and
// its last-delivered id, trimming to the lowest bound of all groups and never without the
// caller's group, ids at the edge of the 64-bit range, and leaving a group only with
// nothing pending.
#include <gtest/gtest.h>

#include "harness.h"
#include "hot/stream.h"

namespace bk::hot {
namespace {

struct StreamKeeperTest : ::testing::Test {
  redis::Connection conn = test::connect_redis();
  std::string stream = test::unique_prefix() + ":events";
  StreamKeeper keeper;

  void add(const std::string& id) { conn.command({"XADD", stream, id, "f", "v"}).checked(); }
  void group(const std::string& name, const std::string& at) {
    conn.command({"XGROUP", "CREATE", stream, name, at}).checked();
  }
  // Delivers up to `count` new entries of `name` to consumer `c`.
  void deliver(const std::string& name, const std::string& c, int count) {
    conn.command({"XREADGROUP", "GROUP", name, c, "COUNT", std::to_string(count), "STREAMS", stream,
                  ">"})
        .checked();
  }
  void ack(const std::string& name, const std::string& id) {
    conn.command({"XACK", stream, name, id}).checked();
  }
  std::vector<std::string> ids() {
    std::vector<std::string> out;
    const redis::Reply r = conn.command({"XRANGE", stream, "-", "+"}).checked();
    for (const auto& e : r.elements) out.push_back(e.at(0).as_string());
    return out;
  }
  StreamBounds bounds(const std::string& own, Trim trim = Trim::acknowledged) {
    return keeper.bounds(conn, {stream, own}, trim);
  }
  using Ids = std::vector<std::string>;
};

TEST_F(StreamKeeperTest, AMissingStreamHasNoBounds) {
  const StreamBounds b = bounds("g");
  EXPECT_EQ(b.acknowledged_below, std::nullopt);
  EXPECT_EQ(b.lag, std::nullopt);
  EXPECT_EQ(b.length, 0);
  EXPECT_EQ(b.trimmed, 0);
  EXPECT_EQ(conn.command({"EXISTS", stream}).as_int(), 0);
}

TEST_F(StreamKeeperTest, EverythingDeliveredAndAcknowledgedIsTrimmed) {
  for (const char* id : {"1-1", "1-2", "2-0"}) add(id);
  group("g", "0");
  deliver("g", "c", 10);
  for (const char* id : {"1-1", "1-2", "2-0"}) ack("g", id);
  const StreamBounds b = bounds("g");
  EXPECT_EQ(b.acknowledged_below, (StreamId{2, 1}));  // the id right after the last delivered
  EXPECT_EQ(b.lag, 0);
  EXPECT_EQ(b.pending, 0);
  EXPECT_EQ(b.trimmed, 3);
  EXPECT_EQ(b.length, 0);
  add("3-0");  // the stream still takes new entries above its last id
  EXPECT_EQ(ids(), Ids{"3-0"});
}

TEST_F(StreamKeeperTest, TheOldestPendingEntryAndWhatWasNotDeliveredStay) {
  for (const char* id : {"1-0", "2-0", "3-0", "4-0", "5-0"}) add(id);
  group("g", "0");
  deliver("g", "c", 3);
  ack("g", "1-0");
  ack("g", "3-0");  // 2-0 pending; 4-0 and 5-0 not delivered
  const StreamBounds b = bounds("g");
  EXPECT_EQ(b.acknowledged_below, (StreamId{2, 0}));
  EXPECT_EQ(b.lag, 2);
  EXPECT_EQ(b.pending, 1);
  EXPECT_EQ(b.trimmed, 1);
  EXPECT_EQ(ids(), (Ids{"2-0", "3-0", "4-0", "5-0"}));
}

TEST_F(StreamKeeperTest, TheLowestBoundOfAllGroupsIsKept) {
  for (const char* id : {"1-0", "2-0", "3-0", "4-0"}) add(id);
  group("g", "0");
  group("slow", "0");  // reads two, acknowledges none
  group("late", "$");  // joined after 4-0: never needs the earlier entries
  deliver("g", "c", 10);
  for (const char* id : {"1-0", "2-0", "3-0", "4-0"}) ack("g", id);
  deliver("slow", "s", 2);
  StreamBounds b = bounds("g");
  EXPECT_EQ(b.acknowledged_below, (StreamId{4, 1}));
  EXPECT_EQ(b.trimmed, 0);
  EXPECT_EQ(ids(), (Ids{"1-0", "2-0", "3-0", "4-0"}));
  ack("slow", "1-0");
  b = bounds("g");
  EXPECT_EQ(b.trimmed, 1);
  EXPECT_EQ(ids(), (Ids{"2-0", "3-0", "4-0"}));
  // The slow group's bound is its own: pending 2-0.
  EXPECT_EQ(bounds("slow", Trim::keep).acknowledged_below, (StreamId{2, 0}));
  ack("slow", "2-0");
  EXPECT_EQ(bounds("slow", Trim::keep).acknowledged_below, (StreamId{2, 1}));
  EXPECT_EQ(ids(), (Ids{"2-0", "3-0", "4-0"}));  // Trim::keep only looks
  bounds("g");
  EXPECT_EQ(ids(), (Ids{"3-0", "4-0"}));  // slow has not been given 3-0 yet
}

TEST_F(StreamKeeperTest, NothingIsTrimmedWithoutTheCallersGroup) {
  for (const char* id : {"1-0", "2-0"}) add(id);
  group("other", "$");  // needs nothing that is there
  const StreamBounds b = bounds("g");
  EXPECT_EQ(b.acknowledged_below, std::nullopt);
  EXPECT_EQ(b.trimmed, 0);
  EXPECT_EQ(b.length, 2);
  conn.command({"XGROUP", "DESTROY", stream, "other"}).checked();
  EXPECT_EQ(bounds("g").trimmed, 0);  // and none at all
}

TEST_F(StreamKeeperTest, AGroupMovedBackBelowItsPendingEntriesKeepsThem) {
  for (const char* id : {"1-0", "2-0", "3-0", "4-0"}) add(id);
  group("g", "0");
  deliver("g", "c", 10);
  ack("g", "1-0");
  ack("g", "2-0");
  ack("g", "4-0");                                                  // 3-0 pending
  conn.command({"XGROUP", "SETID", stream, "g", "1-0"}).checked();  // re-deliver from 2-0
  const StreamBounds b = bounds("g");
  EXPECT_EQ(b.acknowledged_below, (StreamId{1, 1}));
  EXPECT_EQ(b.trimmed, 1);
  EXPECT_EQ(ids(), (Ids{"2-0", "3-0", "4-0"}));
}

TEST_F(StreamKeeperTest, IdsAtTheEdgeOfTheRange) {
  add("5-18446744073709551615");
  add("6-0");
  add("18446744073709551615-18446744073709551615");
  group("g", "0");
  deliver("g", "c", 1);
  ack("g", "5-18446744073709551615");
  StreamBounds b = bounds("g");
  EXPECT_EQ(b.acknowledged_below, (StreamId{6, 0}));  // the sequence overflows into ms
  EXPECT_EQ(ids(), (Ids{"6-0", "18446744073709551615-18446744073709551615"}));
  deliver("g", "c", 10);
  ack("g", "6-0");
  ack("g", "18446744073709551615-18446744073709551615");
  b = bounds("g");
  // Nothing can follow the last id: it is its own bound (and stays, harmlessly).
  EXPECT_EQ(b.acknowledged_below, (StreamId{UINT64_MAX, UINT64_MAX}));
  EXPECT_EQ(ids(), (Ids{"18446744073709551615-18446744073709551615"}));
  // A sequence of nines carries over in decimal text.
  const std::string other = stream + "x";
  conn.command({"XADD", other, "99-999", "f", "v"}).checked();
  conn.command({"XGROUP", "CREATE", other, "g", "0"}).checked();
  conn.command({"XREADGROUP", "GROUP", "g", "c", "STREAMS", other, ">"}).checked();
  conn.command({"XACK", other, "g", "99-999"}).checked();
  EXPECT_EQ(keeper.bounds(conn, {other, "g"}, Trim::acknowledged).acknowledged_below,
            (StreamId{99, 1000}));
}

TEST_F(StreamKeeperTest, AConsumerLeavesOnlyWithNothingPending) {
  EXPECT_EQ(keeper.leave(conn, {stream, "g"}, "c"), Departure::no_group);
  for (const char* id : {"1-0", "2-0"}) add(id);
  EXPECT_EQ(keeper.leave(conn, {stream, "g"}, "c"), Departure::no_group);
  group("g", "0");
  deliver("g", "c", 2);
  deliver("g", "idle", 1);  // nothing left for it: a consumer with nothing pending
  ack("g", "1-0");
  EXPECT_EQ(keeper.leave(conn, {stream, "g"}, "c"), Departure::pending);
  EXPECT_EQ(keeper.leave(conn, {stream, "g"}, "idle"), Departure::left);
  EXPECT_EQ(keeper.leave(conn, {stream, "g"}, "never-there"), Departure::left);
  redis::Reply consumers = conn.command({"XINFO", "CONSUMERS", stream, "g"}).checked();
  ASSERT_EQ(consumers.elements.size(), 1U);
  EXPECT_EQ(consumers.at(0).at(1).as_string(), "c");
  ack("g", "2-0");
  EXPECT_EQ(keeper.leave(conn, {stream, "g"}, "c"), Departure::left);
  consumers = conn.command({"XINFO", "CONSUMERS", stream, "g"}).checked();
  EXPECT_TRUE(consumers.elements.empty());
}

}  // namespace
}  // namespace bk::hot
