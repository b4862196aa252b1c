// hot/consumer_group: the consumer-group commands as sent and their replies as typed, without
// a server. The ingest suites run the same calls against Redis.
#include "hot/consumer_group.h"

#include <gtest/gtest.h>

#include "replies.h"

#include "redis/error.h"

namespace bk::hot {
namespace {

using redis::Reply;
using namespace bk::hot::test;

Reply entry(const std::string& id, std::vector<std::string> fields) {
  std::vector<Reply> f;
  for (const std::string& x : fields) f.push_back(str(x));
  return array({str(id), array(std::move(f))});
}

const GroupRef kRef{"scores", "boardkeeper"};

TEST(ConsumerGroupTest, ANewEntriesReadNamesEachStreamAndWaitsWhenAsked) {
  GroupRead read{"g", "c1", 500, Millis{1000}, {{"a", ">"}, {"b", ">"}}};
  EXPECT_EQ(read_group(read), (redis::Args{"XREADGROUP", "GROUP", "g", "c1", "COUNT", "500",
                                           "BLOCK", "1000", "STREAMS", "a", "b", ">", ">"}));
  read.block.reset();
  EXPECT_EQ(read_group(read), (redis::Args{"XREADGROUP", "GROUP", "g", "c1", "COUNT", "500",
                                           "STREAMS", "a", "b", ">", ">"}));
}

TEST(ConsumerGroupTest, AReadOfOwnPendingEntriesGoesOnAfterEachStreamsCursor) {
  const GroupRead read{"g", "c1", 10, std::nullopt, {{"a", "0"}, {"b", "5-1"}}};
  EXPECT_EQ(read_group(read), (redis::Args{"XREADGROUP", "GROUP", "g", "c1", "COUNT", "10",
                                           "STREAMS", "a", "b", "0", "5-1"}));
}

TEST(ConsumerGroupTest, AGroupReadIsTypedPerStreamWithDeletedEntriesMarked) {
  Reply r = array({array({str("a"), array({entry("1-0", {"board", "x", "value", "3"}),
                                           array({str("2-0"), nil()})})}),
                   array({str("b"), array({})})});
  const auto read = parse_group_read(std::move(r));
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].stream, "a");
  ASSERT_EQ(read[0].entries.size(), 2u);
  EXPECT_EQ(read[0].entries[0].id, "1-0");
  EXPECT_FALSE(read[0].entries[0].deleted);
  ASSERT_EQ(read[0].entries[0].fields.size(), 2u);
  EXPECT_EQ(read[0].entries[0].fields[0], (std::pair<std::string, std::string>{"board", "x"}));
  EXPECT_EQ(read[0].entries[0].fields[1], (std::pair<std::string, std::string>{"value", "3"}));
  EXPECT_EQ(read[0].entries[1].id, "2-0");
  EXPECT_TRUE(read[0].entries[1].deleted);
  EXPECT_TRUE(read[0].entries[1].fields.empty());
  EXPECT_EQ(read[1].stream, "b");
  EXPECT_TRUE(read[1].entries.empty());
}

TEST(ConsumerGroupTest, NothingToReadIsANilReplyAndNoStreams) {
  EXPECT_TRUE(parse_group_read(nil()).empty());
}

TEST(ConsumerGroupTest, AnOddFieldIsDroppedAndAMalformedItemSkipped) {
  Reply r =
      array({array({str("a"), array({entry("1-0", {"board", "x", "member"}), str("junk")})})});
  const auto read = parse_group_read(std::move(r));
  ASSERT_EQ(read.at(0).entries.size(), 1u);
  EXPECT_EQ(read[0].entries[0].fields.size(), 1u);
}

TEST(ConsumerGroupTest, AReadReplyOfTheWrongShapeThrows) {
  EXPECT_THROW(parse_group_read(array({array({str("a")})})), redis::ReplyError);
  EXPECT_THROW(parse_group_read(array({array({integer(1), array({})})})), redis::ReplyError);
  EXPECT_THROW(parse_group_read(error("ERR boom")), redis::ReplyError);
}

TEST(ConsumerGroupTest, ATakeOverScansFromItsCursor) {
  EXPECT_EQ(
      take_over(kRef, {"c1", Millis{30000}, "0-0", 100}),
      (redis::Args{"XAUTOCLAIM", "scores", "boardkeeper", "c1", "30000", "0-0", "COUNT", "100"}));
}

TEST(ConsumerGroupTest, ATakeOverReplyGivesTheNextCursorAndTheEntries) {
  // Redis 7: [cursor, entries, deleted ids].
  Reply r = array({str("7-0"), array({entry("3-0", {"board", "x"})}), array({})});
  const TakenOver t = parse_take_over(std::move(r));
  EXPECT_EQ(t.cursor, "7-0");
  ASSERT_EQ(t.entries.size(), 1u);
  EXPECT_EQ(t.entries[0].id, "3-0");
  EXPECT_THROW(parse_take_over(array({str("0-0")})), redis::ReplyError);
}

TEST(ConsumerGroupTest, AClaimAsksForIdsOnly) {
  EXPECT_EQ(claim_ids(kRef, "c1", Millis{15}, {"1-0", "2-0"}),
            (redis::Args{"XCLAIM", "scores", "boardkeeper", "c1", "15", "1-0", "2-0", "JUSTID"}));
  EXPECT_EQ(parse_claimed_ids(array({str("2-0")})), (std::vector<std::string>{"2-0"}));
  EXPECT_TRUE(parse_claimed_ids(array({})).empty());
}

TEST(ConsumerGroupTest, ThePendingSummaryCountIsItsFirstElement) {
  EXPECT_EQ(pending_summary(kRef), (redis::Args{"XPENDING", "scores", "boardkeeper"}));
  EXPECT_EQ(parse_pending_count(array({integer(4), str("1-0"), str("9-0"), array({})})), 4);
  EXPECT_EQ(parse_pending_count(array({integer(0), nil(), nil(), nil()})), 0);
  EXPECT_THROW(parse_pending_count(error("NOGROUP no such key")), redis::ReplyError);
}

TEST(ConsumerGroupTest, NothingToAcknowledgeIsNoCommand) {
  EXPECT_FALSE(acknowledge(kRef, {}).has_value());
  EXPECT_EQ(acknowledge(kRef, {"1-0", "2-0"}),
            std::optional<redis::Args>({"XACK", "scores", "boardkeeper", "1-0", "2-0"}));
}

TEST(ConsumerGroupTest, OnlyANoGroupErrorSaysTheGroupIsGone) {
  EXPECT_TRUE(is_no_group(error("NOGROUP No such key 'scores' or consumer group 'g'")));
  EXPECT_FALSE(is_no_group(error("ERR something else")));
  EXPECT_FALSE(is_no_group(str("NOGROUP")));
}

}  // namespace
}  // namespace bk::hot
