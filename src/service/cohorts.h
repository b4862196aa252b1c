// A league board's cohort reads (docs/architecture.md "Leagues"): one cohort's whole listing
// with each row's zone, found by a member or by the cohort's id, from Redis while the period is
// live and from league_results once it is archived. Reads::cohort_of / Reads::cohort.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/league.h"
#include "core/time.h"

namespace bk::service {

struct CohortRow {
  std::int64_t rank = 0;  // competition rank within the cohort
  std::string member;
  std::int64_t points = 0;
  std::optional<Instant> achieved_at;  // live periods on boards with a tie-break
  // Live: by the current standing (core/league.h, zone_of); archived: the move the close made.
  Zone zone = Zone::stay;
};

struct Cohort {
  std::string division;
  std::string cohort;           // "<division>-<n>"
  std::vector<CohortRow> rows;  // by rank, then member bytes
  bool archived = false;
};

}  // namespace bk::service
