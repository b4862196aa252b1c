// The history store: closed periods archived into PostgreSQL history (protocol 3, PostgreSQL
// side: one transaction per period claims it, copies its hot members into a temporary table,
// merges them with its cold rows into history in one statement, ranks computed by the
// database, records its status and drops its cold rows), the monthly history partitions,
// history retention (pruning) and the history reads. lifecycle/archive drives it.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "cold/league.h"
#include "core/defaults.h"
#include "core/league.h"
#include "core/tiers.h"
#include "core/time.h"

namespace bk::cold {

struct PeriodInfo {
  PeriodKey key;
  Instant start;
  Instant end;
  std::optional<Instant> pruned_at{};  // archived_period: when history.retention removed its rows
  std::int64_t members = 0;            // archived_period: its history rows when archived
  // The board's tiers, for the archive (begin): each history row's `tier` is computed from
  // them in the merge and frozen there. Empty: the rows' tier is null.
  Tiers tiers{};
  // A league board's rules: the archive's transaction closes its cohorts (cold/league.h).
  std::optional<LeagueRules> league{};
};

// One final row, in listing order.
struct HistoryRow {
  std::int64_t rank = 0;
  std::int64_t position = 0;  // 1-based
  std::string member;
  std::int64_t points = 0;
  std::optional<Instant> achieved_at;
  std::optional<std::string> name{};      // the member's profile when the period was archived
  std::optional<std::string> metadata{};  // (compact JSON)
  std::optional<std::string> tier{};      // frozen at archive time; null without tiers
};

// An archived period whose history rows are kept (not removed by history.retention).
struct ArchivedPeriod {
  std::string period_id;
  Instant start;
  Instant end;
  std::int64_t members = 0;  // its history rows
  Instant archived_at;
  // Its members per tier as a JSON object (sql/016_period_tiers.sql), kept equal to its rows;
  // null when archived without tiers.
  std::optional<std::string> tiers{};
};

enum class PeriodStatus { open, archived, lost };

// The text of the advisory lock (pg_advisory_*lock(hashtextextended(<text>, 0))) that a
// spill of a period holds for its whole run and an archive's claim takes, and that reset,
// drop and member removal hold while they change the period.
std::string period_lock(const std::string& schema, const PeriodKey& key);
// The text of the lock history retention takes per pruning transaction (schema-wide).
std::string retention_lock(const std::string& schema);

class History {
 public:
  enum class Claim {
    claimed,  // this transaction archives the period
    busy,     // another archiver holds it right now: skip it
    done,     // already archived or recorded lost: only the Redis keys may be left
  };

  // Its own connection (the cold rows are read on the ColdStore's while this one writes).
  History(const std::string& url, std::string schema);
  ~History();
  History(History&&) noexcept;

  // The large-period threshold (kDefaultLargePeriodRows until set; at least 1). A period is
  // large when the hot members written plus ALL its cold rows, stale ones of hot members
  // included, reach it (a threshold counted before the merge, not the history's final size):
  // its rows then go into a table of their own (sql/006_history_large.sql), indexed once
  // filled. The CLI sets it from `history.large_period_rows` for every History it opens
  // (cli/context.cpp); tests and benchmarks set small values.
  void set_large_period_rows(std::int64_t rows);

  // Creates the monthly history partitions covering [from, to) if missing. Idempotent and
  // safe from several processes.
  void ensure_partitions(Instant from, Instant to);

  // The per-period lock that a spill holds for its whole run (a session lock on this
  // connection). The archive's claim takes the same lock, so a spill and an archive of
  // one period, or two spills, never run at once. False: someone else holds it; skip.
  bool try_lock_period(const PeriodKey& key);
  void unlock_period(const PeriodKey& key);

  struct Counts {
    std::int64_t hot = 0;     // history rows from the hot members
    std::int64_t cold = 0;    // history rows from cold rows (of members that were not hot)
    std::int64_t notice = 0;  // the seq of the period's close notice (cold/closes.h)
    // Per tier of PeriodInfo::tiers, in the rules' order (zeros included): the members the
    // merge put in it, counted from the rows it wrote. Empty without tiers. Members in no
    // tier: hot + cold minus their sum.
    std::vector<TierCount> tiers{};
    // A league period: per division, the members promoted, stayed and relegated (JSON; "" else).
    std::string league{};
  };

