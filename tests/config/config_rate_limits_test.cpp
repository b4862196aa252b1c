// serve.rate_limits: each route class a token bucket written {rate: N/s|N/m|N/h, burst: N};
// a class not written has no limit; every mistake is named at its file:line:column.
#include <gtest/gtest.h>

#include "config_testing.h"

namespace bk {
namespace {

using config_testing::HasProblem;
using config_testing::minimal;
using config_testing::parse;
using config_testing::problems_of;

TEST(ConfigRateLimitsTest, EachClassIsARateAndABurstAndAClassNotWrittenHasNoLimit) {
  const Config c = parse(
      "serve:\n  rate_limits:\n    read: {rate: 500/s, burst: 1000}\n    write: {rate: 300/m}\n"
      "    write_per_member: {rate: 3600/h, burst: 5}\n" +
      minimal());
  ASSERT_TRUE(c.serve.rate_limits.read);
  EXPECT_EQ(c.serve.rate_limits.read->per_second, 500);
  EXPECT_EQ(c.serve.rate_limits.read->burst, 1000);
  ASSERT_TRUE(c.serve.rate_limits.write);
  EXPECT_EQ(c.serve.rate_limits.write->per_second, 5);
  EXPECT_EQ(c.serve.rate_limits.write->burst, 5) << "one second's worth when not written";
  ASSERT_TRUE(c.serve.rate_limits.write_per_member);
  EXPECT_EQ(c.serve.rate_limits.write_per_member->per_second, 1);
  EXPECT_EQ(c.serve.rate_limits.write_per_member->burst, 5);
  EXPECT_FALSE(c.serve.rate_limits.admin);
  const Config slow = parse("serve:\n  rate_limits:\n    admin: {rate: 1/h}\n" + minimal());
  EXPECT_EQ(slow.serve.rate_limits.admin->burst, 1) << "at least 1";
  const Config none = parse(minimal());
  EXPECT_FALSE(none.serve.rate_limits.read || none.serve.rate_limits.write ||
               none.serve.rate_limits.admin || none.serve.rate_limits.write_per_member);
}

TEST(ConfigRateLimitsTest, MistakesAreNamedAtTheirLineAndColumn) {
  const auto p = problems_of(
      "serve:\n"
      "  rate_limits:\n"
      "    read: {rate: 500}\n"               // 3
      "    write: {rate: 0/s}\n"              // 4
      "    admin: {rate: 10/d}\n"             // 5
      "    reads: {rate: 1/s}\n"              // 6
      "    write_per_member: {burst: 3}\n" +  // 7
      minimal());
  EXPECT_TRUE(HasProblem(p, 3, 18, "serve.rate_limits.read.rate must be N/s, N/m or N/h"));
  EXPECT_TRUE(HasProblem(p, 4, 19, "serve.rate_limits.write.rate must be N/s"));
  EXPECT_TRUE(HasProblem(p, 5, 19, "not '10/d'"));
  EXPECT_TRUE(HasProblem(p, 6, 5, "unknown key 'reads' in serve.rate_limits"));
  EXPECT_TRUE(HasProblem(p, 6, 5, "did you mean 'read'?"));
  EXPECT_TRUE(HasProblem(p, 7, 23, "serve.rate_limits.write_per_member needs a rate"));
  const auto q = problems_of(
      "serve:\n"
      "  rate_limits:\n"
      "    read: {rate: 5/s, burst: 0}\n"      // 3
      "    write: {rate: 5/s, burst: many}\n"  // 4
      "    admin: {rate: 5/s, per: token}\n"   // 5
      "    write_per_member: 5/s\n" +          // 6
      minimal());
  EXPECT_TRUE(HasProblem(q, 3, 30, "serve.rate_limits.read.burst must be in [1, 1000000000]"));
  EXPECT_TRUE(HasProblem(q, 4, 31, "serve.rate_limits.write.burst must be a whole number"));
  EXPECT_TRUE(HasProblem(q, 5, 24, "unknown key 'per' in serve.rate_limits.admin"));
  EXPECT_TRUE(HasProblem(q, 6, 23, "serve.rate_limits.write_per_member must be a map"));
  EXPECT_TRUE(HasProblem(problems_of("serve:\n  rate_limits: 5/s\n" + minimal()), 2, 16,
                         "serve.rate_limits must be a map"));
}

}  // namespace
}  // namespace bk
