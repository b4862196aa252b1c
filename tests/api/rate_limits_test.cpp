// serve's rate limits without a server (api/rate_limits.h), on a clock the test moves: the
// bucket's refill, burst, Retry-After, RateLimit-Remaining and -Reset; buckets per token and
// class, a shared one for reads without a token, per member for writes taken with the
// token's or not at all; the 429s counted by class; idle full buckets dropped and the map
// bounded.
#include "api/rate_limits.h"

#include <gtest/gtest.h>

namespace bk {
namespace {

using api::Access;
using api::LimitClass;
using api::RateLimits;
using api::Verdict;
using std::chrono::milliseconds;
using std::chrono::seconds;

RateLimit every(double per_second, std::int64_t burst) {
  return RateLimit{per_second, burst};
}

class RateLimitsTest : public ::testing::Test {
 protected:
  api::SteadyTime t = api::SteadyTime{} + std::chrono::hours(1);
  RateLimits::Now clock = [this] { return t; };

  static Verdict taken(RateLimits& limits, Access access, std::uint64_t who,
                       std::uint64_t member = 0) {
    const auto v = limits.admit(access, who, member);
    EXPECT_TRUE(v.has_value());
    return v.value_or(Verdict{});
  }
};

TEST_F(RateLimitsTest, ABucketStartsFullGivesItsBurstThenRefusesWithRetryAfter) {
  RateLimitsConfig c;
  c.read = every(2, 3);
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  for (std::int64_t left : {2, 1, 0}) {
    const Verdict v = taken(limits, Access::read, 7);
    EXPECT_TRUE(v.allowed);
    EXPECT_EQ(v.limit, 3);
    EXPECT_EQ(v.remaining, left);
    EXPECT_EQ(v.retry_after, 0);
  }
  const Verdict refused = taken(limits, Access::read, 7);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.remaining, 0);
  EXPECT_EQ(refused.retry_after, 1) << "half a second, in whole seconds up";
  EXPECT_EQ(refused.reset, 2) << "3 requests at 2/s until full again";
  EXPECT_EQ(limits.refused(LimitClass::read), 1);
}

TEST_F(RateLimitsTest, TheBucketRefillsAtItsRateAndNeverBeyondItsBurst) {
  RateLimitsConfig c;
  c.read = every(2, 3);
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  for (int i = 0; i < 3; ++i) taken(limits, Access::read, 7);
  t += milliseconds(499);
  EXPECT_FALSE(taken(limits, Access::read, 7).allowed) << "not yet one whole request";
  t += milliseconds(1);
  const Verdict one = taken(limits, Access::read, 7);
  EXPECT_TRUE(one.allowed);
  EXPECT_EQ(one.remaining, 0);
  EXPECT_FALSE(taken(limits, Access::read, 7).allowed);
  t += std::chrono::hours(5);
  const Verdict rested = taken(limits, Access::read, 7);
  EXPECT_EQ(rested.remaining, 2) << "the burst caps what a long rest gives";
  EXPECT_EQ(rested.reset, 1) << "one request at 2/s";
}

TEST_F(RateLimitsTest, RetryAfterAndResetAreWholeSecondsForSlowRates) {
  RateLimitsConfig c;
  c.admin = every(1.0 / 60, 2);  // 1/m
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  EXPECT_EQ(taken(limits, Access::admin, 9).reset, 60);
  EXPECT_EQ(taken(limits, Access::admin, 9).reset, 120);
  const Verdict refused = taken(limits, Access::admin, 9);
  EXPECT_EQ(refused.retry_after, 60);
  t += seconds(45);
  const Verdict later = taken(limits, Access::admin, 9);
  EXPECT_FALSE(later.allowed);
  EXPECT_EQ(later.retry_after, 15);
  EXPECT_EQ(later.reset, 75);
  t += seconds(15);
  EXPECT_TRUE(taken(limits, Access::admin, 9).allowed) << "after exactly Retry-After";
}

TEST_F(RateLimitsTest, EachTokenAndClassHasItsBucketAndReadsWithoutATokenShareOne) {
  RateLimitsConfig c;
  c.read = every(1, 1);
  c.write = every(1, 1);
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  EXPECT_TRUE(limits.limits(Access::read));
  EXPECT_FALSE(limits.limits(Access::admin));
  EXPECT_FALSE(limits.admit(Access::admin, 5).has_value()) << "a class without a limit";
  EXPECT_TRUE(taken(limits, Access::read, 5).allowed);
  EXPECT_FALSE(taken(limits, Access::read, 5).allowed);
  EXPECT_TRUE(taken(limits, Access::read, 6).allowed) << "another token";
  EXPECT_TRUE(taken(limits, Access::write, 5).allowed) << "another class";
  EXPECT_TRUE(taken(limits, Access::read, 0).allowed);
  EXPECT_FALSE(taken(limits, Access::read, 0).allowed) << "every read without a token";
}

TEST_F(RateLimitsTest, AMembersBucketAndTheTokensAreTakenTogetherOrNotAtAll) {
  RateLimitsConfig c;
  c.write = every(10, 5);
  c.write_per_member = every(1, 2);
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  const std::uint64_t ann = limits.member_key("pts", "ann");
  const std::uint64_t bob = limits.member_key("pts", "bob");
  EXPECT_NE(ann, bob);
  EXPECT_NE(ann, limits.member_key("ptsann", ""));
  EXPECT_EQ(taken(limits, Access::write, 1, ann).remaining, 4) << "the token's bucket shown";
  EXPECT_TRUE(taken(limits, Access::write, 1, ann).allowed);
  const Verdict flood = taken(limits, Access::write, 1, ann);
  EXPECT_FALSE(flood.allowed);
  EXPECT_EQ(flood.limit, 2) << "the member's bucket refused";
  EXPECT_EQ(flood.retry_after, 1);
  EXPECT_EQ(limits.look(Access::write, 1)->remaining, 3) << "the refused write took nothing";
  EXPECT_TRUE(taken(limits, Access::write, 1, bob).allowed);
  EXPECT_TRUE(taken(limits, Access::write, 1, bob).allowed);
  const std::uint64_t cat = limits.member_key("pts", "cat");
  EXPECT_TRUE(taken(limits, Access::write, 1, cat).allowed);
  const Verdict spent = taken(limits, Access::write, 1, cat);
  EXPECT_FALSE(spent.allowed);
  EXPECT_EQ(spent.limit, 5) << "the token's bucket refused";
  EXPECT_EQ(limits.refused(LimitClass::write_per_member), 1);
  EXPECT_EQ(limits.refused(LimitClass::write), 1);
  EXPECT_TRUE(taken(limits, Access::write, 2, cat).allowed)
      << "another token, and the member's bucket untouched by the refusal";
  EXPECT_FALSE(taken(limits, Access::write, 2, cat).allowed);
}

TEST_F(RateLimitsTest, WhenBothRefuseTheLongerWaitIsAnswered) {
  RateLimitsConfig c;
  c.write = every(1.0 / 60, 1);
  c.write_per_member = every(1, 1);
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  const std::uint64_t ann = limits.member_key("pts", "ann");
  taken(limits, Access::write, 1, ann);
  const Verdict v = taken(limits, Access::write, 1, ann);
  EXPECT_EQ(v.retry_after, 60);
  EXPECT_EQ(limits.refused(LimitClass::write), 1);
  EXPECT_EQ(limits.refused(LimitClass::write_per_member), 0);
}

TEST_F(RateLimitsTest, ABatchTakesOnePerEventFromTheTokenAndEachMemberAllOrNothing) {
  RateLimitsConfig c;
  c.write = every(1, 10);
  c.write_per_member = every(1, 3);
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  const std::uint64_t ann = limits.member_key("pts", "ann");
  const std::uint64_t bob = limits.member_key("pts", "bob");
  const auto ok = limits.admit_batch(1, 5, {{ann, 3}, {bob, 2}});
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->allowed);
  EXPECT_EQ(ok->of, LimitClass::write);
  EXPECT_EQ(ok->remaining, 5) << "the token's bucket after the batch";
  const auto member = limits.admit_batch(1, 2, {{ann, 1}, {bob, 1}});
  ASSERT_TRUE(member);
  EXPECT_FALSE(member->allowed);
  EXPECT_FALSE(member->never);
  EXPECT_EQ(member->of, LimitClass::write_per_member);
  EXPECT_EQ(member->whose, ann);
  EXPECT_EQ(member->retry_after, 1);
  EXPECT_EQ(limits.look(Access::write, 1, bob)->remaining, 5) << "nothing taken from the token";
  EXPECT_TRUE(limits.admit_batch(1, 1, {{bob, 1}})->allowed) << "nor from bob: he had one left";
  EXPECT_FALSE(limits.admit_batch(1, 1, {{bob, 1}})->allowed);
  const auto token = limits.admit_batch(1, 6, {});
  ASSERT_TRUE(token);
  EXPECT_FALSE(token->allowed);
  EXPECT_EQ(token->of, LimitClass::write);
  EXPECT_EQ(token->remaining, 4);
  EXPECT_EQ(token->retry_after, 2) << "two more requests, at 1/s";
  const auto never = limits.admit_batch(1, 11, {});
  ASSERT_TRUE(never);
  EXPECT_FALSE(never->allowed);
  EXPECT_TRUE(never->never) << "more than the burst";
  EXPECT_EQ(never->retry_after, 0);
  EXPECT_EQ(limits.refused(LimitClass::write), 1) << "a batch beyond the burst is no 429";
  EXPECT_EQ(limits.refused(LimitClass::write_per_member), 2);
  t += seconds(2);
  EXPECT_TRUE(limits.admit_batch(1, 6, {{ann, 1}})->allowed);
}