  // The archive transaction of one claimed period (libpqxx's pattern): it rolls back when
  // destroyed unless committed, so nothing of the period is visible until commit() returns.
  // One at a time per History; the History must outlive it.
  class Transaction {
   public:
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    // Streams one of the period's hot members (COPY into a temporary table), in any
    // order; each member once. Only these rows travel: the cold ones are in the database.
    void write_hot(const ColdRow& row);
    // Ends the COPY and writes the period's history in one statement: the hot members and
    // the cold rows of members that are not hot (a hot member's cold row is stale: the hot
    // value wins), ranked by the database in listing order (encoded ascending, then member
    // bytes; competition ranks on equal encoded values). Then the periods row (archived,
    // counts, whether the hot part was lost, now()), deletes the period's cold rows, writes
    // the period's close notice for `closes_stream` (cold/closes.h), commits. With tiers
    // (PeriodInfo::tiers) each row's tier is computed in the same statement from its rank,
    // its points and the merged member count (tier_sql), and the counts per tier come back
    // with it.
    // `void_members`: removed members (tombstones) whose cold rows are void: deleted first,
    // so the history leaves them out.
    Counts commit(bool hot_lost, const std::vector<std::string>& void_members,
                  const std::string& closes_stream);

   private:
    friend class History;
    explicit Transaction(History& history) : history_(history) {}
    History& history_;
    bool committed_ = false;
  };

  // Opens the period's archive transaction and claims it (the period lock, as a
  // transaction lock, then the periods row): the transaction when `claimed`, else nullptr
  // (busy: another archiver holds it right now; done: already archived or recorded lost).
  std::unique_ptr<Transaction> begin(const PeriodInfo& period, Claim& claim);

  // History retention. `due(period name, period end)`: whether an archived period's rows
  // are past their retention. Each month partition (periods starting in that month) whose
  // archived periods are all due is dropped whole; otherwise the due periods' rows are
  // deleted. A large period's table is dropped whole. Every pruned period keeps its periods row,
  // with pruned_at set. One month per transaction, at most `max_periods` periods a call (the rest:
  // next call). With `dry_run` nothing changes and the counts say what would go. Two callers at
  // once: one prunes, the other finds it busy and returns nothing.
  struct Pruned {
    std::int64_t periods = 0;     // archived periods whose rows were removed
    std::int64_t rows = 0;        // history rows removed (their periods' member counts)
    std::int64_t partitions = 0;  // month partitions and large periods' tables dropped whole
    bool busy = false;            // another process was pruning this schema
  };
  using DueFn = std::function<bool(const std::string& period, Instant period_end)>;
  Pruned prune_history(const DueFn& due, Instant ended_before, bool dry_run,
                       std::int64_t max_periods = 10000);

  // Records a period whose hot key vanished before it was archived. Never overrides an
  // archived period. True when the row now says lost because of this call.
  bool record_lost(const PeriodInfo& period, const std::string& note);
  PeriodStatus status(const PeriodKey& key);

  // An archived league period's cohort (cold/league.h): by its id, or the one `member` was in
  // (cohort empty); empty when there is none.
  std::vector<LeagueResult> league_cohort(const PeriodKey& key, const std::string& cohort,
                                          const std::string& member);
  // The archived rows of a period in listing order (the history view), up to `limit`.
  std::vector<HistoryRow> history(const PeriodKey& key, std::int64_t limit);
  // The same, handed over a page at a time (at most 10,000 rows, each page found through
  // the listing index after the last one: memory and the cost of a page stay flat however
  // many rows are asked for).
  void history_pages(const PeriodKey& key, std::int64_t limit,
                     const std::function<void(const std::vector<HistoryRow>&)>& page);
  // One page: up to `limit` rows at positions after `after` (0: from the first), found
  // through the listing index (the cost does not grow with the depth).
  std::vector<HistoryRow> history_page(const PeriodKey& key, std::int64_t after,
                                       std::int64_t limit);
  // The rows of these members (those that have one), in listing order.
  std::vector<HistoryRow> history_of(const PeriodKey& key, const std::vector<std::string>& members);
  std::optional<PeriodInfo> archived_period(const PeriodKey& key);
  // The archived periods of one board and period kind whose rows are kept (neither pruned
  // nor lost), newest first: up to `limit` with ids before `before` ("": from the newest).
  // Ids of one kind sort as their periods begin (fixed-width fields, largest unit first).
  std::vector<ArchivedPeriod> archived_periods(const std::string& board, const std::string& period,
                                               const std::string& before, std::int64_t limit);

 private:
  struct Impl;
  struct Pruning;  // the steps of prune_history (history_retention.cpp)
  std::unique_ptr<Impl> impl_;
};

}  // namespace bk::cold
