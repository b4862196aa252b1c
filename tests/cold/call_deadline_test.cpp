// The deadline of a PostgreSQL call this thread starts (cold/call_deadline.h): a CallDeadline's
// instant, a CallTimeout's span from the call's start, the nearer of both, nested ones. No
// server needed.
#include "cold/call_deadline.h"

#include <gtest/gtest.h>

#include <future>

namespace bk::cold {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = std::chrono::steady_clock;

TEST(CallDeadlineTest, WithoutEitherACallHasNoDeadline) {
  EXPECT_FALSE(call_deadline());
  EXPECT_FALSE(call_timeout());
}

TEST(CallDeadlineTest, ACallTimeoutGivesEachCallItsSpanFromItsStart) {
  const CallTimeout each(seconds{5});
  const Steady::time_point before = Steady::now();
  const auto first = call_deadline();
  ASSERT_TRUE(first);
  EXPECT_GE(*first, before + seconds{5});
  EXPECT_LE(*first, Steady::now() + seconds{5});
  // A later call gets a later deadline: the span counts from each call.
  const Steady::time_point later = Steady::now() + milliseconds{20};
  while (Steady::now() < later) {
  }
  EXPECT_GT(*call_deadline(), *first);
}

TEST(CallDeadlineTest, TheNearerOfADeadlineAndATimeoutHolds) {
  const Steady::time_point soon = Steady::now() + seconds{1};
  {
    const CallDeadline by(soon);
    const CallTimeout each(seconds{60});
    EXPECT_EQ(*call_deadline(), soon);
  }
  const CallDeadline by(Steady::now() + seconds{60});
  const CallTimeout each(seconds{1});
  const Steady::time_point deadline = *call_deadline();
  EXPECT_LE(deadline, Steady::now() + seconds{1});
}

TEST(CallDeadlineTest, NestedTimeoutsKeepTheShorterAndEndWithTheirScope) {
  {
    const CallTimeout outer(seconds{10});
    {
      const CallTimeout longer(seconds{100});
      EXPECT_EQ(*call_timeout(), seconds{10});
      const CallTimeout none(std::nullopt);
      EXPECT_EQ(*call_timeout(), seconds{10});
      const CallTimeout shorter(seconds{2});
      EXPECT_EQ(*call_timeout(), seconds{2});
    }
    EXPECT_EQ(*call_timeout(), seconds{10});
  }
  EXPECT_FALSE(call_timeout());
}

TEST(CallDeadlineTest, AnotherThreadHasNoneUntilItTakesTheCallersOn) {
  const CallTimeout each(seconds{3});
  const auto mine = call_timeout();
  EXPECT_FALSE(std::async(std::launch::async, [] { return call_timeout(); }).get());
  EXPECT_EQ(std::async(std::launch::async,
                       [mine] {
                         const CallTimeout taken(mine);
                         return call_timeout();
                       })
                .get(),
            mine);
}

}  // namespace
}  // namespace bk::cold
