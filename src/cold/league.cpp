// A league board in PostgreSQL (see league.h).
#include "cold/league.h"

#include <pqxx/pqxx>

#include "cold/pg.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

namespace {

std::string divisions_array(const LeagueRules& league) {
  pg::ArrayLiteral a;
  for (const std::string& d : league.divisions) a.text(d);
  return a.done();
}

// The cohorts' standings: rank within the cohort by the history's rank (competition ranks
// of the whole period, so ties stay ties), counted from the top and from the bottom, and the
// move core/league.h's zone_of gives: up when fewer than promote are better and the division
// is not the top one, else down when fewer than relegate are worse and it is not the bottom.
// $1..$3 the period, $4 the divisions (text[]), $5 cohort_size, $6 promote, $7 relegate.
std::string results_sql(const std::string& q) {
  return "WITH ranked AS ("
         " SELECT s.member, s.division AS d, (s.place - 1) / $5 + 1 AS n, h.points,"
         "  rank() OVER (PARTITION BY s.division, (s.place - 1) / $5 ORDER BY h.rank) AS r,"
         "  rank() OVER (PARTITION BY s.division, (s.place - 1) / $5 ORDER BY h.rank DESC) AS w"
         " FROM " +
         q + ".league_seats s JOIN " + q +
         ".history h"
         "  ON h.board = s.board AND h.period = s.period AND h.period_id = s.period_id"
         "  AND h.member = s.member"
         " WHERE s.board = $1 AND s.period = $2 AND s.period_id = $3"
         "), moved AS ("
         " SELECT member, d, n, points, r,"
         "  CASE WHEN r - 1 < $6 AND d < cardinality($4::text[]) - 1 THEN d + 1"
         "       WHEN w - 1 < $7 AND d > 0 THEN d - 1 ELSE d END AS next"
         " FROM ranked)"
         " INSERT INTO " +
         q +
         ".league_results (board, period, period_id, member, division,"
         "  cohort, cohort_rank, points, next_division, move)"
         " SELECT $1, $2, $3, member, ($4::text[])[d + 1], ($4::text[])[d + 1] || '-' || n, r,"
         "  points, ($4::text[])[next + 1],"
         "  CASE WHEN next > d THEN 'promoted' WHEN next < d THEN 'relegated' ELSE 'stayed' END"
         " FROM moved";
}

std::vector<LeagueResult> results_of(const pqxx::result& r) {
  std::vector<LeagueResult> out;
  out.reserve(r.size());
  for (const auto& row : r) {
    out.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                   row[3].as<std::int64_t>(), row[4].as<std::int64_t>(), row[5].as<std::string>(),
                   row[6].as<std::string>()});
  }
  return out;
}

const char* const kResultColumns =
    "member, division, cohort, cohort_rank, points, move, next_division";

}  // namespace

std::string league_close(pqxx::transaction_base& txn, const std::string& q, const PeriodKey& key,
                         const LeagueRules& league) {
  const std::string divisions = divisions_array(league);
  // The period's history rows were written by this transaction and its seats a moment ago:
  // the planner has no statistics of them and would join them row by row (195 s for 20,000
  // members, measured); hash joins whatever it believes, for these statements only.
  txn.exec0("SET LOCAL enable_nestloop = off");
  txn.exec_params(results_sql(q), key.board, key.period, key.period_id, divisions,
                  league.cohort_size, league.promote, league.relegate);
  if (league.inactive_drop) {
    txn.exec_params("UPDATE " + q +
                        ".league_members m"
                        " SET division = ($4::text[])[array_position($4::text[], m.division) - 1],"
                        "  since = $3"
                        " WHERE m.board = $1 AND array_position($4::text[], m.division) > 1"
                        " AND NOT EXISTS (SELECT 1 FROM " +
                        q +
                        ".league_seats s WHERE s.board = $1"
                        "  AND s.period = $2 AND s.period_id = $3 AND s.member = m.member)",
                    key.board, key.period, key.period_id, divisions);
  }
  txn.exec_params("INSERT INTO " + q +
                      ".league_members (board, member, division, since)"
                      " SELECT board, member, next_division, period_id FROM " +
                      q +
                      ".league_results"
                      " WHERE board = $1 AND period = $2 AND period_id = $3"
                      // A member who stayed keeps its row as it is: no write (most members
                      // stay, so a close updates the movers alone).
                      " ON CONFLICT (board, member) DO UPDATE"
                      " SET division = EXCLUDED.division, since = EXCLUDED.since"
                      " WHERE league_members.division <> EXCLUDED.division",
                  key.board, key.period, key.period_id);
  txn.exec0("SET LOCAL enable_nestloop = on");
  txn.exec_params("INSERT INTO " + q +
                      ".league_boards AS b (board, version) VALUES ($1, 1)"
                      " ON CONFLICT (board) DO UPDATE SET version = b.version + 1",
                  key.board);
  const pqxx::row counts = txn.exec_params1(
      "SELECT coalesce(jsonb_object_agg(division, c), '{}')::text FROM ("
      " SELECT division, jsonb_build_object("
      "  'promoted', count(*) FILTER (WHERE move = 'promoted'),"
      "  'stayed', count(*) FILTER (WHERE move = 'stayed'),"
      "  'relegated', count(*) FILTER (WHERE move = 'relegated')) AS c"
      " FROM " +
          q +
          ".league_results WHERE board = $1 AND period = $2 AND period_id = $3"
          " GROUP BY division) x",
      key.board, key.period, key.period_id);
  std::string json = counts[0].as<std::string>();
  txn.exec_params("UPDATE " + q +
                      ".periods SET league = $4::jsonb"
                      " WHERE board = $1 AND period = $2 AND period_id = $3",
                  key.board, key.period, key.period_id, json);
  return json;
}

