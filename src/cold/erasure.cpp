// The right to erasure in PostgreSQL (see erasure.h) and its statements (libpqxx 6.4 API).
#include "cold/erasure.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "cold/history_impl.h"
#include "cold/pg.h"
#include "cold/rows.h"
#include "cold/statements.h"
#include "core/error.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

namespace {

// The distinct boards of a table whose primary key starts with `board`: a skip scan.
std::string boards_of(const std::string& table) {
  return "(WITH RECURSIVE b AS ((SELECT board FROM " + table +
         " ORDER BY board LIMIT 1) UNION ALL SELECT (SELECT t.board FROM " + table +
         " t WHERE t.board > b.board ORDER BY t.board LIMIT 1) FROM b WHERE b.board IS NOT NULL)"
         " SELECT board FROM b WHERE board IS NOT NULL)";
}

// The member's history rows of one board ($1 board, $2 member) in both history tables, by
// period: each is found through its table's member index.
std::string history_of(const std::string& q, const std::string& verb) {
  return verb + " FROM " + q + ".history_rows WHERE member = $2 AND board = $1";
}

// The boards, and the member's cold rows under their periods' locks.
StatementTable erasure_cold_statements(const std::string& q) {
  const std::string cold = q + ".cold_members";
  const std::string pages = q + ".cold_pages";
  const std::string period = " board = $1 AND period = $2 AND period_id = $3";
  return {
      {"bk_cold_erase_boards", boards_of(cold) + " UNION " + boards_of(q + ".periods") + " UNION " +
                                   boards_of(q + ".profiles") + " ORDER BY 1"},
      {"bk_cold_erase_ban_boards", boards_of(q + ".bans")},
      // The periods where the member has a cold row: a skip scan over the board's periods,
      // then one primary-key probe each (no index leads with the member).
      {"bk_cold_erase_cold_periods",
       "WITH RECURSIVE p AS ((SELECT period, period_id FROM " + cold +
           " WHERE board = $1 ORDER BY period, period_id LIMIT 1) UNION ALL SELECT x.period,"
           " x.period_id FROM p, LATERAL (SELECT c.period, c.period_id FROM " +
           cold +
           " c WHERE c.board = $1 AND (c.period, c.period_id) > (p.period, p.period_id)"
           " ORDER BY c.period, c.period_id LIMIT 1) x)"
           " SELECT p.period, p.period_id FROM p JOIN " +
           cold +
           " c ON c.board = $1 AND c.period = p.period AND c.period_id = p.period_id"
           " AND c.member = $2 ORDER BY 1, 2"},
      {"bk_cold_erase_lock", "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))"},
      // The row, and one off the count of the page holding it (the last page whose key is at
      // or before the row's listing key).
      {"bk_cold_erase_cold_row",
       "WITH d AS (DELETE FROM " + cold + " WHERE" + period +
           " AND member = $4 RETURNING encoded, member),"
           " g AS (SELECT x.encoded, x.member FROM d, LATERAL (SELECT encoded, member FROM " +
           pages + " WHERE" + period +
           " AND (encoded, member) <= (d.encoded, d.member COLLATE \"C\")"
           " ORDER BY encoded DESC, member DESC LIMIT 1) x),"
           " u AS (UPDATE " +
           pages +
           " p SET rows = p.rows - 1 FROM g WHERE p.board = $1 AND p.period = $2"
           " AND p.period_id = $3 AND p.encoded = g.encoded AND p.member = g.member"
           " AND p.rows > 0 RETURNING 1)"
           " SELECT count(*) FROM d"},
      // Periods where a page's key names the member: a page keeps the listing key it was cut
      // at, which may be an old key of the member or the key of a row deleted since.
  };
}

// The counted pages keyed by the member.
StatementTable erasure_page_statements(const std::string& q) {
  const std::string cold = q + ".cold_members";
  const std::string pages = q + ".cold_pages";
  const std::string period = " board = $1 AND period = $2 AND period_id = $3";
  return {
      {"bk_cold_erase_page_periods",
       "SELECT DISTINCT period, period_id FROM " + pages + " WHERE board = $1 AND member = $2"},
      // A page keyed by the member gets the key of its first remaining row (every row of it
      // is at or after that key, so each still falls in it); an empty page goes (its rows
      // are none). The period's first page is keyed by '' and never names a member.
      {"bk_cold_erase_page_key",
       "WITH k AS (SELECT encoded, member, rows FROM " + pages + " WHERE" + period +
           " AND member = $4),"
           " d AS (DELETE FROM " +
           pages +
           " p USING k WHERE p.board = $1 AND p.period = $2 AND p.period_id = $3"
           " AND p.encoded = k.encoded AND p.member = k.member AND k.rows = 0"
           " RETURNING 1),"
           " n AS (SELECT k.encoded AS old_encoded, k.member AS old_member, c.encoded,"
           " c.member FROM k, LATERAL (SELECT encoded, member FROM " +
           cold + " WHERE" + period +
           " AND (encoded, member) > (k.encoded, k.member COLLATE \"C\")"
           " ORDER BY encoded, member LIMIT 1) c WHERE k.rows > 0)"
           " UPDATE " +
           pages +
           " p SET encoded = n.encoded, member = n.member FROM n WHERE p.board = $1"
           " AND p.period = $2 AND p.period_id = $3 AND p.encoded = n.old_encoded"
           " AND p.member = n.old_member"},
  };
}

// History rows, profile and ban.
StatementTable erasure_row_statements(const std::string& q) {
  return {
      {"bk_cold_erase_history",
       "WITH d AS (" + history_of(q, "DELETE") +
           " RETURNING period, period_id, tier), l AS (DELETE FROM " + q +
           ".history_large WHERE member = $2 AND board = $1 RETURNING period, period_id, tier),"
           " gone AS (SELECT * FROM d UNION ALL SELECT * FROM l), " +
           history_rows_gone(q) + " SELECT period, period_id, n FROM n ORDER BY 1, 2"},
      {"bk_cold_erase_count_history",
       "SELECT period, period_id, count(*) FROM (SELECT period, period_id" + history_of(q, "") +
           " UNION ALL SELECT period, period_id FROM " + q +
           ".history_large WHERE member = $2 AND board = $1) a GROUP BY 1, 2 ORDER BY 1, 2"},
      {"bk_cold_erase_profile", "DELETE FROM " + q + ".profiles WHERE board = $1 AND member = $2"},
      {"bk_cold_erase_count_profile",
       "SELECT count(*) FROM " + q + ".profiles WHERE board = $1 AND member = $2"},
      {"bk_cold_erase_ban", "DELETE FROM " + q + ".bans WHERE board = $1 AND member = $2"},
      {"bk_cold_erase_count_ban",
       "SELECT count(*) FROM " + q + ".bans WHERE board = $1 AND member = $2"},
      // A league board's rows of the member (sql/017_leagues.sql): its division, seats, results.
      {"bk_cold_erase_league", "WITH a AS (DELETE FROM " + q +
                                   ".league_members WHERE board = $1 AND member = $2"
                                   " RETURNING 1), b AS (DELETE FROM " +
                                   q +
                                   ".league_seats WHERE board = $1"
                                   " AND member = $2 RETURNING 1), c AS (DELETE FROM " +
                                   q +
                                   ".league_results"
                                   " WHERE board = $1 AND member = $2 RETURNING 1)"
                                   " SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b) + "
                                   "(SELECT count(*) FROM c)"},
      {"bk_cold_erase_count_league", "SELECT (SELECT count(*) FROM " + q +
                                         ".league_members WHERE board = $1 AND member = $2)"
                                         " + (SELECT count(*) FROM " +
                                         q +
                                         ".league_seats WHERE board = $1 AND member = $2)"
                                         " + (SELECT count(*) FROM " +
                                         q + ".league_results WHERE board = $1 AND member = $2)"},
  };
}

// The audit (sql/012_erasures.sql).
StatementTable erasure_audit_statements(const std::string& q) {
  return {
      {"bk_cold_erase_open",
       "SELECT id FROM " + q +
           ".erasures WHERE member_hash = $1 AND finished_at IS NULL ORDER BY id DESC LIMIT 1"},
      {"bk_cold_erase_begin",
       "INSERT INTO " + q +
           ".erasures (requested_at, member_hash, boards, rows, dead_letters)"
           " VALUES ($2::timestamptz, $1, '{}', 0, 0) RETURNING id"},
      {"bk_cold_erase_earlier",
       "SELECT count(*) FROM " + q + ".erasures WHERE member_hash = $1 AND id < $2"},
      {"bk_cold_erase_record",
       "UPDATE " + q +
           ".erasures SET rows = rows + $3, boards = CASE WHEN $2 = ANY(boards) THEN boards"
           " ELSE boards || $2::text END WHERE id = $1"},
      {"bk_cold_erase_finish", "UPDATE " + q +
                                   ".erasures SET finished_at = $3::timestamptz,"
                                   " dead_letters = dead_letters + $2 WHERE id = $1"},
  };
}

}  // namespace

