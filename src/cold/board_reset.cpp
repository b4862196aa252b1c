// Reset and drop in PostgreSQL (see board_reset.h) and their statements.
#include "cold/board_reset.h"

#include <utility>

#include "cold/history.h"
#include "cold/pg.h"
#include "cold/rows.h"
#include "cold/statements.h"
#include "core/error.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

StatementTable reset_statements(const std::string& q) {
  const std::string& period = kInPeriod;
  return {
      {"bk_cold_reset_lock", "SELECT pg_advisory_lock(hashtextextended($1, 0))"},
      {"bk_cold_reset_unlock", "SELECT pg_advisory_unlock(hashtextextended($1, 0))"},
      {"bk_cold_reset_status", "SELECT status FROM " + q + ".periods WHERE" + period},
      {"bk_cold_reset_cold", "WITH p AS (DELETE FROM " + q + ".cold_pages WHERE" + period +
                                 ") DELETE FROM " + q + ".cold_members WHERE" + period},
      {"bk_cold_drop_profiles", "DELETE FROM " + q + ".profiles WHERE board = $1"},
      // A league board's divisions, close count and seats (its results go with --history).
      {"bk_cold_drop_league",
       "WITH a AS (DELETE FROM " + q + ".league_members WHERE board = $1), b AS (DELETE FROM " + q +
           ".league_boards WHERE board = $1) DELETE FROM " + q + ".league_seats WHERE board = $1"},
      {"bk_cold_drop_league_results", "DELETE FROM " + q + ".league_results WHERE board = $1"},
      {"bk_cold_drop_xact_lock", "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))"},
      // Rows of a pruned period are gone already; a large one's are its table's.
      {"bk_cold_drop_archived",
       "SELECT period, period_id, history_part,"
       " CASE WHEN pruned_at IS NULL THEN members ELSE 0 END FROM " +
           q +
           ".periods WHERE board = $1"
           " ORDER BY period, period_id FOR UPDATE"},
      {"bk_cold_drop_history_rows",
       "WITH d AS (DELETE FROM " + q +
           ".history_rows WHERE board = $1 RETURNING period, period_id)"
           " SELECT period, period_id, count(*) FROM d GROUP BY 1, 2"},
      {"bk_cold_drop_periods", "DELETE FROM " + q + ".periods WHERE board = $1"},
  };
}

BoardReset::BoardReset(std::shared_ptr<Link> link) : link_(std::move(link)) {}

BoardReset::~BoardReset() {
  if (!locked_ || !session_ || session_->broken) return;
  try {
    pqxx::nontransaction(*session_->conn)
        .exec_prepared("bk_cold_reset_unlock", period_lock(link_->schema, *locked_));
  } catch (...) {
    // The connection is gone, and the session lock with it.
  }
}

void BoardReset::lock(const PeriodKey& period) {
  if (locked_) throw Error("internal: a period lock is held already");
  check_period(period);
  Link& l = *link_;
  Session& session = l.use();
  guarded(l, &session, "waiting for the period's lock", [&] {
    // A spill holds the lock for its whole run, which may rightly be long: no lock_timeout
    // (see pg::Link::use). A session lock outlives the transaction that took it.
    pqxx::work w(*session.conn);
    w.exec0("SET LOCAL lock_timeout = 0");
    w.exec_prepared("bk_cold_reset_lock", period_lock(l.schema, period));
    w.commit();
    return 0;
  });
  session_ = l.session;
  locked_ = period;
}

PeriodEmptied BoardReset::empty_period(bool refuse_closed) {
  if (!locked_ || !session_) throw Error("internal: empty_period without the period's lock");
  const PeriodKey& p = *locked_;
  Session& session = *session_;
  if (session.broken) throw PostgresUnavailable(link_->where + ": the period's lock was lost");
  return guarded(*link_, &session, "deleting the period's cold rows", [&] {
    PeriodEmptied out;
    pqxx::work w(*session.conn);
    const pqxx::result status =
        w.exec_prepared("bk_cold_reset_status", p.board, p.period, p.period_id);
    if (!status.empty() && status[0][0].as<std::string>() != "open") {
      out.closed_status = status[0][0].as<std::string>();
      if (refuse_closed) return out;
    }
    out.cold = static_cast<std::int64_t>(
        w.exec_prepared("bk_cold_reset_cold", p.board, p.period, p.period_id).affected_rows());
    w.commit();
    return out;
  });
}

void BoardReset::unlock() {
  if (!locked_ || !session_) return;
  const PeriodKey period = *std::exchange(locked_, std::nullopt);
  const std::shared_ptr<Session> session = std::exchange(session_, nullptr);
  const std::string lost = "the lock of period " + period.period + ":" + period.period_id +
                           " of board '" + period.board +
                           "' was lost while it was held (the connection broke); run it again";
  if (session->broken) throw PostgresUnavailable(link_->where + ": " + lost);
  const bool held = guarded(*link_, session.get(), "releasing the period's lock", [&] {
    return pqxx::nontransaction(*session->conn)
        .exec_prepared1("bk_cold_reset_unlock", period_lock(link_->schema, period))[0]
        .as<bool>();
  });
  if (!held) throw PostgresUnavailable(link_->where + ": " + lost);
}

namespace {

// Drops the history of the board's archived periods (inside drop_board's transaction).
std::vector<HistoryDropped> drop_history(pqxx::work& w, const std::string& q,
                                         const std::string& board) {
  std::vector<HistoryDropped> out;
  for (const auto& r : w.exec_prepared("bk_cold_drop_archived", board)) {
    out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), 0});
    if (!r[2].is_null()) {
      // A large period's rows are a table of their own, dropped whole.
      w.exec0("DROP TABLE IF EXISTS " + q + ".history_large_" +
              std::to_string(r[2].as<std::int64_t>()));
      out.back().rows = r[3].as<std::int64_t>();
    }
  }
  for (const auto& r : w.exec_prepared("bk_cold_drop_history_rows", board)) {
    const std::string period = r[0].as<std::string>(), id = r[1].as<std::string>();
    const std::int64_t n = r[2].as<std::int64_t>();
    bool listed = false;
    for (HistoryDropped& d : out) {
      if (d.period == period && d.period_id == id) {
        d.rows += n;
        listed = true;
      }
    }
    if (!listed) out.push_back({period, id, n});
  }
  w.exec_prepared("bk_cold_drop_periods", board);
  w.exec_prepared("bk_cold_drop_league_results", board);
  return out;
}

}  // namespace

BoardDropped BoardReset::drop_board(const std::string& board, bool history) {
  check_text("board", board);
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "dropping the board's rows", [&] {
    BoardDropped out;
    pqxx::work w(*session.conn);
    out.profiles =
        static_cast<std::int64_t>(w.exec_prepared("bk_cold_drop_profiles", board).affected_rows());
    w.exec_prepared("bk_cold_drop_league", board);
    if (history) {
      w.exec_prepared("bk_cold_drop_xact_lock", retention_lock(l.schema));
      out.history = drop_history(w, l.q, board);
    }
    w.commit();
    return out;
  });
}

}  // namespace bk::cold
