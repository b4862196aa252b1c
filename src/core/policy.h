// Update policies: how a member's points change when an event arrives.
#pragma once
#include <cstdint>
#include <optional>

#include "core/score_codec.h"

namespace bk {

enum class Policy { increment, best, replace };

struct PolicyOutcome {
  std::int64_t points = 0;
  // True when the points changed (or the member is new): only then does the event's time
  // become the member's achieved_at, because the current points were reached by it.
  bool changed = false;
};

// Throws OutOfRangeError if an increment overflows 64 bits; the board's range is checked
// by the codec.
PolicyOutcome apply_policy(Policy policy, Order order, std::optional<std::int64_t> current,
                           std::int64_t value);

}  // namespace bk