TEST_F(RateLimitsTest, ABatchWithMoreMembersThanTheCapIsDecidedAndTheMapStaysUsable) {
  RateLimitsConfig c;
  c.write_per_member = every(1, 1);
  RateLimits limits(c, 3, clock);
  RateLimits::MemberEvents members;
  for (std::uint64_t m = 1; m <= 8; ++m) members.push_back({m, 1});
  const auto v = limits.admit_batch(1, 8, members);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->allowed) << "no token limit: the members' buckets speak";
  EXPECT_EQ(v->remaining, 0);
  EXPECT_FALSE(limits.admit(Access::write, 1, 8)->allowed) << "member 8's bucket is kept";
  for (std::uint64_t m = 100; m < 120; ++m) limits.admit(Access::write, 1, m);
  EXPECT_LE(limits.buckets(), 3U) << "back within the cap";
}

TEST_F(RateLimitsTest, LookingTakesNothingAndMakesNoBucket) {
  RateLimitsConfig c;
  c.read = every(1, 4);
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  EXPECT_EQ(limits.look(Access::read, 3)->remaining, 4);
  EXPECT_EQ(limits.buckets(), 0U);
  taken(limits, Access::read, 3);
  EXPECT_EQ(limits.look(Access::read, 3)->remaining, 3);
  EXPECT_EQ(limits.look(Access::read, 3)->remaining, 3);
  EXPECT_FALSE(limits.look(Access::admin, 3).has_value());
}

