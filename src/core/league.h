// A league board's pure rules (docs/architecture.md "Leagues"): its settings, how a seat is
// numbered and named, and which zone a standing in a cohort is in. The close applies the same
// zone rule in SQL (cold/league_close.cpp); tests/core/league_test.cpp holds both to it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct LeagueRules {
  std::vector<std::string> divisions;  // lowest first; 2..kMaxDivisions names
  std::int64_t cohort_size = 30;       // [2, kMaxCohortSize]
  std::int64_t promote = 0;            // the best `promote` of a cohort move up
  std::int64_t relegate = 0;           // the worst `relegate` move down
  std::int64_t start = 0;              // the division of a new member (index into divisions)
  bool inactive_drop = false;          // a member with no event in a closed period drops one
};
inline constexpr std::size_t kMaxDivisions = 32;
inline constexpr std::int64_t kMaxCohortSize = 1000;

// A seat: the member's division and its place in the order the division's seats were taken
// (1-based). Cohort n (1-based) of a division holds places (n-1)*size+1 .. n*size, so no
// cohort ever holds more than `size`. In Redis a seat is one ZSET score, division * 2^32 +
// place (exact in a double).
inline constexpr std::int64_t kSeatShift = std::int64_t{1} << 32;
struct Seat {
  std::int64_t division = 0;
  std::int64_t place = 0;
};
Seat decode_seat(std::int64_t score);
std::int64_t cohort_number(std::int64_t place, std::int64_t size);  // 1-based

// A cohort's id, "<division>-<n>" (e.g. "gold-3"), and back: nullopt for a text that names
// no cohort of these divisions.
struct CohortId {
  std::int64_t division = 0;
  std::int64_t number = 0;  // >= 1
};
std::string cohort_name(const LeagueRules& league, const CohortId& id);
std::optional<CohortId> parse_cohort(const LeagueRules& league, std::string_view text);

enum class Zone { promote, stay, relegate };
std::string_view zone_name(Zone zone);

// The zone of a standing in a cohort: `better` members of the cohort rank strictly above it,
// `worse` strictly below. Promoted when fewer than `promote` are better (ties at the cut-off
// all go up) and the division is not the top one; else relegated when fewer than `relegate`
// are worse (ties at the cut-off all go down) and the division is not the bottom one; else
// it stays. A member is never in both zones: promotion is decided first.
Zone zone_of(const LeagueRules& league, std::int64_t division, std::int64_t better,
             std::int64_t worse);

}  // namespace bk
