// The history store's archive side (see history.h): its statements, the period claims and
// locks, the archive transaction and the periods' status, on a connection of its own
// (libpqxx 6.4 API). Reads: history_reads.cpp; retention: history_retention.cpp.
#include "cold/history.h"

#include <algorithm>
#include <tuple>

#include "cold/closes.h"
#include "cold/history_impl.h"
#include "cold/league.h"
#include "cold/statements.h"
#include "core/error.h"
#include "core/stop_points.h"

namespace bk::cold {
std::string period_lock(const std::string& schema, const PeriodKey& key) {
  return "bk-period/" + schema + "/" + key.board + "/" + key.period + "/" + key.period_id;
}

std::string history_rows_gone(const std::string& q) {
  return "n AS (SELECT period, period_id, sum(c)::bigint AS n, jsonb_object_agg(tier, c)"
         " FILTER (WHERE tier IS NOT NULL) AS by_tier FROM (SELECT period, period_id, tier,"
         " count(*) AS c FROM gone GROUP BY 1, 2, 3) t GROUP BY 1, 2),"
         " u AS (UPDATE " +
         q +
         ".periods p SET members = greatest(p.members - n.n, 0), tiers = CASE WHEN n.by_tier"
         " IS NULL THEN p.tiers ELSE (SELECT jsonb_object_agg(e.key, greatest((e.value #>> '{}')"
         "::bigint - coalesce((n.by_tier ->> e.key)::bigint, 0), 0)) FROM jsonb_each(p.tiers) e)"
         " END FROM n WHERE p.board = $1 AND p.period = n.period AND p.period_id = n.period_id"
         " RETURNING 1)";
}

std::string retention_lock(const std::string& schema) {
  return "bk-retention/" + schema;
}

namespace {

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

// The tier of a merged row as SQL, core/tiers.h's rules in order (first match wins): a CASE
// over the row's competition rank (the same window as the rank column) and its points; a
// percent rule's cut-off is percent_cutoff of the merged rows' count `members` (the reads' own
// function, so the frozen tier is what a read of the final standings said). Names are plain
// (tier_name_problem), quoted all the same; values are integers.
std::string tier_sql(const Tiers& tiers, std::int64_t members) {
  const std::string rank = "rank() OVER (ORDER BY m.encoded) <= ";
  std::string out = "CASE";
  for (const TierRule& rule : tiers) {
    std::string test;
    switch (rule.kind) {
      case TierKind::top:
        test = rank + std::to_string(rule.value);
        break;
      case TierKind::percent:
        test = rank + std::to_string(percent_cutoff(members, rule.value));
        break;
      case TierKind::min_points:
        test = "m.points >= " + std::to_string(rule.value);
        break;
      case TierKind::max_points:
        test = "m.points <= " + std::to_string(rule.value);
        break;
    }
    out += " WHEN " + test + " THEN " + pg::quote_literal(rule.name);
  }
  return out + " END";
}

bool uses_members(const Tiers& tiers) {
  return std::any_of(tiers.begin(), tiers.end(),
                     [](const TierRule& r) { return r.kind == TierKind::percent; });
}

}  // namespace

// Every statement of the history store, prepared once per connection (libpqxx prepares on
// first use, so a schema not migrated yet only fails when a statement runs).
StatementTable history_statements(const std::string& q) {
  StatementTable t;
  const auto add = [&t](std::string name, std::string sql) {
    t.push_back({std::move(name), std::move(sql)});
  };
  const std::string period = " board = $1 AND period = $2 AND period_id = $3";
  add("bk_archive_try_lock", "SELECT pg_try_advisory_lock(hashtextextended($1, 0))");
  add("bk_archive_unlock", "SELECT pg_advisory_unlock(hashtextextended($1, 0))");
  add("bk_archive_try_xact_lock", "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))");
  add("bk_archive_status", "SELECT status FROM " + q + ".periods WHERE" + period);
  add("bk_archive_merge",
      "INSERT INTO " + q + ".history_rows (" + kHistoryColumns + ")" + merged_rows(q, ""));
  // The period's cold rows, from its counted pages (sql/007_cold_pages.sql).
  add("bk_archive_cold_rows",
      "SELECT coalesce(sum(rows), 0)::bigint FROM " + q + ".cold_pages WHERE" + period);
  // The cold rows of hot members (stale: the merge leaves them out), found from the hot side.
  add("bk_archive_cold_stale", "SELECT count(*) FROM " + std::string(kHotTable) + " h JOIN " + q +
                                   ".cold_members c ON c.board = $1 AND c.period = $2 AND" +
                                   " c.period_id = $3 AND c.member = h.member");
  add("bk_archive_next_part", "SELECT nextval(" + pg::quote_literal(q + ".history_part") + ")");
  add("bk_archive_record",
      "INSERT INTO " + q +
          ".periods (board, period, period_id, period_start, period_end, status, members,"
          " hot_members, cold_members, hot_lost, note, history_part, tiers, archived_at)"
          " VALUES ($1, $2, $3, $4, $5, 'archived', $6, $7, $8, $9, $10, $11, $12::jsonb, now())"
          " ON CONFLICT (board, period, period_id) DO UPDATE SET status = 'archived',"
          " members = excluded.members, hot_members = excluded.hot_members,"
          " cold_members = excluded.cold_members, hot_lost = excluded.hot_lost,"
          " archived_at = now(), note = excluded.note,"
          " history_part = excluded.history_part, tiers = excluded.tiers");
  // Cold rows of removed members (tombstones, see hot/moderation.h): void, left out of the
  // merge.
  add("bk_archive_drop_void",
      "DELETE FROM " + q + ".cold_members WHERE" + period + " AND member = ANY($4::text[])");
  add("bk_archive_drop_cold", "WITH p AS (DELETE FROM " + q + ".cold_pages WHERE" + period +
                                  ") DELETE FROM " + q + ".cold_members WHERE" + period);
  add("bk_archive_lost",
      "INSERT INTO " + q +
          ".periods (board, period, period_id, period_start, period_end, status, note,"
          " archived_at) VALUES ($1, $2, $3, $4, $5, 'lost', $6, now())"
          " ON CONFLICT (board, period, period_id) DO UPDATE SET status = 'lost',"
          " note = excluded.note, archived_at = now() WHERE " +
          q + ".periods.status = 'open' RETURNING 1");
  // A large period's rows: only its own table is read (pruned at run time by the key).
  const std::string columns = "rank, position, member, points, achieved_at, name, metadata, tier";
  const std::string selected = "SELECT rank, position, member, points, " + epoch_ms("achieved_at") +
                               ", name, metadata::text, tier";
  // Each side ordered and limited on its own: over the UNION ALL alone the planner sorts the
  // whole period (a large period's table just attached has no statistics: 166 ms for the first
  // 10 of 200,000 rows, bench row 27), with them two index scans of `limit` rows (0.2 ms).
  add("bk_archive_history",
      selected + " FROM ((SELECT " + columns + " FROM " + q + ".history_rows WHERE" + period +
          " AND position > $4 ORDER BY position LIMIT $5) UNION ALL (SELECT " + columns + " FROM " +
          q + ".history_large WHERE" + period +
          " AND position > $4 AND part = (SELECT history_part FROM " + q + ".periods WHERE" +
          period + ") ORDER BY position LIMIT $5)) h ORDER BY position LIMIT $5");
  add("bk_archive_history_of",
      selected + " FROM (SELECT " + columns + " FROM " + q + ".history_rows WHERE" + period +
          " AND member = ANY($4::text[]) UNION ALL SELECT " + columns + " FROM " + q +
          ".history_large WHERE" + period + " AND member = ANY($4::text[]) AND part = " +
          "(SELECT history_part FROM " + q + ".periods WHERE" + period + ")) h ORDER BY position");
  add("bk_archive_period", "SELECT " + epoch_ms("period_start") + ", " + epoch_ms("period_end") +
                               ", " + epoch_ms("pruned_at") + ", members FROM " + q +
                               ".periods WHERE" + period + " AND status = 'archived'");
  // Newest first by id (bytewise, as ids of one kind sort by their start).
  add("bk_archive_periods",
      "SELECT period_id, " + epoch_ms("period_start") + ", " + epoch_ms("period_end") +
          ", members, " + epoch_ms("archived_at") + ", tiers::text FROM " + q +
          ".periods WHERE board = $1 AND period = $2 AND status = 'archived' AND"
          " pruned_at IS NULL AND ($3 = '' OR period_id COLLATE \"C\" < $3)"
          " ORDER BY period_id COLLATE \"C\" DESC LIMIT $4");
  return t;
}

History::History(const std::string& url, std::string schema) : impl_(std::make_unique<Impl>()) {
  // This connection holds the period claims. A claimer that stops between statements of its
  // archive transaction (a COPY in progress counts as busy) loses the transaction and its
  // claim after a minute. Not for the cold store's connection: its read snapshots rightly
  // stay open while an archive streams the hot members.
  const StatementTable statements = history_statements(pg::quote_identifier(schema));
  impl_->link = pg::connect(url, std::move(schema), [statements](pqxx::connection_base& c) {
    pqxx::nontransaction(c).exec("SET idle_in_transaction_session_timeout = '60s'");
    for (const Statement& s : statements) c.prepare(s.name, s.sql);
  });
}
void History::set_large_period_rows(std::int64_t rows) {
  impl_->large_rows = std::max<std::int64_t>(1, rows);
}

History::~History() {
  if (impl_) impl_->rollback();
}
History::History(History&&) noexcept = default;

void History::ensure_partitions(Instant from, Instant to) {
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

bool History::try_lock_period(const PeriodKey& key) {
  Impl& m = *impl_;
  return m.guarded("locking a period", [&] {
    pqxx::nontransaction n(m.connection());
    return n.exec_prepared1("bk_archive_try_lock", period_lock(m.link->schema, key))[0].as<bool>();
  });
}

void History::unlock_period(const PeriodKey& key) {
  Impl& m = *impl_;
  m.guarded("unlocking a period", [&] {
    pqxx::nontransaction n(m.connection());
    n.exec_prepared("bk_archive_unlock", period_lock(m.link->schema, key));
    return 0;
  });
}

std::unique_ptr<History::Transaction> History::begin(const PeriodInfo& period, Claim& claim) {
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
    m.voided = 0;
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

History::Transaction::~Transaction() {
  if (!committed_) history_.impl_->rollback();
}

void History::Transaction::write_hot(const ColdRow& row) {
  Impl& m = *history_.impl_;
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

History::Counts History::Transaction::commit(bool hot_lost,
                                             const std::vector<std::string>& void_members,
                                             const std::string& closes_stream) {
  Impl& m = *history_.impl_;
  const PeriodInfo& p = m.current;
  return m.guarded("committing the archive of " + p.key.period + ":" + p.key.period_id, [&] {
    m.stream->complete();
    m.stream.reset();
    if (!void_members.empty()) {
      pg::ArrayLiteral members;
      for (const std::string& member : void_members) members.text(member);
      m.voided = static_cast<std::int64_t>(m.txn
                                               ->exec_prepared("bk_archive_drop_void", p.key.board,
                                                               p.key.period, p.key.period_id,
                                                               members.done())
                                               .affected_rows());
    }
    Counts counts;
    counts.hot = m.hot_written;
    // Fresh statistics for the join below (a few ms at this size); the sort of a large
    // period stays in memory.
    m.txn->exec0(std::string("ANALYZE ") + kHotTable);
    m.txn->exec0("SET LOCAL work_mem = '64MB'");
    const std::optional<std::int64_t> part = m.own_table_if_large(counts.hot);
    Impl::Merged merged = m.merge(part);
    counts.cold = merged.rows - counts.hot;
    counts.tiers = std::move(merged.tiers);
    m.record_archived(counts, hot_lost, part);
    if (p.league) counts.league = league_close(*m.txn, m.link->q, p.key, *p.league);
    m.txn->exec_prepared("bk_archive_drop_cold", p.key.board, p.key.period, p.key.period_id);
    // Last: its lock serializes the archives' commits (closes.h).
    counts.notice = write_close_notice(*m.txn, m.link->schema,
                                       {p.key, p.start, p.end, counts.hot + counts.cold, hot_lost,
                                        closes_stream, counts.tiers, counts.league});
    stop_point(StopPoint::notice_before_commit);
    m.txn->commit();
    m.txn.reset();
    committed_ = true;
    return counts;
  });
}

std::optional<std::int64_t> History::Impl::own_table_if_large(std::int64_t hot_rows) {
  const PeriodKey& k = current.key;
  // Stale cold rows (of hot members) count too: a threshold, not the history's size.
  cold_rows = txn->exec_prepared1("bk_archive_cold_rows", k.board, k.period, k.period_id)[0]
                  .as<std::int64_t>();
  if (hot_rows + cold_rows < large_rows) return std::nullopt;
  return txn->exec_prepared1("bk_archive_next_part")[0].as<std::int64_t>();
}

// One INSERT ... SELECT of the merged rows into history_rows, or into the large period's own
// table (then indexed and attached). Without tiers, history_rows' statement is the prepared
// one; with them, each row's tier is computed in the same statement and the rows are counted
// per tier after it (cheaper than RETURNING them: a scan of the period's rows, with no second
// window over them).
History::Impl::Merged History::Impl::merge(const std::optional<std::int64_t>& part) {
  const PeriodInfo& p = current;
  const std::string& q = link->q;
  const std::string table = part ? own_table(*part) : q + ".history_rows";
  std::string columns = kHistoryColumns;
  std::string values;
  if (part) {
    columns += ", part";
    values = ", " + std::to_string(*part) + "::bigint";
  }
  if (!p.tiers.empty()) {
    columns += ", tier";
    values += ", " + tier_sql(p.tiers, uses_members(p.tiers) ? merged_members() : 0);
  }
  const pqxx::result r =
      part || !p.tiers.empty()
          ? txn->exec_params("INSERT INTO " + table + " (" + columns + ")" + merged_rows(q, values),
                             p.key.board, p.key.period, p.key.period_id, ts(p.start), ts(p.end))
          : txn->exec_prepared("bk_archive_merge", p.key.board, p.key.period, p.key.period_id,
                               ts(p.start), ts(p.end));
  Merged out{static_cast<std::int64_t>(r.affected_rows()), {}};
  if (!p.tiers.empty()) out.tiers = tier_counts(table);
  if (part) index_and_attach(*part);
  return out;
}

// The rows the merge will write: the hot members written and the cold rows of members that are
// not hot. The counted pages (exact: sql/007_cold_pages.sql) hold every cold row, the void ones
// just deleted included; the stale ones are counted from the hot side (the smaller one, as a
// rule): no scan of the cold rows.
std::int64_t History::Impl::merged_members() {
  const PeriodKey& k = current.key;
  const std::int64_t cold = cold_rows - voided;
  if (cold <= 0) return hot_written;
  const std::int64_t stale =
      txn->exec_prepared1("bk_archive_cold_stale", k.board, k.period, k.period_id)[0]
          .as<std::int64_t>();
  return hot_written + cold - stale;
}

// The period's rows just written to `table`, per tier of its rules (zeros included).
std::vector<TierCount> History::Impl::tier_counts(const std::string& table) {
  const PeriodInfo& p = current;
  std::vector<TierCount> out;
  for (const TierRule& rule : p.tiers) out.push_back({rule.name, 0});
  const pqxx::result r =
      txn->exec_params("SELECT tier, count(*) FROM " + table + " WHERE" + kInPeriod +
                           "AND period_start = $4::timestamptz AND tier IS NOT NULL GROUP BY tier",
                       p.key.board, p.key.period, p.key.period_id, ts(p.start));
  for (const auto& row : r) {
    const std::string name = row[0].as<std::string>();
    for (TierCount& t : out) {
      if (t.tier == name) t.members = row[1].as<std::int64_t>();
    }
  }
  return out;
}

// A large period's table of its own, empty; index_and_attach once filled.
std::string History::Impl::own_table(std::int64_t part) {
  const std::string& q = link->q;
  const std::string id = std::to_string(part);
  const std::string table = q + ".history_large_" + id;
  txn->exec0("CREATE TABLE " + table + " (LIKE " + q + ".history_large, CHECK (part = " + id +
             "))");
  return table;
}

// Indexed once filled (sorted builds), then attached: the CHECK lets ATTACH skip its
// validation scan.
void History::Impl::index_and_attach(std::int64_t part) {
  const std::string& q = link->q;
  const std::string id = std::to_string(part);
  const std::string table = q + ".history_large_" + id;
  txn->exec0("SET LOCAL maintenance_work_mem = '256MB'");
  txn->exec0("CREATE INDEX ON " + table + " (board, period, period_id, position)");
  txn->exec0("CREATE UNIQUE INDEX ON " + table + " (member, board, period, period_id, part)");
  txn->exec0("ALTER TABLE " + q + ".history_large ATTACH PARTITION " + table + " FOR VALUES IN (" +
             id + ")");
}

void History::Impl::record_archived(const History::Counts& counts, bool hot_lost,
                                    const std::optional<std::int64_t>& part) {
  const PeriodInfo& p = current;
  txn->exec_prepared(
      "bk_archive_record", p.key.board, p.key.period, p.key.period_id, ts(p.start), ts(p.end),
      counts.hot + counts.cold, counts.hot, counts.cold, hot_lost,
      hot_lost
          ? std::optional<std::string>("Redis had lost this period's data: archived from the cold "
                                       "tier; points that lived only in Redis are missing")
          : std::nullopt,
      part,
      current.tiers.empty() ? std::nullopt
                            : std::optional<std::string>(tier_counts_json(counts.tiers)));
}

bool History::record_lost(const PeriodInfo& period, const std::string& note) {
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

PeriodStatus History::status(const PeriodKey& key) {
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

}  // namespace bk::cold
