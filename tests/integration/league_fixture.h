// The league board the league suites share (league_test, league_kill_test,
// league_property_test): daily, tie_break none (ties on the cut-offs are common), divisions
// bronze < silver < gold, new members in silver, inactive members dropping one.
#pragma once
#include <cstdint>
#include <string>

namespace bk::test {

inline std::string league_board(std::int64_t cohort_size, std::int64_t promote,
                                std::int64_t relegate) {
  return R"(  - name: lg
    periods: [daily]
    tie_break: none
    max_points: 100000
    archive: {grace: 1m}
    retention: {default: 3650d}
    league:
      divisions: [bronze, silver, gold]
      cohort_size: )" +
         std::to_string(cohort_size) + "\n      promote: " + std::to_string(promote) +
         "\n      relegate: " + std::to_string(relegate) +
         "\n      start: silver\n      inactive: drop\n";
}

}  // namespace bk::test