LeagueStore::LeagueStore(std::shared_ptr<Link> link) : link_(std::move(link)) {}

std::int64_t LeagueStore::version(const std::string& board) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading a league's close count", [&] {
    pqxx::read_transaction t(*session.conn);
    const pqxx::result r =
        t.exec_params("SELECT version FROM " + l.q + ".league_boards WHERE board = $1", board);
    return r.empty() ? std::int64_t{0} : r[0][0].as<std::int64_t>();
  });
}

std::vector<std::pair<std::string, std::string>> LeagueStore::divisions(const std::string& board,
                                                                        const std::string& after,
                                                                        std::int64_t limit) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading a league's divisions", [&] {
    pqxx::read_transaction t(*session.conn);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& row : t.exec_params("SELECT member, division FROM " + l.q +
                                             ".league_members WHERE board = $1 AND member > $2"
                                             " ORDER BY member LIMIT $3",
                                         board, after, limit)) {
      out.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
    }
    return out;
  });
}

std::map<std::int64_t, std::int64_t> LeagueStore::checkpointed(const PeriodKey& key) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading a league period's seats", [&] {
    pqxx::read_transaction t(*session.conn);
    std::map<std::int64_t, std::int64_t> out;
    for (const auto& row : t.exec_params("SELECT division, max(place) FROM " + l.q +
                                             ".league_seats WHERE board = $1 AND period = $2"
                                             " AND period_id = $3 GROUP BY division",
                                         key.board, key.period, key.period_id)) {
      out[row[0].as<std::int64_t>()] = row[1].as<std::int64_t>();
    }
    return out;
  });
}

void LeagueStore::save_seats(const PeriodKey& key, const std::vector<LeagueSeat>& seats) {
  if (seats.empty()) return;
  pg::ArrayLiteral members;
  pg::ArrayLiteral divisions;
  pg::ArrayLiteral places;
  for (const LeagueSeat& s : seats) {
    members.text(s.member);
    divisions.integer(s.division);
    places.integer(s.place);
  }
  Link& l = *link_;
  Session& session = l.use();
  guarded(l, &session, "checkpointing a league period's seats", [&] {
    pqxx::work w(*session.conn);
    w.exec_params("INSERT INTO " + l.q +
                      ".league_seats (board, period, period_id, member, division, place)"
                      " SELECT $1, $2, $3, m, d, p FROM unnest($4::text[], $5::int[], $6::bigint[])"
                      " AS x(m, d, p) ON CONFLICT DO NOTHING",
                  key.board, key.period, key.period_id, members.done(), divisions.done(),
                  places.done());
    w.commit();
  });
}

std::vector<LeagueSeat> LeagueStore::seats(const PeriodKey& key, const std::string& after,
                                           std::int64_t limit) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading a league period's seats", [&] {
    pqxx::read_transaction t(*session.conn);
    std::vector<LeagueSeat> out;
    for (const auto& row :
         t.exec_params("SELECT member, division, place FROM " + l.q +
                           ".league_seats WHERE board = $1 AND period = $2 AND period_id = $3"
                           " AND member > $4 ORDER BY member LIMIT $5",
                       key.board, key.period, key.period_id, after, limit)) {
      out.push_back(
          {row[0].as<std::string>(), row[1].as<std::int64_t>(), row[2].as<std::int64_t>()});
    }
    return out;
  });
}

std::vector<LeagueResult> LeagueStore::cohort(const PeriodKey& key, const std::string& cohort) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading an archived cohort", [&] {
    pqxx::read_transaction t(*session.conn);
    return results_of(t.exec_params(std::string("SELECT ") + kResultColumns + " FROM " + l.q +
                                        ".league_results WHERE board = $1 AND period = $2"
                                        " AND period_id = $3 AND cohort = $4"
                                        " ORDER BY cohort_rank, member",
                                    key.board, key.period, key.period_id, cohort));
  });
}

std::vector<LeagueResult> LeagueStore::cohort_of(const PeriodKey& key, const std::string& member) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading an archived cohort", [&] {
    pqxx::read_transaction t(*session.conn);
    return results_of(
        t.exec_params(std::string("SELECT ") + kResultColumns + " FROM " + l.q +
                          ".league_results WHERE board = $1 AND period = $2 AND period_id = $3"
                          " AND cohort = (SELECT cohort FROM " +
                          l.q +
                          ".league_results WHERE board = $1"
                          " AND period = $2 AND period_id = $3 AND member = $4)"
                          " ORDER BY cohort_rank, member",
                      key.board, key.period, key.period_id, member));
  });
}

}  // namespace bk::cold
