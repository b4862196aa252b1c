// Stream entry ids as two 64-bit numbers: parsed exactly, ordered as Redis orders them.
#include <gtest/gtest.h>

#include <string>

#include "embedded/hot_lua.h"
#include "hot/stream.h"

namespace bk::hot {
namespace {

// The dead-letter script answers an entry no longer pending with the words the consumer
// compares against (kAlreadyAcknowledged): if they drifted apart, every such entry would be
// taken for a refused letter and stay pending for good.
TEST(StreamKeeperContract, TheDeadLetterScriptSaysAlreadyAcknowledgedInTheConsumersWords) {
  const std::string script(embedded::hot_lua::stream_dead_letter_lua);
  EXPECT_NE(script.find(std::string("out[#out + 1] = '") + kAlreadyAcknowledged + "'"),
            std::string::npos);
}

TEST(StreamId, ParsesWhatRedisWrites) {
  EXPECT_EQ(StreamId::parse("1526919030474-55"), (StreamId{1526919030474, 55}));
  EXPECT_EQ(StreamId::parse("0-0"), (StreamId{0, 0}));
  EXPECT_EQ(StreamId::parse("18446744073709551615-18446744073709551615"),
            (StreamId{UINT64_MAX, UINT64_MAX}));
  EXPECT_EQ(StreamId::parse("18446744073709551615-18446744073709551615")->text(),
            "18446744073709551615-18446744073709551615");
  EXPECT_EQ((StreamId{1526919030474, 55}).text(), "1526919030474-55");
}

TEST(StreamId, RefusesAnythingElse) {
  for (const char* bad : {"", "-", "5", "5-", "-5", "5--1", "5-+1", "+5-1", "a-1", "1-2-3", " 1-2",
                          "1-2 ", "18446744073709551616-0", "0-18446744073709551616", "*", "$"}) {
    EXPECT_EQ(StreamId::parse(bad), std::nullopt) << bad;
  }
}

TEST(StreamId, OrdersByMillisecondsThenSequence) {
  EXPECT_LT((StreamId{1, 5}), (StreamId{2, 0}));
  EXPECT_LT((StreamId{2, 0}), (StreamId{2, 1}));
  EXPECT_LT((StreamId{9, UINT64_MAX}), (StreamId{10, 0}));
  EXPECT_FALSE((StreamId{3, 3}) < (StreamId{3, 3}));
  EXPECT_NE((StreamId{3, 3}), (StreamId{3, 4}));
}

}  // namespace
}  // namespace bk::hot
