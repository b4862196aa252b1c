// A member's rows removed from PostgreSQL (see member_rows.h) and their statements.
#include "cold/member_rows.h"

#include <algorithm>

#include "cold/history_impl.h"
#include "cold/pg.h"
#include "cold/rows.h"
#include "cold/statements.h"
#include "core/error.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

StatementTable member_row_statements(const std::string& q) {
  const std::string& period = kInPeriod;
  const std::string pages = q + ".cold_pages";
  return {
      {"bk_cold_rows_lock", "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))"},
      // The rows of members $4, and one row less in the page of each: the page whose key is
      // the last at or before the row's (encoded, member) (sql/007_cold_pages.sql).
      {"bk_cold_rows_delete_cold",
       "WITH d AS (DELETE FROM " + q + ".cold_members WHERE" + period +
           "AND member = ANY($4::text[]) RETURNING encoded, member),"
           " g AS (SELECT p.encoded, p.member, count(*) AS n FROM d CROSS JOIN LATERAL"
           " (SELECT c.encoded, c.member FROM " +
           pages +
           " c WHERE c.board = $1 AND c.period = $2 AND c.period_id = $3"
           " AND (c.encoded, c.member) <= (d.encoded, d.member)"
           " ORDER BY c.encoded DESC, c.member DESC LIMIT 1) p"
           " GROUP BY p.encoded, p.member),"
           " u AS (UPDATE " +
           pages +
           " c SET rows = greatest(c.rows - g.n, 0) FROM g"
           " WHERE c.board = $1 AND c.period = $2 AND c.period_id = $3"
           " AND c.encoded = g.encoded AND c.member = g.member RETURNING 1)"
           " SELECT count(*) FROM d"},
      {"bk_cold_rows_status", "SELECT status FROM " + q + ".periods WHERE" + period},
      // The member's history rows of an archived period (either table), and the period's
      // member count.
      {"bk_cold_rows_delete_history",
       "WITH a AS (DELETE FROM " + q + ".history_rows WHERE" + period +
           "AND member = $4 RETURNING period, period_id, tier),"
           " b AS (DELETE FROM " +
           q + ".history_large WHERE member = $4 AND" + period +
           "RETURNING period, period_id, tier),"
           " gone AS (SELECT * FROM a UNION ALL SELECT * FROM b), " +
           history_rows_gone(q) + " SELECT coalesce((SELECT sum(n) FROM n), 0)::bigint"},
  };
}

namespace {

std::string pages_lock(const std::string& schema, const PeriodKey& p) {
  // The spill's lock of the period's pages (cold_tier.cpp).
  return "bk-pages/" + schema + "/" + p.board + "/" + p.period + "/" + p.period_id;
}

std::int64_t delete_cold(pqxx::work& w, const Link& l, const PeriodKey& p,
                         const std::vector<std::string>& members) {
  pg::ArrayLiteral list;
  for (const std::string& m : members) {
    check_text("member id", m);
    list.text(m);
  }
  w.exec_prepared("bk_cold_rows_lock", pages_lock(l.schema, p));
  return w
      .exec_prepared1("bk_cold_rows_delete_cold", p.board, p.period, p.period_id, list.done())[0]
      .as<std::int64_t>();
}

}  // namespace

MemberRows::MemberRows(std::shared_ptr<Link> link) : link_(std::move(link)) {}

std::vector<MemberRowsRemoved> MemberRows::remove(
    const std::string& member, const std::vector<PeriodKey>& periods,
    std::optional<std::chrono::milliseconds> lock_wait) {
  Link& l = *link_;
  check_text("member id", member);
  for (const PeriodKey& p : periods) check_period(p);
  Session& session = l.use();
  return guarded(l, &session, "removing a member's rows", [&] {
    pqxx::work w(*session.conn);
    // Waits for a running spill or archive of the period, however long it takes (see
    // pg::Link::use), or at most `lock_wait` (lock_timeout counts each lock's wait).
    w.exec0("SET LOCAL lock_timeout = " +
            (lock_wait ? std::to_string(std::max<std::int64_t>(lock_wait->count(), 1)) : "0"));
    std::vector<MemberRowsRemoved> out;
    for (const PeriodKey& p : periods) {
      MemberRowsRemoved r;
      try {
        w.exec_prepared("bk_cold_rows_lock", period_lock(l.schema, p));
        r.cold = delete_cold(w, l, p, {member});
      } catch (const pqxx::sql_error& e) {
        // 55P03 lock_not_available: lock_timeout ran out
        if (!lock_wait || e.sqlstate() != "55P03") throw;
        throw BusyError("a spill or archive of " + p.board + " " + p.period + " " + p.period_id +
                        " held its lock for more than " + std::to_string(lock_wait->count()) +
                        " ms");
      }
      const pqxx::result status =
          w.exec_prepared("bk_cold_rows_status", p.board, p.period, p.period_id);
      r.archived = !status.empty() && status[0][0].as<std::string>() == "archived";
      if (r.archived) {
        r.history = w.exec_prepared1("bk_cold_rows_delete_history", p.board, p.period, p.period_id,
                                     member)[0]
                        .as<std::int64_t>();
      }
      out.push_back(r);
    }
    w.commit();
    return out;
  });
}

std::int64_t MemberRows::remove_void(const PeriodKey& period,
                                     const std::vector<std::string>& members) {
  if (members.empty()) return 0;
  Link& l = *link_;
  check_period(period);
  Session& session = l.use();
  return guarded(l, &session, "deleting removed members' cold rows", [&] {
    pqxx::work w(*session.conn);
    const std::int64_t n = delete_cold(w, l, period, members);
    w.commit();
    return n;
  });
}

}  // namespace bk::cold
