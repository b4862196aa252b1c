// A member's rows of board periods in PostgreSQL, removed (R2 of the remove protocol,
// docs/architecture.md "Moderation"): its cold row with its page's count, and the history rows
// of a period archived while the removal ran. Shares the cold store's connection.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cold/types.h"

namespace bk::cold {

namespace pg {
struct Link;
}

struct MemberRowsRemoved {
  std::int64_t cold = 0;     // cold rows deleted (0 or 1)
  bool archived = false;     // the period is archived
  std::int64_t history = 0;  // history rows deleted (of an archived period)
};

class MemberRows {
 public:
  explicit MemberRows(std::shared_ptr<pg::Link> link);

  // R2: in one transaction, per period in the order given, waits for the period's lock (a
  // running spill or archive of it ends first), then deletes the member's cold row (its page
  // counts one row less) and, when the period is archived, its history rows (the period's
  // member count drops; other rows keep their ranks and positions as archived). Committed
  // before it returns. Result i belongs to periods[i].
  // Without `lock_wait` it waits however long a spill or archive holds a lock; with it, a lock
  // not had within that time throws BusyError naming the period, and nothing is deleted.
  std::vector<MemberRowsRemoved> remove(
      const std::string& member, const std::vector<PeriodKey>& periods,
      std::optional<std::chrono::milliseconds> lock_wait = std::nullopt);
  // Deletes the cold rows of these members in one period (tombstones, see hot/moderation.h),
  // their pages' counts kept exact. The caller holds the period's lock (tick's spill).
  // Returns how many rows went.
  std::int64_t remove_void(const PeriodKey& period, const std::vector<std::string>& members);

 private:
  std::shared_ptr<pg::Link> link_;
};

}  // namespace bk::cold
