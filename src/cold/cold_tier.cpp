// The cold tier's rows (see cold_tier.h): a spill is one transaction under a fresh version,
// rows travel as PostgreSQL array literals (one statement per chunk) or by COPY, and a
// rehydration look-up is one round trip.
#include "cold/cold_tier.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "cold/pages.h"
#include "cold/pg.h"
#include "cold/rows.h"
#include "cold/statements.h"

namespace bk::cold {

using pg::ArrayLiteral;
using pg::guarded;
using pg::Link;
using pg::Session;

namespace {

// Rows per INSERT statement inside one upsert transaction (bounds the parameter size).
constexpr std::size_t kRowsPerStatement = 5000;

}  // namespace

StatementTable spill_statements(const std::string& q) {
  const std::string table = q + ".cold_members";
  const std::string pages = q + ".cold_pages";
  const std::string& period = kInPeriod;
  return {
      // A fresh version, and the period's pages for this transaction: spills of one period
      // take turns on them ($1: the lock's name).
      {"bk_cold_next_version", "SELECT nextval(" + pg::quote_literal(q + ".cold_version") +
                                   "), pg_advisory_xact_lock(hashtextextended($1, 0))"},
      {"bk_cold_upsert",
       "INSERT INTO " + table +
           " AS c (board, period, period_id, member, encoded, points, achieved_at, version)"
           " SELECT $1, $2, $3, u.member, u.encoded, u.points,"
           " to_timestamp(u.achieved_ms / 1000.0), $8"
           " FROM unnest($4::text[], $5::bigint[], $6::bigint[], $7::bigint[])"
           " AS u(member, encoded, points, achieved_ms)"
           " ON CONFLICT (board, period, period_id, member) DO UPDATE SET"
           " encoded = EXCLUDED.encoded, points = EXCLUDED.points,"
           " achieved_at = EXCLUDED.achieved_at, version = EXCLUDED.version,"
           " spilled_at = now()"},
      {"bk_cold_old_keys",
       "SELECT encoded, member FROM " + table + " WHERE" + period + "AND member = ANY($4::text[])"},
      {"bk_cold_lookup",
       "SELECT k.i, c.member, c.encoded, c.points,"
       " round(extract(epoch FROM c.achieved_at) * 1000)::bigint, c.version"
       " FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY"
       " AS k(board, period, period_id, member, i)"
       " JOIN " +
           table +
           " c ON c.board = k.board AND c.period = k.period"
           " AND c.period_id = k.period_id AND c.member = k.member"},
      {"bk_cold_drop_period", "WITH p AS (DELETE FROM " + pages + " WHERE" + period +
                                  ") DELETE FROM " + table + " WHERE" + period},
  };
}

SpillRows spill_rows(const std::vector<ColdRow>& rows, const std::vector<bool>& known_absent) {
  // Sorted by member (one lock order for concurrent spills of a period); for a member given
  // twice the last row wins, as one statement may not update a row twice.
  std::vector<std::size_t> order;
  order.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    check_text("member", rows[i].member);
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rows[a].member < rows[b].member; });
  SpillRows out;
  out.all.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i + 1 < order.size() && rows[order[i + 1]].member == rows[order[i]].member) continue;
    const std::size_t k = order[i];
    out.all.push_back(&rows[k]);
    const bool absent = k < known_absent.size() && known_absent[k];
    (absent ? out.fresh : out.upserted).push_back(&rows[k]);
  }
  return out;
}

namespace {

// Rows promised absent, by COPY: no conflict check.
void copy_fresh(pqxx::work& w, const std::string& table, const PeriodKey& period,
                const std::vector<const ColdRow*>& fresh, std::int64_t version) {
  pqxx::stream_to copy(w, table,
                       std::vector<std::string>{"board", "period", "period_id", "member", "encoded",
                                                "points", "achieved_at", "version"});
  for (const ColdRow* r : fresh) {
    if (r->achieved_at) {
      copy << std::make_tuple(period.board, period.period, period.period_id, r->member, r->encoded,
                              r->points, format_rfc3339(*r->achieved_at), version);
    } else {
      copy << std::make_tuple(period.board, period.period, period.period_id, r->member, r->encoded,
                              r->points, nullptr, version);
    }
  }
  copy.complete();
}

// rows[start, end) by INSERT ... ON CONFLICT, after telling the pages which rows they replace.
void upsert_chunk(pqxx::work& w, PageBook& pages, const PeriodKey& period,
                  const std::vector<const ColdRow*>& rows, std::size_t start, std::size_t end,
                  std::int64_t version) {
  ArrayLiteral members, encoded, points, achieved;
  for (std::size_t i = start; i < end; ++i) {
    const ColdRow& r = *rows[i];
    members.text(r.member);
    encoded.integer(r.encoded);
    points.integer(r.points);
    if (r.achieved_at) {
      achieved.integer(to_epoch_ms(*r.achieved_at));
    } else {
      achieved.null();
    }
  }
  const std::string member_list = members.done();
  for (const auto& k : w.exec_prepared("bk_cold_old_keys", period.board, period.period,
                                       period.period_id, member_list)) {
    pages.replaced({k[0].as<std::int64_t>(), k[1].as<std::string>()});
  }
  w.exec_prepared("bk_cold_upsert", period.board, period.period, period.period_id, member_list,
                  encoded.done(), points.done(), achieved.done(), version);
}

// One spill: a fresh version, one commit. Rows known to be absent go in by COPY; the rest
// in INSERT ... ON CONFLICT statements of kRowsPerStatement rows. The period's pages are
// locked first (two spills of one period take turns) and updated before the commit.
std::int64_t upsert_once(Session& session, const std::string& table, const std::string& pages_lock,
                         const PeriodKey& period, const std::vector<const ColdRow*>& fresh,
                         const std::vector<const ColdRow*>& rows) {
  pqxx::work w(*session.conn);
  const std::int64_t version =
      w.exec_prepared1("bk_cold_next_version", pages_lock)[0].as<std::int64_t>();
  std::vector<const ColdRow*> written(fresh);
  written.insert(written.end(), rows.begin(), rows.end());
  PageBook pages(w, period, written, !rows.empty());
  if (!fresh.empty()) copy_fresh(w, table, period, fresh, version);
  for (std::size_t start = 0; start < rows.size(); start += kRowsPerStatement) {
    upsert_chunk(w, pages, period, rows, start, std::min(rows.size(), start + kRowsPerStatement),
                 version);
  }
  pages.write();
  w.commit();
  return version;
}

}  // namespace

