// The PostgreSQL side of archiving, on a connection of its own (libpqxx 6.4 API).
#include "cold/archive.h"

#include "cold/pg.h"

#include <date/date.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/error.h"
#include "core/profile.h"

namespace bk::cold {
namespace {

std::string ts(Instant t) {
  return format_rfc3339(t);
}

std::string period_lock(const std::string& schema, const PeriodKey& key) {
  return "bk-period/" + schema + "/" + key.board + "/" + key.period + "/" + key.period_id;
}

std::string epoch_ms(const std::string& column) {
  return "(extract(epoch FROM " + column + ")*1000)::bigint";
}

// The history partition of one month (period starts in [from, to)).
struct Month {
  std::string partition;  // "<schema>.history_rows_yYYYYmMM", the schema quoted
  Instant from, to;
};

Month month_of(const std::string& q, date::year_month month) {
  using namespace date;
  char name[64];
  std::snprintf(name, sizeof name, "history_rows_y%04dm%02u", static_cast<int>(month.year()),
                static_cast<unsigned>(month.month()));
  return {q + "." + name, Instant{sys_days{month / 1}.time_since_epoch()},
          Instant{sys_days{(month + months{1}) / 1}.time_since_epoch()}};
}

date::year_month month_containing(Instant t) {
  const date::year_month_day ymd{date::floor<date::days>(t)};
  return ymd.year() / ymd.month();
}

// The hot members of the period being archived: one per session, emptied by every commit
// (and by a rollback, which takes its rows back).
constexpr const char* kHotTable = "pg_temp.bk_archive_hot";

constexpr const char* kHistoryColumns =
    "board, period, period_id, period_start, period_end, rank, position, member, points,"
    " achieved_at, name, metadata";

// The period's history rows ($1-$5: board, period, period_id, start, end; then `extra`, more
// columns): the hot members and the cold rows of members that are not hot, each with the
// member's profile (tick copies the profiles Redis holds to PostgreSQL first). Listing order is
// encoded ascending, then member bytes (both member columns are COLLATE "C"); rank is the
// competition rank over equal encoded values.
std::string merged_rows(const std::string& q, const std::string& extra) {
  return std::string(
             " SELECT $1, $2, $3, $4::timestamptz, $5::timestamptz,"
             " rank() OVER (ORDER BY m.encoded),"
             " row_number() OVER (ORDER BY m.encoded, m.member COLLATE \"C\"),"
             " m.member, m.points, m.achieved_at, p.name, p.metadata") +
         extra + " FROM (SELECT member, encoded, points, achieved_at FROM " + kHotTable +
         " UNION ALL SELECT c.member, c.encoded, c.points, c.achieved_at FROM " + q +
         ".cold_members c WHERE c.board = $1 AND c.period = $2 AND c.period_id = $3"
         " AND NOT EXISTS (SELECT 1 FROM " +
         kHotTable + " h WHERE h.member = c.member)) m LEFT JOIN " + q +
         ".profiles p ON p.board = $1 AND p.member = m.member";
}

// Every statement of the archive, prepared once per connection (libpqxx prepares on first
// use, so a schema not migrated yet only fails when a statement runs). `q`: the quoted schema.
void prepare_statements(pqxx::connection& c, const std::string& q) {
  const std::string period = " board = $1 AND period = $2 AND period_id = $3";
  c.prepare("bk_archive_try_lock", "SELECT pg_try_advisory_lock(hashtextextended($1, 0))");
  c.prepare("bk_archive_unlock", "SELECT pg_advisory_unlock(hashtextextended($1, 0))");
  c.prepare("bk_archive_try_xact_lock",
            "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))");
  c.prepare("bk_archive_status", "SELECT status FROM " + q + ".periods WHERE" + period);
  c.prepare("bk_archive_merge",
            "INSERT INTO " + q + ".history_rows (" + kHistoryColumns + ")" + merged_rows(q, ""));
  // The period's cold rows, from its counted pages (sql/007_cold_pages.sql).
  c.prepare("bk_archive_cold_rows",
            "SELECT coalesce(sum(rows), 0)::bigint FROM " + q + ".cold_pages WHERE" + period);
  c.prepare("bk_archive_next_part", "SELECT nextval(" + c.quote(q + ".history_part") + ")");
  c.prepare("bk_archive_record",
            "INSERT INTO " + q +
                ".periods (board, period, period_id, period_start, period_end, status, members,"
                " hot_members, cold_members, hot_lost, note, history_part, archived_at)"
                " VALUES ($1, $2, $3, $4, $5, 'archived', $6, $7, $8, $9, $10, $11, now())"
                " ON CONFLICT (board, period, period_id) DO UPDATE SET status = 'archived',"
                " members = excluded.members, hot_members = excluded.hot_members,"
                " cold_members = excluded.cold_members, hot_lost = excluded.hot_lost,"
                " archived_at = now(), note = excluded.note,"
                " history_part = excluded.history_part");
  c.prepare("bk_archive_drop_cold", "WITH p AS (DELETE FROM " + q + ".cold_pages WHERE" + period +
                                        ") DELETE FROM " + q + ".cold_members WHERE" + period);
  c.prepare("bk_archive_lost",
            "INSERT INTO " + q +
                ".periods (board, period, period_id, period_start, period_end, status, note,"
                " archived_at) VALUES ($1, $2, $3, $4, $5, 'lost', $6, now())"
                " ON CONFLICT (board, period, period_id) DO UPDATE SET status = 'lost',"
                " note = excluded.note, archived_at = now() WHERE " +
                q + ".periods.status = 'open' RETURNING 1");
  // A large period's rows: only its own table is read (pruned at run time by the key).
  const std::string columns = "rank, position, member, points, achieved_at, name, metadata";
  const std::string selected = "SELECT rank, position, member, points, " + epoch_ms("achieved_at") +
                               ", name, metadata::text";
  c.prepare("bk_archive_history",
            selected + " FROM (SELECT " + columns + " FROM " + q + ".history_rows WHERE" + period +
                " AND position > $4 UNION ALL SELECT " + columns + " FROM " + q +
                ".history_large WHERE" + period + " AND position > $4 AND part = (SELECT " +
                "history_part FROM " + q + ".periods WHERE" + period +
                ")) h ORDER BY position LIMIT $5");
  c.prepare("bk_archive_history_of",
            selected + " FROM (SELECT " + columns + " FROM " + q + ".history_rows WHERE" + period +
                " AND member = ANY($4::text[]) UNION ALL SELECT " + columns + " FROM " + q +
                ".history_large WHERE" + period +
                " AND member = ANY($4::text[]) AND part = " + "(SELECT history_part FROM " + q +
                ".periods WHERE" + period + ")) h ORDER BY position");
  c.prepare("bk_archive_period", "SELECT " + epoch_ms("period_start") + ", " +
                                     epoch_ms("period_end") + ", " + epoch_ms("pruned_at") +
                                     ", members FROM " + q + ".periods WHERE" + period +
                                     " AND status = 'archived'");
  // Newest first by id (bytewise, as ids of one kind sort by their start).
  c.prepare("bk_archive_periods",
            "SELECT period_id, " + epoch_ms("period_start") + ", " + epoch_ms("period_end") +
                ", members, " + epoch_ms("archived_at") + " FROM " + q +
                ".periods WHERE board = $1 AND period = $2 AND status = 'archived' AND"
                " pruned_at IS NULL AND ($3 = '' OR period_id COLLATE \"C\" < $3)"
                " ORDER BY period_id COLLATE \"C\" DESC LIMIT $4");
}

}  // namespace

struct Archive::Impl {
  std::shared_ptr<pg::Link> link;
  std::unique_ptr<pqxx::work> txn;
  std::unique_ptr<pqxx::stream_to> stream;
  PeriodInfo current;
  std::int64_t hot_written = 0;
  std::int64_t large_rows = Archive::kLargePeriodRows;