StatementTable erasure_statements(const std::string& q) {
  StatementTable all;
  for (StatementTable part : {erasure_cold_statements(q), erasure_page_statements(q),
                              erasure_row_statements(q), erasure_audit_statements(q)}) {
    all.insert(all.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  }
  return all;
}

std::string keyed_hash(const std::string& key, const std::string& member) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(member.data()), member.size(), out,
           &size) == nullptr) {
    throw Error("erase: OpenSSL's HMAC-SHA256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[out[i] >> 4];
    hex += kHex[out[i] & 0x0f];
  }
  return hex;
}

namespace {

ErasedPeriod& period_of(std::map<std::pair<std::string, std::string>, ErasedPeriod>& periods,
                        const std::string& board, const pqxx::row& r) {
  const std::string period = r[0].as<std::string>();
  const std::string id = r[1].as<std::string>();
  ErasedPeriod& p = periods[{period, id}];
  p.key = {board, period, id};
  return p;
}

// The member's cold rows and the pages keyed by it, each period under its lock (sorted: one
// lock order). A dry run counts the rows (the page keys go with them).
void erase_cold(pqxx::work& w, const Link& l, const std::string& board, const std::string& member,
                bool dry_run, std::map<std::pair<std::string, std::string>, ErasedPeriod>& out) {
  std::set<std::pair<std::string, std::string>> with_row, with_page;
  for (const auto& r : w.exec_prepared("bk_cold_erase_cold_periods", board, member))
    with_row.emplace(r[0].as<std::string>(), r[1].as<std::string>());
  if (dry_run) {
    for (const auto& [period, id] : with_row) {
      ErasedPeriod& p = out[{period, id}];
      p.key = {board, period, id};
      p.cold += 1;
    }
    return;
  }
  for (const auto& r : w.exec_prepared("bk_cold_erase_page_periods", board, member))
    with_page.emplace(r[0].as<std::string>(), r[1].as<std::string>());
  std::set<std::pair<std::string, std::string>> all = with_row;
  all.insert(with_page.begin(), with_page.end());
  for (const auto& [period, id] : all) {
    const PeriodKey key{board, period, id};
    w.exec_prepared("bk_cold_erase_lock", period_lock(l.schema, key));
    const std::int64_t n =
        w.exec_prepared1("bk_cold_erase_cold_row", board, period, id, member)[0].as<std::int64_t>();
    w.exec_prepared("bk_cold_erase_page_key", board, period, id, member);
    if (n == 0) continue;
    ErasedPeriod& p = out[{period, id}];
    p.key = key;
    p.cold += n;
  }
}

void erase_history(pqxx::work& w, const std::string& board, const std::string& member, bool dry_run,
                   std::map<std::pair<std::string, std::string>, ErasedPeriod>& out) {
  for (const auto& r : w.exec_prepared(
           dry_run ? "bk_cold_erase_count_history" : "bk_cold_erase_history", board, member)) {
    ErasedPeriod& p = period_of(out, board, r);
    p.archived = true;
    p.history += r[2].as<std::int64_t>();
  }
}

std::int64_t erase_row(pqxx::work& w, bool dry_run, const char* count, const char* remove,
                       const std::string& board, const std::string& member) {
  if (dry_run) return w.exec_prepared1(count, board, member)[0].as<std::int64_t>();
  return static_cast<std::int64_t>(w.exec_prepared(remove, board, member).affected_rows());
}

}  // namespace

