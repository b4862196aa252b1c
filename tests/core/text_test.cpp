// The shared text helpers: prefixes, and a URL's scheme shown without the rest of the URL.
#include "core/text.h"

#include <gtest/gtest.h>

namespace bk {
namespace {

TEST(TextTest, StartsWithComparesThePrefixOnly) {
  EXPECT_TRUE(starts_with("redis://h", "redis://"));
  EXPECT_TRUE(starts_with("abc", ""));
  EXPECT_TRUE(starts_with("abc", "abc"));
  EXPECT_FALSE(starts_with("ab", "abc"));
  EXPECT_FALSE(starts_with("rediss://h", "redis://"));
  EXPECT_FALSE(starts_with("", "a"));
}

TEST(TextTest, DescribeUrlSchemeShowsAPlainSchemeAndUpToTwoSlashesNeverTheRest) {
  EXPECT_EQ(describe_url_scheme("reddis://u:Sq1pw@h"), "it starts with 'reddis://'");
  EXPECT_EQ(describe_url_scheme("postgres:/Sq1pw"), "it starts with 'postgres:/'");
  EXPECT_EQ(describe_url_scheme("h:6379"), "it starts with 'h:'");
  EXPECT_EQ(describe_url_scheme("git+ssh:///x"), "it starts with 'git+ssh://'");
  for (const char* url :
       {"", "Sq1pw", "//Sq1pw@h", "1abc://h", ":x", "averyveryverylong://h", "a b://Sq1pw"}) {
    EXPECT_EQ(describe_url_scheme(url), "it has no scheme") << url;
  }
}

}  // namespace
}  // namespace bk
