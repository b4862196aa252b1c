// The cold tier's rows of open periods (members spilled below the hot buffer): spills write
// them, rehydration looks them up, archiving drops them. Part of cold::ColdStore.
#pragma once
#include <cstddef>
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

// The rows one spill writes, each member once (the last row given for it), in member order
// (one lock order for concurrent spills of a period): `fresh` were promised absent (they go
// in by COPY), `upserted` may replace a row; `all` is both, in member order.
struct SpillRows {
  std::vector<const ColdRow*> fresh, upserted, all;
};
// Throws RefusedError for a member holding a NUL byte. known_absent[i] is the promise for
// rows[i] (missing entries: no promise).
SpillRows spill_rows(const std::vector<ColdRow>& rows, const std::vector<bool>& known_absent);

class ColdTier {
 public:
  explicit ColdTier(std::shared_ptr<pg::Link> link);

  // See ColdStore::upsert, analyze, lookup, periods_with_rows and drop_period.
  std::int64_t upsert(const PeriodKey& period, const std::vector<ColdRow>& rows,
                      const std::vector<bool>& known_absent);
  void analyze();
  std::vector<std::optional<ColdHit>> lookup(const std::vector<MemberKey>& keys);
  std::vector<PeriodKey> periods_with_rows(const std::optional<std::string>& board);
  std::int64_t drop_period(const PeriodKey& period);

 private:
  std::shared_ptr<pg::Link> link_;
};

}  // namespace bk::cold
