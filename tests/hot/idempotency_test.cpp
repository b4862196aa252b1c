// idempotency_claim.lua's replies parsed without a server (hot/idempotency.h).
#include "hot/idempotency.h"

#include <gtest/gtest.h>

#include "redis/error.h"
#include "replies.h"

namespace bk::hot {
namespace {

using test::array;
using test::error;
using test::integer;
using test::str;

TEST(ClaimReply, OneClaimPerKeyInOrder) {
  const Claimed c = parse_claims(array({integer(1), integer(2), integer(0)}), 3);
  EXPECT_TRUE(c.error.empty());
  EXPECT_EQ(c.claims, (std::vector<Claim>{Claim::first, Claim::same, Claim::reused}));
}

TEST(ClaimReply, ALastingErrorFailsTheBoardAndATransientOneThrows) {
  const Claimed c = parse_claims(error("WRONGTYPE Operation against a key"), 2);
  EXPECT_TRUE(c.claims.empty());
  EXPECT_NE(c.error.find("WRONGTYPE"), std::string::npos);
  EXPECT_THROW(parse_claims(error("LOADING Redis is loading the dataset"), 1), Error);
}

TEST(ClaimReply, AReplyTheScriptNeverGivesThrows) {
  EXPECT_THROW(parse_claims(array({integer(1)}), 2), redis::ReplyError);
  EXPECT_THROW(parse_claims(array({integer(3)}), 1), redis::ReplyError);
  EXPECT_THROW(parse_claims(str("ok"), 1), redis::ReplyError);
}

}  // namespace
}  // namespace bk::hot