TEST_F(RateLimitsTest, IdleFullBucketsAreDroppedAndLoseNothing) {
  RateLimitsConfig c;
  c.read = every(1, 2);
  RateLimits limits(c, 1000, clock);
  for (std::uint64_t who = 1; who <= 20; ++who) taken(limits, Access::read, who);
  taken(limits, Access::read, 1);
  EXPECT_EQ(limits.buckets(), 20U);
  t += seconds(2);  // every bucket full again
  for (int i = 0; i < 12; ++i) taken(limits, Access::read, 100);
  EXPECT_EQ(limits.buckets(), 1U) << "two looked at a call: the 20 full ones dropped";
  t += seconds(10);
  for (int i = 0; i < 12; ++i) limits.admit(Access::read, 200);
  EXPECT_LE(limits.buckets(), 2U);
  EXPECT_EQ(taken(limits, Access::read, 1).remaining, 1) << "a dropped bucket was a full one";
}

TEST_F(RateLimitsTest, TheMapNeverHoldsMoreThanItsCap) {
  RateLimitsConfig c;
  c.write = every(1, 1000);
  c.write_per_member = every(1, 5);
  RateLimits limits(c, 16, clock);
  for (std::uint64_t m = 1; m <= 200; ++m) {
    EXPECT_TRUE(taken(limits, Access::write, 1, m).allowed);
    EXPECT_LE(limits.buckets(), 16U);
  }
  EXPECT_EQ(limits.buckets(), 16U) << "none full: none dropped but to make room";
  EXPECT_EQ(limits.look(Access::write, 1)->remaining, 800)
      << "the bucket of the request at hand is never the one that makes room";
}

TEST_F(RateLimitsTest, AClockThatGoesBackRefillsNothing) {
  RateLimitsConfig c;
  c.read = every(1, 1);
  RateLimits limits(c, RateLimits::kMaxBuckets, clock);
  taken(limits, Access::read, 1);
  t -= seconds(30);
  EXPECT_FALSE(taken(limits, Access::read, 1).allowed);
  t += seconds(31);
  EXPECT_TRUE(taken(limits, Access::read, 1).allowed);
}

}  // namespace
}  // namespace bk
