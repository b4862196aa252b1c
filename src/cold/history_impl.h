// The history store's insides shared by its files (internal to bk_cold): its connection and
// open archive transaction, and the SQL helpers they all use.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cold/history.h"
#include "cold/history_partitions.h"
#include "cold/pg.h"

namespace bk::cold {

// The name of a period's lock (pg_advisory_*lock(hashtextextended(name, 0))): a spill holds it
// for its whole run, an archive's claim takes it, a member's removal waits for it (R2).
std::string period_lock(const std::string& schema, const PeriodKey& key);

// SQL common table expressions over `gone` (period, period_id, tier: history rows of board $1
// just deleted): `n` (period, period_id, n: the rows gone per period) and `u`, which takes them
// off the periods' `members` and their tiers' counts (sql/016_period_tiers.sql).
std::string history_rows_gone(const std::string& q);

inline std::string ts(Instant t) {
  return format_rfc3339(t);
}

// The column's instant as epoch milliseconds.
inline std::string epoch_ms(const std::string& column) {
  return "(extract(epoch FROM " + column + ")*1000)::bigint";
}

// The hot members of the period being archived: one per session, emptied by every commit
// (and by a rollback, which takes its rows back).
inline constexpr const char* kHotTable = "pg_temp.bk_archive_hot";

struct History::Impl {
  std::shared_ptr<pg::Link> link;
  std::unique_ptr<pqxx::work> txn;
  std::unique_ptr<pqxx::stream_to> stream;
  PeriodInfo current;
  std::int64_t hot_written = 0;
  std::int64_t voided = 0;     // void cold rows (removed members) the commit deleted
  std::int64_t cold_rows = 0;  // the period's cold rows by its counted pages (own_table_if_large)
  std::int64_t large_rows = kDefaultLargePeriodRows;

  pqxx::connection_base& connection() { return *link->use().conn; }

  void drop() noexcept {
    stream.reset();
    txn.reset();
  }

  // Abandons the open transaction, if any.
  void rollback() noexcept {
    stream.reset();
    if (txn) {
      try {
        txn->abort();
      } catch (...) {
        // A broken connection aborts by itself.
      }
      txn.reset();
    }
  }

  // The steps of Transaction::commit (history.cpp), on the open transaction: the period's
  // own history table when it is large, the merge into it (or into history_rows), the
  // periods row. Each returns what the next needs.
  std::optional<std::int64_t> own_table_if_large(std::int64_t hot_rows);
  struct Merged {
    std::int64_t rows = 0;           // history rows written
    std::vector<TierCount> tiers{};  // per tier of current.tiers (Counts::tiers)
  };
  Merged merge(const std::optional<std::int64_t>& part);
  std::string own_table(std::int64_t part);  // its name, schema-qualified
  void index_and_attach(std::int64_t part);
  std::int64_t merged_members();
  std::vector<TierCount> tier_counts(const std::string& table);
  void record_archived(const History::Counts& counts, bool hot_lost,
                       const std::optional<std::int64_t>& part);

  // pg::guarded, and an open transaction is dropped whatever went wrong.
  template <class F>
  auto guarded(const std::string& doing, F&& f) -> decltype(f()) {
    try {
      return pg::guarded(*link, &link->use(), doing, std::forward<F>(f));
    } catch (...) {
      drop();
      throw;
    }
  }
};

}  // namespace bk::cold
