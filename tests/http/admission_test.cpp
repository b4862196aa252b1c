// The arithmetic of what the server lets clients hold at once (http/admission.h), without a
// server: body bytes in flight overall and per key, requests in progress per key, and when a
// flood has ended.
#include "http/admission.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bk::http {
namespace {

using Verdict = Admission::Verdict;

Admission small() {
  return Admission({/*body_bytes=*/1000, /*body_bytes_per_key=*/400, /*requests_per_key=*/3});
}

TEST(AdmissionTest, BodiesAreAdmittedUntilTheKeysShareIsFullThenItsNextIsA429) {
  Admission a = small();
  EXPECT_EQ(a.admit("t1", 200), Verdict::admitted);
  EXPECT_EQ(a.admit("t1", 200), Verdict::admitted);  // exactly the share
  EXPECT_EQ(a.admit("t1", 1), Verdict::key_bodies);
  EXPECT_EQ(a.body_bytes_of("t1"), 400U);
  EXPECT_EQ(a.admit("t2", 400), Verdict::admitted);  // another key has a share of its own
  EXPECT_EQ(a.body_bytes(), 800U);
}

TEST(AdmissionTest, WhenAllKeysTogetherFillTheBudgetTheNextBodyIsA503EvenWithinItsShare) {
  Admission a = small();
  ASSERT_EQ(a.admit("t1", 400), Verdict::admitted);
  ASSERT_EQ(a.admit("t2", 400), Verdict::admitted);
  EXPECT_EQ(a.admit("t3", 201), Verdict::server_full);
  EXPECT_EQ(a.admit("t3", 200), Verdict::admitted);  // exactly the budget
  EXPECT_EQ(a.body_bytes(), 1000U);
  EXPECT_EQ(a.admit("t4", 1), Verdict::server_full);
  // A request without a body needs no room.
  EXPECT_EQ(a.admit("t4", 0), Verdict::admitted);
}

TEST(AdmissionTest, AKeyOverItsShareIsTold429BeforeAFullServerIsTold503) {
  Admission a = small();
  ASSERT_EQ(a.admit("t1", 400), Verdict::admitted);
  ASSERT_EQ(a.admit("t2", 400), Verdict::admitted);
  ASSERT_EQ(a.admit("t3", 200), Verdict::admitted);
  EXPECT_EQ(a.admit("t1", 1), Verdict::key_bodies);
}

TEST(AdmissionTest, ABodyLargerThanTheShareOrTheBudgetCanNeverBeAdmitted) {
  Admission a = small();
  EXPECT_EQ(a.admit("t1", 401), Verdict::too_large);
  Admission wide({/*body_bytes=*/300, /*body_bytes_per_key=*/300, /*requests_per_key=*/3});
  EXPECT_EQ(wide.admit("t1", 301), Verdict::too_large);
  EXPECT_EQ(a.keys(), 0U);  // refused: nothing counted
  EXPECT_EQ(wide.keys(), 0U);
}

TEST(AdmissionTest, AKeysRequestsInProgressAreCountedWithOrWithoutBodies) {
  Admission a = small();
  EXPECT_EQ(a.admit("t1", 0), Verdict::admitted);
  EXPECT_EQ(a.admit("t1", 10), Verdict::admitted);
  EXPECT_EQ(a.admit("t1", 0), Verdict::admitted);
  EXPECT_EQ(a.admit("t1", 0), Verdict::key_requests);
  EXPECT_EQ(a.requests_of("t1"), 3U);
  EXPECT_EQ(a.admit("t2", 0), Verdict::admitted);
  a.release("t1", 0);
  EXPECT_EQ(a.admit("t1", 0), Verdict::admitted);
}

TEST(AdmissionTest, ReleasingGivesTheBytesAndTheRequestBackAndForgetsAnIdleKey) {
  Admission a = small();
  ASSERT_EQ(a.admit("t1", 300), Verdict::admitted);
  ASSERT_EQ(a.admit("t1", 100), Verdict::admitted);
  ASSERT_EQ(a.admit("t2", 50), Verdict::admitted);
  a.release("t1", 300);
  EXPECT_EQ(a.body_bytes_of("t1"), 100U);
  EXPECT_EQ(a.requests_of("t1"), 1U);
  EXPECT_EQ(a.body_bytes(), 150U);
  EXPECT_EQ(a.admit("t1", 300), Verdict::admitted);
  a.release("t1", 300);
  a.release("t1", 100);
  a.release("t2", 50);
  EXPECT_EQ(a.body_bytes(), 0U);
  EXPECT_EQ(a.keys(), 0U);  // no key is kept once it holds nothing
}

TEST(AdmissionTest, ManyKeysComingAndGoingLeaveNothingBehind) {
  Admission a({/*body_bytes=*/1 << 20, /*body_bytes_per_key=*/1 << 10, /*requests_per_key=*/2});
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) keys.push_back("key-" + std::to_string(i));
  for (const auto& k : keys) {
    ASSERT_EQ(a.admit(k, 1000), Verdict::admitted);
    ASSERT_EQ(a.admit(k, 0), Verdict::admitted);
  }
  EXPECT_EQ(a.body_bytes(), 500U * 1000U);
  for (const auto& k : keys) {
    a.release(k, 0);
    a.release(k, 1000);
  }
  EXPECT_EQ(a.body_bytes(), 0U);
  EXPECT_EQ(a.keys(), 0U);
}

