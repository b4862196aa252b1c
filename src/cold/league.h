// A league board in PostgreSQL (sql/017_leagues.sql, docs/architecture.md "Leagues"): the
// members' divisions and the close count the Redis cache follows, a period's checkpointed
// seats, the close itself (run in the archive's transaction: history.cpp) and the archived
// cohorts' reads. Shares the cold store's connection (ColdStore::link).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cold/types.h"
#include "core/league.h"

namespace pqxx {
class transaction_base;
}

namespace bk::cold {

namespace pg {
struct Link;
}

// A seat as checkpointed: division index and place (core/league.h).
struct LeagueSeat {
  std::string member;
  std::int64_t division = 0;
  std::int64_t place = 0;
};

// One row of a closed cohort (league_results), in cohort rank order.
struct LeagueResult {
  std::string member;
  std::string division;
  std::string cohort;
  std::int64_t cohort_rank = 0;
  std::int64_t points = 0;
  std::string move;  // promoted, stayed, relegated
  std::string next_division;
};

class LeagueStore {
 public:
  explicit LeagueStore(std::shared_ptr<pg::Link> link);

  // The board's close count (0 before its first close).
  std::int64_t version(const std::string& board);
  // Up to `limit` members with a division row after `after` (by member bytes), as (member,
  // division name): a page, so that a league of millions is copied in flat memory.
  std::vector<std::pair<std::string, std::string>> divisions(const std::string& board,
                                                             const std::string& after,
                                                             std::int64_t limit);
  // The highest place checkpointed per division index of the period.
  std::map<std::int64_t, std::int64_t> checkpointed(const PeriodKey& key);
  // Writes seats (a member checkpointed before keeps its row); committed.
  void save_seats(const PeriodKey& key, const std::vector<LeagueSeat>& seats);
  // Up to `limit` of the period's seats after member `after` (by member bytes): a page.
  std::vector<LeagueSeat> seats(const PeriodKey& key, const std::string& after, std::int64_t limit);
  // An archived period's cohort, by the cohort's id or by one of its members (empty: none).
  std::vector<LeagueResult> cohort(const PeriodKey& key, const std::string& cohort);
  std::vector<LeagueResult> cohort_of(const PeriodKey& key, const std::string& member);

 private:
  std::shared_ptr<pg::Link> link_;
};

// The close (in the archive's transaction `txn`, after the period's history rows are written):
// each seated, ranked member's cohort rank and move into league_results, every such member's
// next division into league_members, inactive members dropped one division when the board
// says so, the board's close count bumped, and the counts per division returned as JSON
// ({"gold": {"promoted": 7, "stayed": 18, "relegated": 5}, ...}) for periods.league and the
// close notice. Exactly once: it commits with the archive, which never runs twice.
std::string league_close(pqxx::transaction_base& txn, const std::string& q, const PeriodKey& key,
                         const LeagueRules& league);

}  // namespace bk::cold