ErasureStore::ErasureStore(std::shared_ptr<Link> link) : link_(std::move(link)) {}

std::vector<std::string> ErasureStore::boards() {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "listing the boards", [&] {
    pqxx::work w(*session.conn);
    std::set<std::string> out;
    for (const auto& r : w.exec_prepared("bk_cold_erase_boards"))
      out.insert(r[0].as<std::string>());
    for (const auto& r : w.exec_prepared("bk_cold_erase_ban_boards"))
      out.insert(r[0].as<std::string>());
    w.commit();
    return std::vector<std::string>(out.begin(), out.end());
  });
}

ErasedBoard ErasureStore::erase(const std::string& board, const std::string& member, bool dry_run) {
  Link& l = *link_;
  check_text("board", board);
  check_text("member id", member);
  Session& session = l.use();
  return guarded(l, &session, "erasing a member", [&] {
    for (int attempt = 1;; ++attempt) {
      try {
        pqxx::work w(*session.conn);
        // Waits for a running spill or archive of a period, however long it takes.
        w.exec0("SET LOCAL lock_timeout = 0");
        std::map<std::pair<std::string, std::string>, ErasedPeriod> periods;
        erase_cold(w, l, board, member, dry_run, periods);
        erase_history(w, board, member, dry_run, periods);
        ErasedBoard out;
        out.profiles = erase_row(w, dry_run, "bk_cold_erase_count_profile", "bk_cold_erase_profile",
                                 board, member);
        out.bans =
            erase_row(w, dry_run, "bk_cold_erase_count_ban", "bk_cold_erase_ban", board, member);
        out.league =
            w.exec_prepared1(dry_run ? "bk_cold_erase_count_league" : "bk_cold_erase_league", board,
                             member)[0]
                .as<std::int64_t>();
        w.commit();
        for (auto& [key, p] : periods) out.periods.push_back(std::move(p));
        return out;
      } catch (const pqxx::deadlock_detected&) {
        if (attempt == 3) throw;
      } catch (const pqxx::serialization_failure&) {
        if (attempt == 3) throw;
      }
    }
  });
}

