// What the replicas of a stream's node hold, read from INFO replication and CLUSTER NODES
// as Redis 7.0 writes them (the texts below are a 7.0 node's, shortened).
#include <gtest/gtest.h>

#include "hot/stream.h"

namespace bk::hot {
namespace {

const char* kMasterWithTwo =
    "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"
    "slave0:ip=127.0.0.1,port=7004,state=online,offset=1200,lag=0\r\n"
    "slave1:ip=127.0.0.1,port=7005,state=online,offset=1150,lag=1\r\n"
    "master_failover_state:no-failover\r\n"
    "master_replid:8d2f5c0b7e1a4a6c9f3e2d1b0a9c8e7f6d5c4b3a\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "master_repl_offset:1300\r\nsecond_repl_offset:-1\r\n";

TEST(Replication, EveryReplicaInStepHoldsTheLowestOfTheirOffsets) {
  const Replication r = parse_replication(kMasterWithTwo, 2);
  EXPECT_EQ(r.replid, "8d2f5c0b7e1a4a6c9f3e2d1b0a9c8e7f6d5c4b3a");
  EXPECT_EQ(r.offset, 1300);
  EXPECT_EQ(r.held_by_all, 1150);
  // The replicas INFO lists count even when fewer are expected (a single server's).
  EXPECT_EQ(parse_replication(kMasterWithTwo, 0).held_by_all, 1150);
}

TEST(Replication, WithoutReplicasTheMastersOwnOffsetIsHeld) {
  const Replication r = parse_replication(
      "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_replid:abc\r\n"
      "master_repl_offset:77\r\n",
      0);
  EXPECT_EQ(r.held_by_all, 77);
}

TEST(Replication, AReplicaMissingOrNotInStepHoldsNothing) {
  // The cluster knows three replicas; INFO lists two: one is cut off.
  EXPECT_EQ(parse_replication(kMasterWithTwo, 3).held_by_all, std::nullopt);
  // Listed but still synchronising.
  const std::string syncing =
      "role:master\r\nconnected_slaves:1\r\n"
      "slave0:ip=127.0.0.1,port=7004,state=wait_bgsave,offset=0,lag=0\r\n"
      "master_replid:abc\r\nmaster_repl_offset:10\r\n";
  EXPECT_EQ(parse_replication(syncing, 1).held_by_all, std::nullopt);
  EXPECT_EQ(parse_replication(syncing, 0).held_by_all, std::nullopt);
  // A replica is asked: it is no stream's master (a stale map).
  EXPECT_EQ(parse_replication("role:slave\r\nmaster_replid:abc\r\nmaster_repl_offset:10\r\n", 0)
                .held_by_all,
            std::nullopt);
  EXPECT_EQ(parse_replication("", 0).held_by_all, std::nullopt);
}

TEST(Replication, ClusterNodesCountsTheNodesOwnReplicasConnectedOrNotButNotFailedOnes) {
  const char* nodes =
      "aaa 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460\n"
      "bbb 127.0.0.1:7002@17002 master - 0 1700000000000 2 connected 5461-10922\n"
      "ccc 127.0.0.1:7004@17004 slave aaa 0 1700000000000 1 connected\n"
      "ddd 127.0.0.1:7005@17005 slave,fail? aaa 0 1700000000000 1 connected\n"
      "eee 127.0.0.1:7006@17006 slave,fail aaa 0 1700000000000 1 disconnected\n"
      "fff 127.0.0.1:7007@17007 slave bbb 0 1700000000000 2 connected\n";
  EXPECT_EQ(replicas_of_myself(nodes), 2u);
  EXPECT_EQ(replicas_of_myself(""), 0u);
}

}  // namespace
}  // namespace bk::hot
