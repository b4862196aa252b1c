// increment / best / replace.
#include "core/policy.h"

#include <string>

#include "core/error.h"

namespace bk {

PolicyOutcome apply_policy(Policy policy, Order order, std::optional<std::int64_t> current,
                           std::int64_t value) {
  if (!current) return {value, true};
  switch (policy) {
    case Policy::increment: {
      std::int64_t sum = 0;
      if (__builtin_add_overflow(*current, value, &sum)) {
        throw OutOfRangeError("increment by " + std::to_string(value) + " overflows");
      }
      return {sum, value != 0};
    }
    case Policy::best: {
      const bool better = order == Order::desc ? value > *current : value < *current;
      return better ? PolicyOutcome{value, true} : PolicyOutcome{*current, false};
    }
    case Policy::replace:
      return {value, value != *current};
  }
  return {*current, false};
}

}  // namespace bk