std::int64_t ErasureStore::begin(const std::string& member_hash, Instant now) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "writing the erasure's audit row", [&] {
    pqxx::work w(*session.conn);
    const pqxx::result open = w.exec_prepared("bk_cold_erase_open", member_hash);
    const std::int64_t id =
        open.empty() ? w.exec_prepared1("bk_cold_erase_begin", member_hash, format_rfc3339(now))[0]
                           .as<std::int64_t>()
                     : open[0][0].as<std::int64_t>();
    w.commit();
    return id;
  });
}

std::int64_t ErasureStore::earlier(const std::string& member_hash, std::int64_t id) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading the erasure audit", [&] {
    pqxx::nontransaction n(*session.conn);
    return n.exec_prepared1("bk_cold_erase_earlier", member_hash, id)[0].as<std::int64_t>();
  });
}

void ErasureStore::record(std::int64_t id, const std::string& board, std::int64_t rows) {
  Link& l = *link_;
  Session& session = l.use();
  guarded(l, &session, "writing the erasure's audit row", [&] {
    pqxx::nontransaction n(*session.conn);
    n.exec_prepared("bk_cold_erase_record", id, board, rows);
    return 0;
  });
}

void ErasureStore::finish(std::int64_t id, std::int64_t dead_letters, Instant now) {
  Link& l = *link_;
  Session& session = l.use();
  guarded(l, &session, "completing the erasure's audit row", [&] {
    pqxx::nontransaction n(*session.conn);
    n.exec_prepared("bk_cold_erase_finish", id, dead_letters, format_rfc3339(now));
    return 0;
  });
}

}  // namespace bk::cold
