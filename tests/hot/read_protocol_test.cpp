// hot/read_protocol: the read scripts' replies as Redis sends them (see each script's header)
// parsed into typed values, without a server. The integration suites run the scripts.
#include "hot/read_protocol.h"

#include <gtest/gtest.h>

#include "replies.h"

#include "redis/error.h"

namespace bk::hot::read_protocol {
namespace {

using redis::Reply;
using namespace bk::hot::test;

TEST(ReadProtocolTest, RangeRanksTiesFromTheFirstRankAndPosition) {
  // {first_rank, member, score, ...}: b and c tie (score 7), d is worse.
  const auto read = parse_range(array({integer(4), str("a"), str("5"), str("b"), str("7"), str("c"),
                                       str("7"), str("d"), str("9")}),
                                3);
  ASSERT_FALSE(read.spilled);
  ASSERT_EQ(read.value.size(), 4u);
  EXPECT_EQ(read.value[0].member, "a");
  EXPECT_EQ(read.value[0].encoded, 5);
  EXPECT_EQ(read.value[0].rank, 4);
  EXPECT_EQ(read.value[1].rank, 5);
  EXPECT_EQ(read.value[2].rank, 5);
  EXPECT_EQ(read.value[3].rank, 7);
}

TEST(ReadProtocolTest, SpilledAndEmptyRepliesOfTheShortReads) {
  EXPECT_TRUE(parse_range(array({str("spilled")}), 0).spilled);
  EXPECT_TRUE(parse_around(array({str("spilled")})).spilled);
  EXPECT_TRUE(parse_member(array({str("spilled")}), "m").spilled);
  const auto empty = parse_range(array({}), 0);
  EXPECT_FALSE(empty.spilled);
  EXPECT_TRUE(empty.value.empty());
  EXPECT_TRUE(parse_around(array({})).value.empty());
  EXPECT_FALSE(parse_member(array({}), "m").value.has_value());
}

TEST(ReadProtocolTest, AroundStartsAtTheFirstPositionItSends) {
  // {first_rank, first_position, member, score, ...}
  const auto read =
      parse_around(array({integer(2), integer(1), str("x"), str("3"), str("y"), str("3")}));
  ASSERT_EQ(read.value.size(), 2u);
  EXPECT_EQ(read.value[0].rank, 2);
  EXPECT_EQ(read.value[1].rank, 2);
  EXPECT_EQ(read.value[1].member, "y");
}

TEST(ReadProtocolTest, MemberIsRankThenScore) {
  const auto read = parse_member(array({integer(12), str("-40"), integer(99)}), "m");
  ASSERT_TRUE(read.value);
  EXPECT_EQ(read.value->member, "m");
  EXPECT_EQ(read.value->rank, 12);
  EXPECT_EQ(read.value->encoded, -40);
}

TEST(ReadProtocolTest, ReadStateWithStaleMembersAndHead) {
  // {gen, spilled, cold_bound, member_score, size, n, stale..., head pairs...}
  const ReadState st =
      parse_read_state(array({str("3:1"), str("1"), str("50"), str(""), integer(10), integer(2),
                              str("s1"), str("s2"), str("a"), str("1"), str("b"), str("2")}),
                       false);
  EXPECT_EQ(st.gen, "3:1");
  EXPECT_TRUE(st.spilled);
  EXPECT_EQ(st.cold_bound, 50);
  EXPECT_FALSE(st.member_score);
  EXPECT_EQ(st.size, 10);
  EXPECT_EQ(st.hot_and_stale, (std::vector<std::string>{"s1", "s2"}));
  ASSERT_EQ(st.head.size(), 2u);
  EXPECT_EQ(st.head[1].member, "b");
  EXPECT_EQ(st.head[1].encoded, 2);
  EXPECT_TRUE(st.head_profiles.names.empty());
}

TEST(ReadStateProtocolTest, HeadProfilesFollowTheMarkers) {
  const ReadState st =
      parse_read_state(array({str("0:0"), str("0"), str(""), str("7"), integer(2), integer(0),
                              str("a"), str("1"), str("b"), str("2"), integer(1), integer(0),
                              str("Ann"), nil(), nil(), str("{\"k\":1}")}),
                       true);
  EXPECT_FALSE(st.spilled);
  EXPECT_FALSE(st.cold_bound);
  EXPECT_EQ(st.member_score, 7);
  ASSERT_EQ(st.head.size(), 2u);
  EXPECT_TRUE(st.head_profiles.names_moved);
  EXPECT_FALSE(st.head_profiles.metadata_moved);
  EXPECT_EQ(st.head_profiles.names, (std::vector<std::optional<std::string>>{"Ann", std::nullopt}));
  EXPECT_EQ(st.head_profiles.metadata,
            (std::vector<std::optional<std::string>>{std::nullopt, "{\"k\":1}"}));
}

TEST(ReadStateProtocolTest, HeadProfilesOfAnEmptyHeadAreTheMarkersAlone) {
  const ReadState st = parse_read_state(array({str("0:0"), str("0"), str(""), str(""), integer(0),
                                               integer(0), integer(0), integer(1)}),
                                        true);
  EXPECT_TRUE(st.head.empty());
  EXPECT_TRUE(st.head_profiles.metadata_moved);
}

TEST(ReadStateProtocolTest, AStaleCountBeyondTheReplyIsAReplyError) {
  EXPECT_THROW(
      parse_read_state(
          array({str("0:0"), str("1"), str(""), str(""), integer(0), integer(5), str("s")}), false),
      redis::ReplyError);
}

TEST(ReadStateProtocolTest, AHalfHeadEntryIsAReplyError) {
  EXPECT_THROW(
      parse_read_state(
          array({str("0:0"), str("0"), str(""), str(""), integer(1), integer(0), str("a")}), false),
      redis::ReplyError);
}

TEST(ReadProtocolTest, NeighboursSplitBeforeAndAfterAtTheCountSent) {
  // {gen, count_before, nbefore, before pairs (nearest first)..., after pairs...}
  const Neighbours n = parse_neighbours(array({str("1:0"), integer(8), integer(1), str("p"),
                                               str("4"), str("q"), str("6"), str("r"), str("6")}));
  EXPECT_EQ(n.gen, "1:0");
  EXPECT_EQ(n.count_before, 8);
  ASSERT_EQ(n.before.size(), 1u);
  EXPECT_EQ(n.before[0].member, "p");
  ASSERT_EQ(n.after.size(), 2u);
  EXPECT_EQ(n.after[1].member, "r");
  EXPECT_THROW(parse_neighbours(array({str("1:0"), integer(0), integer(2), str("p"), str("4")})),
               redis::ReplyError);
}

TEST(ReadProtocolTest, AfterKeyCarriesItsPlaceAndStaleMembers) {
  // {gen, cold, through, better, size, spilled, nstale, stale..., n, member, score, ...}
  const AfterKey a = parse_after(
      array({str("2:3"), str("1"), integer(5), integer(4), integer(9), str("1"), integer(1),
             str("s"), integer(2), str("x"), str("10"), str("y"), str("11")}),
      false);
  EXPECT_EQ(a.gen, "2:3");
  EXPECT_TRUE(a.cold);
  EXPECT_EQ(a.through, 5);
  EXPECT_EQ(a.better, 4);
  EXPECT_EQ(a.size, 9);
  EXPECT_TRUE(a.spilled);
  EXPECT_EQ(a.hot_and_stale, (std::vector<std::string>{"s"}));
  ASSERT_EQ(a.after.size(), 2u);
  EXPECT_EQ(a.after[0].encoded, 10);
  const AfterKey hot = parse_after(array({str("0:0"), str("0"), integer(0), integer(0), integer(0),
                                          str("0"), integer(0), integer(0)}),
                                   false);
  EXPECT_FALSE(hot.cold);
  EXPECT_FALSE(hot.spilled);
  EXPECT_TRUE(hot.after.empty());
  // A count that does not match what follows is refused, not read past.
  EXPECT_THROW(parse_after(array({str("0:0"), str("0"), integer(0), integer(0), integer(1),
                                  str("0"), integer(0), integer(2), str("x"), str("1")}),
                           false),
               redis::ReplyError);
}

// With the board's profile hashes: the entries' names and metadata after them.
TEST(ReadProtocolTest, AfterKeyCarriesTheProfilesOfItsEntries) {
  const AfterKey a =
      parse_after(array({str("0:0"), str("0"), integer(1), integer(1), integer(3), str("0"),
                         integer(0), integer(2), str("x"), str("10"), str("y"), str("11"),
                         integer(0), integer(1), str("Ex"), nil(), nil(), str("{}")}),
                  true);
  EXPECT_EQ(a.size, 3);
  ASSERT_EQ(a.after.size(), 2u);
  EXPECT_FALSE(a.profiles.names_moved);
  EXPECT_TRUE(a.profiles.metadata_moved);
  EXPECT_EQ(a.profiles.names, (std::vector<std::optional<std::string>>{"Ex", std::nullopt}));
  EXPECT_EQ(a.profiles.metadata, (std::vector<std::optional<std::string>>{std::nullopt, "{}"}));
  EXPECT_THROW(parse_after(array({str("0:0"), str("0"), integer(1), integer(1), integer(3),
                                  str("0"), integer(0), integer(1), str("x"), str("10")}),
                           true),
               redis::ReplyError);
}

TEST(ReadProtocolTest, GenerationReadsAMissingFieldAsZero) {
  EXPECT_EQ(parse_generation(array({str("4"), nil()})), "4:0");
  EXPECT_EQ(parse_generation(array({nil(), nil()})), "0:0");
  EXPECT_EQ(parse_generation(array({str("4"), str("2")})), "4:2");
}

TEST(ReadProtocolTest, AnErrorReplyIsAReplyError) {
  Reply error;
  error.type = Reply::Type::error;
  error.str = "ERR wrong";
  EXPECT_THROW(parse_range(error, 0), redis::ReplyError);
  EXPECT_THROW(parse_read_state(error, false), redis::ReplyError);
}

}  // namespace
}  // namespace bk::hot::read_protocol
