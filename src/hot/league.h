// A league board's keys in Redis (docs/architecture.md "Leagues"): the divisions cache, a
// period's seats and waiting members, opening its cohorts, restoring its seats, reading one
// cohort. The update path seats members itself (update_league.lua); these are tick's steps
// and the reads'.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "hot/board_scripts.h"
#include "hot/keys.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace bk::hot {

// One seat as Redis holds it: the member and division * 2^32 + place (core/league.h).
struct SeatRow {
  std::string member;
  std::int64_t seat = 0;
};

// One cohort as read: its division's index and number, and its members with their encoded
// scores (nullopt: seated, not ranked now, e.g. removed).
struct CohortRead {
  std::int64_t division = 0;
  std::int64_t number = 0;
  std::vector<std::pair<std::string, std::optional<std::int64_t>>> members;
};

// A period of a league board.
struct LeaguePeriod {
  std::string board;
  std::string period;
  std::string period_id;
};

class League {
 public:
  explicit League(std::string key_prefix);

  // The close count the divisions cache was copied at; nullopt while it is incomplete.
  std::optional<std::int64_t> divisions_version(redis::Connection& conn, const std::string& board);
  // The cache copied anew: emptied first, then the divisions (member, index) a page at a time,
  // then marked complete at `version`; meanwhile the update path finds it incomplete and lets
  // members wait (update_league.lua).
  void clear_divisions(redis::Connection& conn, const std::string& board);
  void add_divisions(redis::Connection& conn, const std::string& board,
                     const std::vector<std::pair<std::string, std::int64_t>>& divisions);
  void mark_divisions(redis::Connection& conn, const std::string& board, std::int64_t version);
  // Whether the period's cohorts are open at `version` (:meta "league").
  bool is_open(redis::Connection& conn, const LeaguePeriod& p, std::int64_t version);
  // Seats the waiting members in first-event order and opens the cohorts. False when the
  // divisions cache is not at `version` (copy it again first).
  bool open(redis::Connection& conn, const LeaguePeriod& p, std::int64_t version,
            std::int64_t start, Instant expire_at);
  // Puts seats back (each member without one), raising each division's fill past them.
  void restore(redis::Connection& conn, const LeaguePeriod& p, const std::vector<SeatRow>& seats,
               Instant expire_at);
  // Seats of division `division` at places after `after`, by place, at most `limit`.
  std::vector<SeatRow> seats_after(redis::Connection& conn, const LeaguePeriod& p,
                                   std::int64_t division, std::int64_t after, std::int64_t limit);
  // The member's cohort (nullopt: no seat), or cohort `number` of `division`.
  std::optional<CohortRead> cohort_of(redis::Connection& conn, const LeaguePeriod& p,
                                      const std::string& member, std::int64_t size);
  CohortRead cohort(redis::Connection& conn, const LeaguePeriod& p, std::int64_t division,
                    std::int64_t number, std::int64_t size);
  // Whether the member waits for the period's cohorts to open.
  bool waiting(redis::Connection& conn, const LeaguePeriod& p, const std::string& member);

 private:
  std::string prefix_;
  redis::Script open_;
  redis::Script restore_;
  redis::Script cohort_;

  std::optional<CohortRead> read_cohort(redis::Connection& conn, const LeaguePeriod& p,
                                        const redis::Args& args);
};

}  // namespace bk::hot
