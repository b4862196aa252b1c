// Bans in PostgreSQL (see bans.h) and their statements.
#include "cold/bans.h"

#include "cold/pg.h"
#include "cold/rows.h"
#include "cold/statements.h"
#include "core/error.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

StatementTable bans_statements(const std::string& q) {
  return {
      // xmax = 0: the row was inserted by this statement (not updated).
      {"bk_cold_bans_ban", "INSERT INTO " + q +
                               ".bans AS b (board, member, reason, banned_at)"
                               " VALUES ($1, $2, $3, to_timestamp($4 / 1000.0))"
                               " ON CONFLICT (board, member) DO UPDATE SET reason = EXCLUDED.reason"
                               " RETURNING (xmax = 0)"},
      {"bk_cold_bans_unban", "DELETE FROM " + q + ".bans WHERE board = $1 AND member = $2"},
      {"bk_cold_bans_of",
       "SELECT member, reason,"
       " round(extract(epoch FROM banned_at) * 1000)::bigint FROM " +
           q + ".bans WHERE board = $1 ORDER BY member"},
  };
}

Bans::Bans(std::shared_ptr<Link> link) : link_(std::move(link)) {}

bool Bans::ban(const std::string& board, const std::string& member, const std::string& reason,
               Instant at) {
  Link& l = *link_;
  check_text("board", board);
  check_text("member id", member);
  check_text("reason", reason);
  Session& session = l.use();
  return guarded(l, &session, "recording a ban", [&] {
    pqxx::work w(*session.conn);
    const bool inserted =
        w.exec_prepared1("bk_cold_bans_ban", board, member, reason, to_epoch_ms(at))[0].as<bool>();
    w.commit();
    return inserted;
  });
}

bool Bans::unban(const std::string& board, const std::string& member) {
  Link& l = *link_;
  check_text("board", board);
  check_text("member id", member);
  Session& session = l.use();
  return guarded(l, &session, "lifting a ban", [&] {
    pqxx::work w(*session.conn);
    const pqxx::result r = w.exec_prepared("bk_cold_bans_unban", board, member);
    w.commit();
    return r.affected_rows() > 0;
  });
}

std::vector<BanRow> Bans::of(const std::string& board) {
  Link& l = *link_;
  check_text("board", board);
  Session& session = l.use();
  return guarded(l, &session, "reading bans", [&] {
    pqxx::nontransaction n(*session.conn);
    std::vector<BanRow> out;
    pqxx::result rows;
    try {
      rows = n.exec_prepared("bk_cold_bans_of", board);
    } catch (const pqxx::undefined_table&) {
      // Every board sync reads the bans: a schema of an older version fails here first.
      throw UsageError("schema " + l.schema + " (" + l.where +
                       ") is not migrated to this version of boardkeeper (it has no bans "
                       "table): run `boardkeeper migrate` first");
    }
    for (const auto& r : rows) {
      out.push_back(
          {r[0].as<std::string>(), r[1].as<std::string>(), from_epoch_ms(r[2].as<std::int64_t>())});
    }
    return out;
  });
}

std::vector<std::string> Bans::members(const std::string& board) {
  std::vector<std::string> out;
  for (BanRow& b : of(board)) out.push_back(std::move(b.member));
  return out;
}

}  // namespace bk::cold
