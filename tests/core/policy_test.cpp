// Update policies and when an event's time becomes the member's achieved_at.
#include "core/policy.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/error.h"

namespace bk {
namespace {

constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
constexpr auto kMin = std::numeric_limits<std::int64_t>::min();

void expect_outcome(Policy policy, Order order, std::optional<std::int64_t> current,
                    std::int64_t value, std::int64_t points, bool changed) {
  const PolicyOutcome out = apply_policy(policy, order, current, value);
  EXPECT_EQ(out.points, points) << "current " << (current ? std::to_string(*current) : "none")
                                << " value " << value;
  EXPECT_EQ(out.changed, changed) << "current " << (current ? std::to_string(*current) : "none")
                                  << " value " << value;
}

TEST(Policy, NewMemberTakesTheValueWhateverThePolicy) {
  for (const Policy p : {Policy::increment, Policy::best, Policy::replace}) {
    for (const Order o : {Order::desc, Order::asc}) {
      expect_outcome(p, o, std::nullopt, 7, 7, true);
      expect_outcome(p, o, std::nullopt, 0, 0, true);
      expect_outcome(p, o, std::nullopt, -3, -3, true);
    }
  }
}

TEST(Policy, Increment) {
  for (const Order o : {Order::desc, Order::asc}) {  // the order does not matter
    expect_outcome(Policy::increment, o, 5, 3, 8, true);
    expect_outcome(Policy::increment, o, 5, -7, -2, true);
    expect_outcome(Policy::increment, o, 5, 0, 5, false);  // nothing reached anew
    expect_outcome(Policy::increment, o, -5, 5, 0, true);
    expect_outcome(Policy::increment, o, kMax - 1, 1, kMax, true);
    expect_outcome(Policy::increment, o, kMin + 1, -1, kMin, true);
  }
}

TEST(Policy, IncrementOverflowIsRefused) {
  EXPECT_THROW(apply_policy(Policy::increment, Order::desc, kMax, 1), OutOfRangeError);
  EXPECT_THROW(apply_policy(Policy::increment, Order::desc, kMin, -1), OutOfRangeError);
  EXPECT_THROW(apply_policy(Policy::increment, Order::asc, kMax / 2 + 1, kMax / 2 + 1),
               OutOfRangeError);
  EXPECT_NO_THROW(apply_policy(Policy::increment, Order::desc, kMax, kMin));
}

TEST(Policy, BestDesc) {
  expect_outcome(Policy::best, Order::desc, 10, 12, 12, true);
  expect_outcome(Policy::best, Order::desc, 10, 8, 10, false);
  // Equal is not better: whoever reached it first keeps the time.
  expect_outcome(Policy::best, Order::desc, 10, 10, 10, false);
  expect_outcome(Policy::best, Order::desc, -10, -9, -9, true);
}

TEST(Policy, BestAsc) {
  expect_outcome(Policy::best, Order::asc, 10, 8, 8, true);
  expect_outcome(Policy::best, Order::asc, 10, 12, 10, false);
  expect_outcome(Policy::best, Order::asc, 10, 10, 10, false);
  expect_outcome(Policy::best, Order::asc, -10, -11, -11, true);
}

TEST(Policy, Replace) {
  for (const Order o : {Order::desc, Order::asc}) {
    expect_outcome(Policy::replace, o, 10, 7, 7, true);
    expect_outcome(Policy::replace, o, 10, 12, 12, true);
    expect_outcome(Policy::replace, o, 10, 10, 10, false);
    expect_outcome(Policy::replace, o, kMax, kMin, kMin, true);
  }
}

}  // namespace
}  // namespace bk
