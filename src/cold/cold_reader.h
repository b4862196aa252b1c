// Reads of one period's cold rows in a consistent snapshot (ColdStore::reader): counts,
// ranks and listing pages, found through the counted pages (sql/007_cold_pages.sql).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cold/types.h"

namespace bk::cold {

namespace pg {
struct Link;
}

class ColdStore;

// Reads of one period's cold rows in listing order: encoded ascending, then member bytes
// ascending (COLLATE "C"). Ends its transaction when destroyed.
class ColdReader {
 public:
  ~ColdReader();
  ColdReader(ColdReader&&) noexcept;

  std::int64_t count(const PeriodKey& period);
  // Rows with encoded < e (strictly better scores).
  std::int64_t count_better(const PeriodKey& period, std::int64_t encoded);
  // The same for many scores in one round trip (result i for encoded[i]).
  std::vector<std::int64_t> count_better(const PeriodKey& period,
                                         const std::vector<std::int64_t>& encoded);
  // Rows listed before (e, member): encoded < e, or encoded == e and member < m.
  std::int64_t count_before(const PeriodKey& period, std::int64_t encoded,
                            const std::string& member);
  // The first `limit` rows from position `offset` in listing order.
  std::vector<ColdHit> slice(const PeriodKey& period, std::int64_t offset, std::int64_t limit);
  // The listing key (encoded, member) of the row at `position` (0-based, listing order), or
  // nullopt past the last row. PostgreSQL skips `position` index entries to find it.
  std::optional<std::pair<std::int64_t, std::string>> key_at(const PeriodKey& period,
                                                             std::int64_t position);
  // Up to `limit` rows listed at or after (e, m), in listing order.
  std::vector<ColdHit> from(const PeriodKey& period, std::int64_t encoded,
                            const std::string& member, std::int64_t limit);
  // Up to `limit` rows listed strictly after (e, m), in listing order.
  std::vector<ColdHit> after(const PeriodKey& period, std::int64_t encoded,
                             const std::string& member, std::int64_t limit);
  // Up to `limit` rows listed strictly before (e, m), nearest first (reverse order).
  std::vector<ColdHit> before(const PeriodKey& period, std::int64_t encoded,
                              const std::string& member, std::int64_t limit);
  // The rows of these members (those that have one), in listing order.
  std::vector<ColdHit> rows_for(const PeriodKey& period, const std::vector<std::string>& members);

 private:
  friend class ColdStore;
  struct Impl;
  explicit ColdReader(std::unique_ptr<Impl> impl);
  // Begins the snapshot on the link's current session (ColdStore::reader).
  static ColdReader open(std::shared_ptr<pg::Link> link);
  // Rows from (e, m) on by one of the prepared keyset statements.
  std::vector<ColdHit> listing(const char* statement, const PeriodKey& period, std::int64_t encoded,
                               const std::string& member, std::int64_t limit);
  std::unique_ptr<Impl> impl_;
};

}  // namespace bk::cold
