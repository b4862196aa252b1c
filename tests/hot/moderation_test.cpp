// member_remove.lua's replies parsed without a server (hot/moderation.h).
#include "hot/moderation.h"

#include <gtest/gtest.h>

#include "redis/error.h"
#include "replies.h"

namespace bk::hot {
namespace {

using test::array;
using test::error;
using test::integer;
using test::str;

TEST(MemberRemovalReply, PerPeriodTheHotEntryAndTheTombstone) {
  const MemberRemoval r =
      parse_removal(array({str("ok"), integer(1), integer(0), integer(0), integer(1)}), 2);
  EXPECT_TRUE(r.again.empty());
  ASSERT_EQ(r.periods.size(), 2U);
  EXPECT_TRUE(r.periods[0].hot);
  EXPECT_FALSE(r.periods[0].tombstoned);
  EXPECT_FALSE(r.periods[1].hot);
  EXPECT_TRUE(r.periods[1].tombstoned);
}

TEST(MemberRemovalReply, AgainNamesThePeriodsTheCallerMissedAndNothingElse) {
  const MemberRemoval r = parse_removal(array({str("again"), str("daily:2026-11-23")}), 1);
  EXPECT_EQ(r.again, (std::vector<std::string>{"daily:2026-11-23"}));
  EXPECT_TRUE(r.periods.empty());
}

TEST(MemberRemovalReply, RepliesTheScriptNeverGivesAreErrors) {
  EXPECT_THROW(parse_removal(array({str("ok"), integer(1)}), 1), redis::ReplyError);
  EXPECT_THROW(parse_removal(array({str("again")}), 1), redis::ReplyError);
  EXPECT_THROW(parse_removal(array({str("maybe"), integer(1), integer(1)}), 1), redis::ReplyError);
  EXPECT_THROW(parse_removal(integer(3), 1), redis::ReplyError);
  EXPECT_THROW(parse_removal(error("ERR boom"), 1), redis::ReplyError);
}

}  // namespace
}  // namespace bk::hot
