// Cluster slots and routing keys: pure logic (the cluster suite checks key_slot against
// CLUSTER KEYSLOT of a real cluster).
#include <gtest/gtest.h>

#include "redis/slots.h"

namespace bk::redis {
namespace {

TEST(Slots, Crc16IsXmodem) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);  // the standard check value
  EXPECT_EQ(crc16(""), 0);
}

TEST(Slots, KeySlotHashesTheTagWhenThereIsOne) {
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
  EXPECT_EQ(key_slot("lb:{points}:daily:2026-11-22"), key_slot("lb:{points}:periods"));
  EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));   // the first tag
  EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));  // up to the first '}'
  EXPECT_EQ(key_slot("foo{}{bar}"), key_slot("foo{}{bar}"));
  EXPECT_NE(key_slot("foo{}{bar}"), key_slot("bar"));  // an empty tag: the whole key
  EXPECT_EQ(key_slot("{}"), crc16("{}") % kClusterSlots);
}

TEST(Slots, HashTagIsWhatLiesBetweenTheFirstBraceAndTheNextClosingOne) {
  EXPECT_EQ(hash_tag("lb:{events}"), "events");
  EXPECT_EQ(hash_tag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(hash_tag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(hash_tag("foo{}{bar}"), "");  // an empty tag: none
  EXPECT_EQ(hash_tag("lb:events"), "");
  EXPECT_EQ(hash_tag("lb:{events"), "");
  EXPECT_EQ(hash_tag("lb:}x{"), "");
}

TEST(Slots, RoutingKeyOfEachCommandForm) {
  using A = std::vector<std::string>;
  EXPECT_EQ(routing_key(A{"ZADD", "k", "1", "m"}), "k");
  EXPECT_EQ(routing_key(A{"EVALSHA", "abc", "2", "k1", "k2", "arg"}), "k1");
  EXPECT_EQ(routing_key(A{"evalsha", "abc", "0", "arg"}), std::nullopt);
  EXPECT_EQ(routing_key(A{"XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "BLOCK", "5", "streams",
                          "s", ">"}),
            "s");
  EXPECT_EQ(routing_key(A{"XGROUP", "CREATE", "s", "g", "$"}), "s");
  EXPECT_EQ(routing_key(A{"XINFO", "GROUPS", "s"}), "s");
  EXPECT_EQ(routing_key(A{"SCRIPT", "LOAD", "return 1"}), std::nullopt);
  EXPECT_EQ(routing_key(A{"ping"}), std::nullopt);
  EXPECT_EQ(routing_key(A{"INFO", "commandstats"}), std::nullopt);
  EXPECT_EQ(routing_key(A{}), std::nullopt);
}

}  // namespace
}  // namespace bk::redis