TEST(AdmissionTest, AReleaseOfWhatWasNeverAdmittedChangesNothing) {
  Admission a = small();
  ASSERT_EQ(a.admit("t1", 100), Verdict::admitted);
  a.release("nobody", 100);
  a.release("t1", 500);  // more than it holds: it holds nothing after, and nothing wraps
  EXPECT_EQ(a.body_bytes(), 0U);
  EXPECT_EQ(a.keys(), 0U);
  EXPECT_EQ(a.admit("t1", 400), Verdict::admitted);
}

// A client owns an IPv6 /64: keyed by its address, it could take 2^64 shares.
TEST(AddressShareTest, IPv4ByTheAddressIPv6ByItsSlash64) {
  EXPECT_EQ(address_share("192.0.2.7"), "address 192.0.2.7");
  EXPECT_NE(address_share("192.0.2.7"), address_share("192.0.2.8"));
  EXPECT_EQ(address_share("::ffff:192.0.2.7"), "address 192.0.2.7") << "mapped: the IPv4 one";
  EXPECT_EQ(address_share("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "address 2001:db8:1:2::/64");
  EXPECT_EQ(address_share("2001:db8:1:2::1"), address_share("2001:db8:1:2:ffff::9"))
      << "one /64, one share";
  EXPECT_NE(address_share("2001:db8:1:2::1"), address_share("2001:db8:1:3::1"));
  EXPECT_EQ(address_share("::1"), "address ::/64");
  EXPECT_EQ(address_share("fe80::1%1"), "address fe80::/64") << "the scope is no part of it";
  EXPECT_EQ(address_share(""), "address ") << "unknown: every unknown one shares";
  EXPECT_EQ(address_share("not an address"), "address not an address");
}

TEST(FloodMarkTest, AFloodEndsWhenWhatIsHeldFallsToAQuarterOfItsMarkAboveTheFloor) {
  FloodMark m(100);
  EXPECT_FALSE(m.ended(50));
  EXPECT_FALSE(m.ended(10));  // the mark (50) is below the floor: no flood
  EXPECT_FALSE(m.ended(400));
  EXPECT_FALSE(m.ended(101));  // above a quarter of 400
  EXPECT_TRUE(m.ended(60));
  EXPECT_FALSE(m.ended(20));  // once: the mark starts again from 60, below the floor
  EXPECT_FALSE(m.ended(90));
  EXPECT_FALSE(m.ended(200));
  EXPECT_TRUE(m.ended(0));
  EXPECT_EQ(m.high(), 0U);
}

}  // namespace
}  // namespace bk::http