  pqxx::connection& connection() { return *link->use().conn; }

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

Archive::Archive(const std::string& url, std::string schema) : impl_(std::make_unique<Impl>()) {
  // This connection holds the period claims. A claimer that stops between statements of its
  // archive transaction (a COPY in progress counts as busy) loses the transaction and its
  // claim after a minute. Not for the cold store's connection: its read snapshots rightly
  // stay open while an archive streams the hot members.
  const std::string q = pg::quote_identifier(schema);
  impl_->link = pg::connect(url, std::move(schema), [q](pqxx::connection& c) {
    pqxx::nontransaction(c).exec("SET idle_in_transaction_session_timeout = '60s'");
    prepare_statements(c, q);
  });
}
void Archive::set_large_period_rows(std::int64_t rows) {
  impl_->large_rows = std::max<std::int64_t>(1, rows);
}

Archive::~Archive() {
  if (impl_) impl_->rollback();
}
Archive::Archive(Archive&&) noexcept = default;

void Archive::ensure_partitions(Instant from, Instant to) {
  Impl& m = *impl_;
  m.guarded("creating history partitions", [&] {
    const date::year_month last = month_containing(to);
    for (date::year_month month = month_containing(from); month <= last; month += date::months{1}) {
      const Month mo = month_of(m.link->q, month);
      pqxx::work w(m.connection());
      // One creator at a time per schema; a partition that exists is left alone.
      w.exec_params("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                    "bk-partitions/" + m.link->schema);
      const bool missing =
          w.exec_params1("SELECT to_regclass($1) IS NULL", mo.partition)[0].as<bool>();
      if (missing) {
        // Waits for running archives (it locks history_rows), however long: no lock_timeout
        // here (see pg::Link::use). Months are created ahead, so this is rare.
        w.exec0("SET LOCAL lock_timeout = 0");
        w.exec0("CREATE TABLE " + mo.partition + " PARTITION OF " + m.link->q +
                ".history_rows FOR VALUES FROM (" + w.quote(ts(mo.from)) + ") TO (" +
                w.quote(ts(mo.to)) + ")");
      }
      w.commit();
    }
    return 0;
  });
}

bool Archive::try_lock_period(const PeriodKey& key) {
  Impl& m = *impl_;
  return m.guarded("locking a period", [&] {
    pqxx::nontransaction n(m.connection());
    return n.exec_prepared1("bk_archive_try_lock", period_lock(m.link->schema, key))[0].as<bool>();
  });
}

void Archive::unlock_period(const PeriodKey& key) {
  Impl& m = *impl_;
  m.guarded("unlocking a period", [&] {
    pqxx::nontransaction n(m.connection());
    n.exec_prepared("bk_archive_unlock", period_lock(m.link->schema, key));
    return 0;
  });
}

std::unique_ptr<Archive::Transaction> Archive::begin(const PeriodInfo& period, Claim& claim) {
  Impl& m = *impl_;
  m.rollback();
  claim = m.guarded("claiming " + period.key.period + ":" + period.key.period_id, [&] {
    m.txn = std::make_unique<pqxx::work>(m.connection());
    const std::string lock = period_lock(m.link->schema, period.key);
    if (!m.txn->exec_prepared1("bk_archive_try_xact_lock", lock)[0].as<bool>()) {
      m.drop();
      return Claim::busy;
    }
    const pqxx::result r = m.txn->exec_prepared("bk_archive_status", period.key.board,
                                                period.key.period, period.key.period_id);
    if (!r.empty() && r[0][0].as<std::string>() != "open") {
      m.drop();
      return Claim::done;
    }
    m.current = period;
    m.hot_written = 0;
    // Lives as long as the session; every commit empties it.
    m.txn->exec0(std::string("CREATE TEMP TABLE IF NOT EXISTS ") + kHotTable +
                 " (member text COLLATE \"C\" NOT NULL, encoded bigint NOT NULL,"
                 " points bigint NOT NULL, achieved_at timestamptz) ON COMMIT DELETE ROWS");
    m.stream = std::make_unique<pqxx::stream_to>(
        *m.txn, kHotTable, std::vector<std::string>{"member", "encoded", "points", "achieved_at"});
    return Claim::claimed;
  });
  if (claim != Claim::claimed) return nullptr;
  return std::unique_ptr<Transaction>(new Transaction(*this));
}

Archive::Transaction::~Transaction() {
  if (!committed_) archive_.impl_->rollback();
}

void Archive::Transaction::write_hot(const ColdRow& row) {
  Impl& m = *archive_.impl_;
  m.guarded("writing the hot members", [&] {
    if (row.achieved_at) {
      *m.stream << std::make_tuple(row.member, row.encoded, row.points, ts(*row.achieved_at));
    } else {
      *m.stream << std::make_tuple(row.member, row.encoded, row.points, nullptr);
    }
    ++m.hot_written;
    return 0;
  });
}

Archive::Counts Archive::Transaction::commit(bool hot_lost) {
  Impl& m = *archive_.impl_;
  const PeriodInfo& p = m.current;
  return m.guarded("committing the archive of " + p.key.period + ":" + p.key.period_id, [&] {
    m.stream->complete();
    m.stream.reset();
    Counts counts;
    counts.hot = m.hot_written;
    // Fresh statistics for the join below (a few ms at this size); the sort of a large
    // period stays in memory.
    m.txn->exec0(std::string("ANALYZE ") + kHotTable);
    m.txn->exec0("SET LOCAL work_mem = '64MB'");
    std::optional<std::int64_t> part;  // a large period's own table
    // Stale cold rows (of hot members) count too: a threshold, not the history's size.
    const std::int64_t cold_rows =
        m.txn->exec_prepared1("bk_archive_cold_rows", p.key.board, p.key.period, p.key.period_id)[0]
            .as<std::int64_t>();
    if (counts.hot + cold_rows >= m.large_rows) {
      part = m.txn->exec_prepared1("bk_archive_next_part")[0].as<std::int64_t>();
    }
    pqxx::result merged;
    if (!part) {
      merged = m.txn->exec_prepared("bk_archive_merge", p.key.board, p.key.period, p.key.period_id,
                                    ts(p.start), ts(p.end));
    } else {
      // A table of its own, filled, then indexed (sorted builds), then attached: the
      // CHECK lets ATTACH skip its validation scan.
      const std::string& q = m.link->q;
      const std::string id = std::to_string(*part);
      const std::string table = q + ".history_large_" + id;
      m.txn->exec0("CREATE TABLE " + table + " (LIKE " + q + ".history_large, CHECK (part = " + id +
                   "))");
      merged = m.txn->exec_params("INSERT INTO " + table + " (" + kHistoryColumns + ", part)" +
                                      merged_rows(q, ", $6::bigint"),
                                  p.key.board, p.key.period, p.key.period_id, ts(p.start),
                                  ts(p.end), *part);
      m.txn->exec0("SET LOCAL maintenance_work_mem = '256MB'");
      m.txn->exec0("CREATE INDEX ON " + table + " (board, period, period_id, position)");
      m.txn->exec0("CREATE UNIQUE INDEX ON " + table + " (member, board, period, period_id, part)");
      m.txn->exec0("ALTER TABLE " + q + ".history_large ATTACH PARTITION " + table +
                   " FOR VALUES IN (" + id + ")");
    }
    counts.cold = static_cast<std::int64_t>(merged.affected_rows()) - counts.hot;
    m.txn->exec_prepared("bk_archive_record", p.key.board, p.key.period, p.key.period_id,
                         ts(p.start), ts(p.end), counts.hot + counts.cold, counts.hot, counts.cold,
                         hot_lost,
                         hot_lost ? std::optional<std::string>(
                                        "Redis had lost this period's data: archived from the cold "
                                        "tier; points that lived only in Redis are missing")
                                  : std::nullopt,
                         part);
    m.txn->exec_prepared("bk_archive_drop_cold", p.key.board, p.key.period, p.key.period_id);
    m.txn->commit();
    m.txn.reset();
    committed_ = true;
    return counts;
  });
}

namespace {

struct Candidate {
  std::string board, period, period_id, start;  // start: as PostgreSQL gave it
  Instant end;
  std::int64_t members = 0;
  std::optional<std::int64_t> part;  // a large period: its own table of history_large
};

}  // namespace

Archive::Pruned Archive::prune_history(const DueFn& due, Instant ended_before, bool dry_run,
                                       std::int64_t max_periods) {
  Impl& m = *impl_;
  const std::string q = m.link->q;
  const std::string lock = "bk-retention/" + m.link->schema;
  const std::string columns = "board, period, period_id, period_start::text, " +
                              epoch_ms("period_start") + ", " + epoch_ms("period_end") +
                              ", members, history_part";
  const std::string unpruned = " status = 'archived' AND pruned_at IS NULL";
  auto candidates_of = [&](const pqxx::result& r) {
    std::vector<std::pair<Instant, Candidate>> out;  // (start, period)
    for (const auto& row : r) {
      Candidate c{row[0].as<std::string>(),
                  row[1].as<std::string>(),
                  row[2].as<std::string>(),
                  row[3].as<std::string>(),
                  from_epoch_ms(row[5].as<std::int64_t>()),
                  row[6].as<std::int64_t>(),
                  std::nullopt};
      if (!row[7].is_null()) c.part = row[7].as<std::int64_t>();
      out.emplace_back(from_epoch_ms(row[4].as<std::int64_t>()), std::move(c));
    }
    return out;
  };
  Pruned pruned;
  // The due periods, by the month their rows are partitioned under.
  std::map<date::year_month, std::vector<std::pair<Instant, Candidate>>> by_month;
  m.guarded("finding history past its retention", [&] {
    pqxx::work w(m.connection());
    const pqxx::result r =
        w.exec_params("SELECT " + columns + " FROM " + q + ".periods WHERE" + unpruned +
                          " AND period_end < $1 ORDER BY period_start LIMIT $2",
                      ts(ended_before), max_periods);
    for (auto& [start, c] : candidates_of(r)) {
      if (!due(c.period, c.end)) continue;
      by_month[month_containing(start)].emplace_back(start, std::move(c));
    }
    return 0;
  });
  // The statements, once (the loop below runs them per month and per period).
  const std::string in_month_sql = "SELECT " + columns + " FROM " + q + ".periods WHERE" +
                                   unpruned + " AND period_start >= $1 AND period_start < $2";
  const std::string mark_month_sql = "UPDATE " + q + ".periods SET pruned_at = now() WHERE" +
                                     unpruned + " AND period_start >= $1 AND period_start < $2";
  const std::string delete_sql = "DELETE FROM " + q +
                                 ".history_rows WHERE board = $1 AND period = $2 AND"
                                 " period_id = $3 AND period_start = $4::timestamptz";
  const std::string mark_sql = "UPDATE " + q +
                               ".periods SET pruned_at = now() WHERE board = $1 AND period = $2"
                               " AND period_id = $3 AND" +
                               unpruned;
  for (auto& entry : by_month) {
    const Month month = month_of(q, entry.first);
    auto& periods = entry.second;
    if (dry_run) {
      pruned.periods += static_cast<std::int64_t>(periods.size());
      for (const auto& p : periods) pruned.rows += p.second.members;
      continue;
    }
    const bool done = m.guarded("pruning history (" + month.partition + ")", [&] {
      pqxx::work w(m.connection());
      if (!w.exec_params1("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", lock)[0]
               .as<bool>()) {
        pruned.busy = true;
        return false;
      }
      // Waits for archives writing into the month (and readers) at most this long; the next
      // tick tries again.
      w.exec0("SET LOCAL lock_timeout = '10s'");
      bool whole =
          w.exec_params1("SELECT to_regclass($1) IS NOT NULL", month.partition)[0].as<bool>();
      // A large period's rows are its own table, dropped whole.
      auto drop_large = [&](const Candidate& c) {
        w.exec0("DROP TABLE IF EXISTS " + q + ".history_large_" + std::to_string(*c.part));
        ++pruned.partitions;
      };
      if (whole) {
        w.exec0("LOCK TABLE " + month.partition + " IN ACCESS EXCLUSIVE MODE");
        // Every archived period whose rows live in this month must be due, whatever its name.
        const pqxx::result all = w.exec_params(in_month_sql, ts(month.from), ts(month.to));
        std::vector<std::pair<Instant, Candidate>> in_month = candidates_of(all);
        whole = std::all_of(in_month.begin(), in_month.end(),
                            [&](const auto& p) { return due(p.second.period, p.second.end); });
        if (whole) {
          w.exec0("DROP TABLE " + month.partition);
          ++pruned.partitions;
          for (const auto& p : in_month) {
            if (p.second.part) drop_large(p.second);
          }
          w.exec_params(mark_month_sql, ts(month.from), ts(month.to));
          periods = std::move(in_month);
          for (const auto& p : periods) pruned.rows += p.second.members;
        }
      }
      if (!whole) {
        for (const auto& [start, c] : periods) {
          if (c.part) {
            drop_large(c);
            pruned.rows += c.members;
          } else {
            const pqxx::result d =
                w.exec_params(delete_sql, c.board, c.period, c.period_id, c.start);
            pruned.rows += static_cast<std::int64_t>(d.affected_rows());
          }
          w.exec_params(mark_sql, c.board, c.period, c.period_id);
        }
      }
      w.commit();
      pruned.periods += static_cast<std::int64_t>(periods.size());
      return true;
    });
    if (!done) break;
  }
  return pruned;
}

bool Archive::record_lost(const PeriodInfo& period, const std::string& note) {
  Impl& m = *impl_;
  return m.guarded("recording a lost period", [&] {
    pqxx::work w(m.connection());
    const pqxx::result r =
        w.exec_prepared("bk_archive_lost", period.key.board, period.key.period,
                        period.key.period_id, ts(period.start), ts(period.end), note);
    w.commit();
    return !r.empty();
  });
}

PeriodStatus Archive::status(const PeriodKey& key) {
  Impl& m = *impl_;
  return m.guarded("reading a period's status", [&] {
    pqxx::work w(m.connection());
    const pqxx::result r =
        w.exec_prepared("bk_archive_status", key.board, key.period, key.period_id);
    if (r.empty()) return PeriodStatus::open;
    const std::string s = r[0][0].as<std::string>();
    return s == "archived" ? PeriodStatus::archived
           : s == "lost"   ? PeriodStatus::lost
                           : PeriodStatus::open;
  });
}

std::vector<HistoryRow> Archive::history(const PeriodKey& key, std::int64_t limit) {
  std::vector<HistoryRow> out;
  history_pages(key, limit, [&out](const std::vector<HistoryRow>& page) {
    out.insert(out.end(), page.begin(), page.end());
  });
  return out;
}

namespace {

std::vector<HistoryRow> history_rows(const pqxx::result& r) {
  std::vector<HistoryRow> rows;
  rows.reserve(r.size());
  for (const auto& row : r) {
    HistoryRow h{row[0].as<std::int64_t>(), row[1].as<std::int64_t>(), row[2].as<std::string>(),
                 row[3].as<std::int64_t>(), std::nullopt};
    if (!row[4].is_null()) h.achieved_at = from_epoch_ms(row[4].as<std::int64_t>());
    if (!row[5].is_null()) h.name = row[5].as<std::string>();
    // jsonb's text reorders and spaces the object: the same text as Redis keeps instead.
    if (!row[6].is_null()) h.metadata = compact_metadata(row[6].as<std::string>());
    rows.push_back(std::move(h));
  }
  return rows;
}

}  // namespace

std::vector<HistoryRow> Archive::history_page(const PeriodKey& key, std::int64_t after,
                                              std::int64_t limit) {
  Impl& m = *impl_;
  return m.guarded("reading history", [&] {
    pqxx::work w(m.connection());
    return history_rows(
        w.exec_prepared("bk_archive_history", key.board, key.period, key.period_id, after, limit));
  });
}

std::vector<HistoryRow> Archive::history_of(const PeriodKey& key,
                                            const std::vector<std::string>& members) {
  if (members.empty()) return {};
  pg::ArrayLiteral list;
  for (const std::string& member : members) list.text(member);
  Impl& m = *impl_;
  return m.guarded("reading history", [&] {
    pqxx::work w(m.connection());
    return history_rows(w.exec_prepared("bk_archive_history_of", key.board, key.period,
                                        key.period_id, list.done()));
  });
}

void Archive::history_pages(const PeriodKey& key, std::int64_t limit,
                            const std::function<void(const std::vector<HistoryRow>&)>& page) {
  constexpr std::int64_t kPage = 10000;
  for (std::int64_t done = 0, after = 0; done < limit;) {
    const std::vector<HistoryRow> rows = history_page(key, after, std::min(kPage, limit - done));
    if (rows.empty()) return;
    page(rows);
    done += static_cast<std::int64_t>(rows.size());
    after = rows.back().position;
  }
}

std::optional<PeriodInfo> Archive::archived_period(const PeriodKey& key) {
  Impl& m = *impl_;
  return m.guarded("reading a period", [&]() -> std::optional<PeriodInfo> {
    pqxx::work w(m.connection());
    const pqxx::result r =
        w.exec_prepared("bk_archive_period", key.board, key.period, key.period_id);
    if (r.empty()) return std::nullopt;
    PeriodInfo info{key, from_epoch_ms(r[0][0].as<std::int64_t>()),
                    from_epoch_ms(r[0][1].as<std::int64_t>())};
    if (!r[0][2].is_null()) info.pruned_at = from_epoch_ms(r[0][2].as<std::int64_t>());
    info.members = r[0][3].as<std::int64_t>();
    return info;
  });
}

std::vector<ArchivedPeriod> Archive::archived_periods(const std::string& board,
                                                      const std::string& period,
                                                      const std::string& before,
                                                      std::int64_t limit) {
  Impl& m = *impl_;
  return m.guarded("listing archived periods", [&] {
    pqxx::work w(m.connection());
    std::vector<ArchivedPeriod> out;
    for (const auto& r : w.exec_prepared("bk_archive_periods", board, period, before, limit)) {
      out.push_back({r[0].as<std::string>(), from_epoch_ms(r[1].as<std::int64_t>()),
                     from_epoch_ms(r[2].as<std::int64_t>()), r[3].as<std::int64_t>(),
                     from_epoch_ms(r[4].as<std::int64_t>())});
    }
    return out;
  });
}

}  // namespace bk::cold
