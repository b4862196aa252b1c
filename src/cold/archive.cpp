// The PostgreSQL side of archiving, on a connection of its own (libpqxx 6.4 API).
#include "cold/archive.h"

#include "cold/pg.h"

#include <date/date.h>

#include <tuple>

#include "core/error.h"

namespace bk::cold {
namespace {

std::string ts(Instant t) {
  return format_rfc3339(t);
}

std::string period_lock(const std::string& schema, const PeriodKey& key) {
  return "bk-period/" + schema + "/" + key.board + "/" + key.period + "/" + key.period_id;
}

constexpr const char* kEpochMs = "(extract(epoch FROM {})*1000)::bigint";

std::string epoch_ms(const std::string& column) {
  std::string s = kEpochMs;
  return s.replace(s.find("{}"), 2, column);
}

}  // namespace

struct Archive::Impl {
  std::shared_ptr<pg::Link> link;
  std::unique_ptr<pqxx::work> txn;
  std::unique_ptr<pqxx::stream_to> stream;
  PeriodInfo current;

  pqxx::connection& connection() { return *link->use().conn; }

  void drop() noexcept {
    stream.reset();
    txn.reset();
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

  std::string table(const char* name) const { return link->schema + "." + name; }
};

Archive::Archive(const std::string& url, std::string schema) : impl_(std::make_unique<Impl>()) {
  // This connection holds the period claims. A claimer that stops between statements of its
  // archive transaction (a COPY in progress counts as busy) loses the transaction and its
  // claim after a minute. Not for the cold store's connection: its read snapshots rightly
  // stay open while an archive streams the hot members.
  impl_->link = pg::connect(url, std::move(schema), [](pqxx::connection& c) {
    pqxx::nontransaction(c).exec("SET idle_in_transaction_session_timeout = '60s'");
  });
}
Archive::~Archive() {
  try {
    rollback();
  } catch (...) {
  }
}
Archive::Archive(Archive&&) noexcept = default;

void Archive::ensure_partitions(Instant from, Instant to) {
  Impl& m = *impl_;
  m.guarded("creating history partitions", [&] {
    using namespace date;
    auto month =
        year_month_day{floor<days>(from)}.year() / year_month_day{floor<days>(from)}.month();
    const auto last =
        year_month_day{floor<days>(to)}.year() / year_month_day{floor<days>(to)}.month();
    for (; month <= last; month += months{1}) {
      const auto next = month + months{1};
      char name[64];
      std::snprintf(name, sizeof name, "history_rows_y%04dm%02u", static_cast<int>(month.year()),
                    static_cast<unsigned>(month.month()));
      pqxx::work w(m.connection());
      // One creator at a time per schema; a partition that exists is left alone.
      w.exec_params("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                    "bk-partitions/" + m.link->schema);
      const bool missing =
          w.exec_params1("SELECT to_regclass($1) IS NULL", m.link->schema + "." + name)[0]
              .as<bool>();
      if (missing) {
        // Waits for running archives (it locks history_rows), however long: no lock_timeout
        // here (see pg::Link::use). Months are created ahead, so this is rare.
        w.exec0("SET LOCAL lock_timeout = 0");
        w.exec0("CREATE TABLE " + m.link->schema + "." + name + " PARTITION OF " +
                m.table("history_rows") + " FOR VALUES FROM ('" +
                ts(Instant{sys_days{month / 1}.time_since_epoch()}) + "') TO ('" +
                ts(Instant{sys_days{next / 1}.time_since_epoch()}) + "')");
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
    return n
        .exec_params1("SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
                      period_lock(m.link->schema, key))[0]
        .as<bool>();
  });
}

void Archive::unlock_period(const PeriodKey& key) {
  Impl& m = *impl_;
  m.guarded("unlocking a period", [&] {
    pqxx::nontransaction n(m.connection());
    n.exec_params("SELECT pg_advisory_unlock(hashtextextended($1, 0))",
                  period_lock(m.link->schema, key));
    return 0;
  });
}

Archive::Claim Archive::begin(const PeriodInfo& period) {
  Impl& m = *impl_;
  rollback();
  return m.guarded("claiming " + period.key.period + ":" + period.key.period_id, [&] {
    m.txn = std::make_unique<pqxx::work>(m.connection());
    const std::string lock = period_lock(m.link->schema, period.key);
    if (!m.txn->exec_params1("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", lock)[0]
             .as<bool>()) {
      m.drop();
      return Claim::busy;
    }
    const pqxx::result r =
        m.txn->exec_params("SELECT status FROM " + m.table("periods") +
                               " WHERE board = $1 AND period = $2 AND period_id = $3",
                           period.key.board, period.key.period, period.key.period_id);
    if (!r.empty() && r[0][0].as<std::string>() != "open") {
      m.drop();
      return Claim::done;
    }
    m.current = period;
    m.stream = std::make_unique<pqxx::stream_to>(
        *m.txn, m.table("history_rows"),
        std::vector<std::string>{"board", "period", "period_id", "period_start", "period_end",
                                 "rank", "position", "member", "points", "achieved_at"});
    return Claim::claimed;
  });
}

void Archive::write(const HistoryRow& row) {
  Impl& m = *impl_;
  m.guarded("writing history rows", [&] {
    const PeriodInfo& p = m.current;
    if (row.achieved_at) {
      *m.stream << std::make_tuple(p.key.board, p.key.period, p.key.period_id, ts(p.start),
                                   ts(p.end), row.rank, row.position, row.member, row.points,
                                   ts(*row.achieved_at));
    } else {
      *m.stream << std::make_tuple(p.key.board, p.key.period, p.key.period_id, ts(p.start),
                                   ts(p.end), row.rank, row.position, row.member, row.points,
                                   nullptr);
    }
    return 0;
  });
}

void Archive::commit(std::int64_t hot_members, std::int64_t cold_members, bool hot_lost) {
  Impl& m = *impl_;
  m.guarded("committing the archive of " + m.current.key.period + ":" + m.current.key.period_id,
            [&] {
              m.stream->complete();
              m.stream.reset();
              const PeriodInfo& p = m.current;
              m.txn->exec_params(
                  "INSERT INTO " + m.table("periods") +
                      " (board, period, period_id, period_start, period_end, status, members, "
                      "hot_members, cold_members, hot_lost, note, archived_at)"
                      " VALUES ($1, $2, $3, $4, $5, 'archived', $6, $7, $8, $9, $10, now())"
                      " ON CONFLICT (board, period, period_id) DO UPDATE SET status = 'archived',"
                      " members = excluded.members, hot_members = excluded.hot_members,"
                      " cold_members = excluded.cold_members, hot_lost = excluded.hot_lost,"
                      " archived_at = now(), note = excluded.note",
                  p.key.board, p.key.period, p.key.period_id, ts(p.start), ts(p.end),
                  hot_members + cold_members, hot_members, cold_members, hot_lost,
                  hot_lost ? std::optional<std::string>(
                                 "Redis had lost this period's data: archived from the cold "
                                 "tier; points that lived only in Redis are missing")
                           : std::nullopt);
              m.txn->exec_params("DELETE FROM " + m.table("cold_members") +
                                     " WHERE board = $1 AND period = $2 AND period_id = $3",
                                 p.key.board, p.key.period, p.key.period_id);
              m.txn->commit();
              m.txn.reset();
              return 0;
            });
}

void Archive::rollback() {
  Impl& m = *impl_;
  m.stream.reset();
  if (m.txn) {
    try {
      m.txn->abort();
    } catch (...) {
      // A broken connection aborts by itself.
    }
    m.txn.reset();
  }
}

bool Archive::record_lost(const PeriodInfo& period, const std::string& note) {
  Impl& m = *impl_;
  return m.guarded("recording a lost period", [&] {
    pqxx::work w(m.connection());
    const pqxx::result r = w.exec_params(
        "INSERT INTO " + m.table("periods") +
            " (board, period, period_id, period_start, period_end, status, note, archived_at)"
            " VALUES ($1, $2, $3, $4, $5, 'lost', $6, now())"
            " ON CONFLICT (board, period, period_id) DO UPDATE SET status = 'lost',"
            " note = excluded.note, archived_at = now() WHERE " +
            m.table("periods") +
            ".status = 'open'"
            " RETURNING 1",
        period.key.board, period.key.period, period.key.period_id, ts(period.start), ts(period.end),
        note);
    w.commit();
    return !r.empty();
  });
}

PeriodStatus Archive::status(const PeriodKey& key) {
  Impl& m = *impl_;
  return m.guarded("reading a period's status", [&] {
    pqxx::work w(m.connection());
    const pqxx::result r = w.exec_params("SELECT status FROM " + m.table("periods") +
                                             " WHERE board = $1 AND period = $2 AND period_id = $3",
                                         key.board, key.period, key.period_id);
    if (r.empty()) return PeriodStatus::open;
    const std::string s = r[0][0].as<std::string>();
    return s == "archived" ? PeriodStatus::archived
           : s == "lost"   ? PeriodStatus::lost
                           : PeriodStatus::open;
  });
}

std::vector<HistoryRow> Archive::history(const PeriodKey& key, std::int64_t limit) {
  Impl& m = *impl_;
  return m.guarded("reading history", [&] {
    pqxx::work w(m.connection());
    const pqxx::result r = w.exec_params(
        "SELECT rank, position, member, points, " + epoch_ms("achieved_at") + " FROM " +
            m.table("history_rows") +
            " WHERE board = $1 AND period = $2 AND period_id = $3 ORDER BY position LIMIT $4",
        key.board, key.period, key.period_id, limit);
    std::vector<HistoryRow> out;
    out.reserve(r.size());
    for (const auto& row : r) {
      HistoryRow h{row[0].as<std::int64_t>(), row[1].as<std::int64_t>(), row[2].as<std::string>(),
                   row[3].as<std::int64_t>(), std::nullopt};
      if (!row[4].is_null()) h.achieved_at = from_epoch_ms(row[4].as<std::int64_t>());
      out.push_back(std::move(h));
    }
    return out;
  });
}

std::optional<PeriodInfo> Archive::archived_period(const PeriodKey& key) {
  Impl& m = *impl_;
  return m.guarded("reading a period", [&]() -> std::optional<PeriodInfo> {
    pqxx::work w(m.connection());
    const pqxx::result r = w.exec_params(
        "SELECT " + epoch_ms("period_start") + ", " + epoch_ms("period_end") + " FROM " +
            m.table("periods") +
            " WHERE board = $1 AND period = $2 AND period_id = $3 AND status = 'archived'",
        key.board, key.period, key.period_id);
    if (r.empty()) return std::nullopt;
    return PeriodInfo{key, from_epoch_ms(r[0][0].as<std::int64_t>()),
                      from_epoch_ms(r[0][1].as<std::int64_t>())};
  });
}

}  // namespace bk::cold