ColdTier::ColdTier(std::shared_ptr<Link> link) : link_(std::move(link)) {}

std::int64_t ColdTier::upsert(const PeriodKey& period, const std::vector<ColdRow>& rows,
                              const std::vector<bool>& known_absent) {
  Link& l = *link_;
  check_period(period);
  const SpillRows spill = spill_rows(rows, known_absent);
  Session& session = l.use();
  const std::string table = l.q + ".cold_members";
  const std::string pages_lock =
      "bk-pages/" + l.schema + "/" + period.board + "/" + period.period + "/" + period.period_id;
  return guarded(l, &session, "spilling to the cold tier", [&] {
    // A deadlock or serialization failure aborts the transaction with nothing committed,
    // so it is run again, a few times. A row that was promised absent but exists (the
    // stale set lost an entry, e.g. a Redis failover) aborts it too: then every row is
    // upserted.
    bool careful = spill.fresh.empty();
    for (int attempt = 1;; ++attempt) {
      try {
        return careful
                   ? upsert_once(session, table, pages_lock, period, {}, spill.all)
                   : upsert_once(session, table, pages_lock, period, spill.fresh, spill.upserted);
      } catch (const pqxx::unique_violation&) {
        if (careful) throw;
        careful = true;
      } catch (const pqxx::deadlock_detected&) {
        if (attempt == 3) throw;
      } catch (const pqxx::serialization_failure&) {
        if (attempt == 3) throw;
      }
    }
  });
}

void ColdTier::analyze() {
  Link& l = *link_;
  Session& session = l.use();
  guarded(l, &session, "analyzing the cold tier", [&] {
    // Waits for a VACUUM or ANALYZE that holds the table (autovacuum), however long: no
    // lock_timeout here (see pg::Link::use).
    pqxx::work w(*session.conn);
    w.exec0("SET LOCAL lock_timeout = 0");
    w.exec0("ANALYZE " + l.q + ".cold_members");
    w.commit();
    return 0;
  });
}

std::vector<std::optional<ColdHit>> ColdTier::lookup(const std::vector<MemberKey>& keys) {
  Link& l = *link_;
  std::vector<std::optional<ColdHit>> out(keys.size());
  if (keys.empty()) return out;
  ArrayLiteral boards, periods, period_ids, members;
  for (const MemberKey& k : keys) {
    check_period(k.period);
    check_text("member", k.member);
    boards.text(k.period.board);
    periods.text(k.period.period);
    period_ids.text(k.period.period_id);
    members.text(k.member);
  }
  Session& session = l.use();
  guarded(l, &session, "reading cold members", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::result res = n.exec_prepared("bk_cold_lookup", boards.done(), periods.done(),
                                             period_ids.done(), members.done());
    for (const auto& r : res) {
      const auto i = r[0].as<std::size_t>();
      if (i >= 1 && i <= out.size()) out[i - 1] = hit_from(r, 1);
    }
  });
  return out;
}

std::vector<PeriodKey> ColdTier::periods_with_rows(const std::optional<std::string>& board) {
  Link& l = *link_;
  if (board) check_text("board", *board);
  Session& session = l.use();
  return guarded(l, &session, "listing the periods of the cold tier", [&] {
    pqxx::nontransaction n(*session.conn);
    const std::string table = l.q + ".cold_members";
    // Before `migrate` there is no cold tier, so nothing in it either.
    if (n.exec_params1("SELECT to_regclass($1) IS NULL", table)[0].as<bool>()) {
      return std::vector<PeriodKey>{};
    }
    // A loose index scan: each step is one probe of the primary key for the next period.
    const std::string where = board ? " WHERE board = " + n.quote(*board) : std::string();
    const std::string and_board = board ? " AND c.board = " + n.quote(*board) : std::string();
    const pqxx::result res = n.exec(
        "WITH RECURSIVE p AS ((SELECT board, period, period_id FROM " + table + where +
        " ORDER BY board, period, period_id LIMIT 1) UNION ALL SELECT x.board, x.period,"
        " x.period_id FROM p, LATERAL (SELECT c.board, c.period, c.period_id FROM " +
        table + " c WHERE (c.board, c.period, c.period_id) > (p.board, p.period, p.period_id)" +
        and_board +
        " ORDER BY c.board, c.period, c.period_id LIMIT 1) x)"
        " SELECT board, period, period_id FROM p");
    std::vector<PeriodKey> out;
    out.reserve(res.size());
    for (const auto& r : res) {
      out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>()});
    }
    return out;
  });
}

std::int64_t ColdTier::drop_period(const PeriodKey& period) {
  Link& l = *link_;
  check_period(period);
  Session& session = l.use();
  return guarded(l, &session, "dropping a period's cold rows", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::result res =
        n.exec_prepared("bk_cold_drop_period", period.board, period.period, period.period_id);
    return static_cast<std::int64_t>(res.affected_rows());
  });
}

}  // namespace bk::cold
