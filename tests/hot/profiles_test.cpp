// hot/profiles: a page of a profile hash as typed from its HSCAN reply, without a server.
#include "hot/profiles.h"

#include <gtest/gtest.h>

#include "replies.h"

#include "redis/error.h"

namespace bk::hot {
namespace {

using redis::Reply;
using namespace bk::hot::test;

TEST(ProfileHashesTest, APageGivesTheNextCursorAndEachMembersValue) {
  const ProfilePage page = parse_profile_page(
      array({str("17"), array({str("ann"), str("Ann"), str("bob"), str("Bob")})}));
  EXPECT_EQ(page.cursor, "17");
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(page.profiles, (Pairs{{"ann", "Ann"}, {"bob", "Bob"}}));
}

TEST(ProfileHashesTest, TheMovedMarkIsNoMember) {
  const ProfilePage page =
      parse_profile_page(array({str("0"), array({str(""), str("1"), str("ann"), str("Ann")})}));
  EXPECT_EQ(page.cursor, "0");
  ASSERT_EQ(page.profiles.size(), 1u);
  EXPECT_EQ(page.profiles[0].first, "ann");
}

TEST(ProfileHashesTest, AnEmptyPageIsNoProfiles) {
  EXPECT_TRUE(parse_profile_page(array({str("0"), array({})})).profiles.empty());
}

TEST(ProfileHashesTest, AReplyOfAnotherShapeThrows) {
  Reply error;
  error.type = Reply::Type::error;
  error.str = "WRONGTYPE Operation against a key holding the wrong kind of value";
  EXPECT_THROW(parse_profile_page(error), redis::ReplyError);
  EXPECT_THROW(parse_profile_page(array({str("0")})), redis::ReplyError);
  EXPECT_THROW(parse_profile_page(array({array({}), array({})})), redis::ReplyError);
}

}  // namespace
}  // namespace bk::hot
