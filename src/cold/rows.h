// Shared by the cold tier's concerns (internal to bk_cold): the checks of what goes into the
// cold tier, and the decoding of the member rows that come out of it.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "cold/pg.h"
#include "cold/types.h"

namespace bk::cold {

// Throws RefusedError naming `what` when `s` holds a NUL byte (PostgreSQL text cannot).
void check_text(std::string_view what, const std::string& s);
void check_period(const PeriodKey& p);

// Columns every member read returns, in this order (see hit_from).
inline constexpr std::string_view kHitColumns =
    "member, encoded, points, "
    "round(extract(epoch FROM achieved_at) * 1000)::bigint AS achieved_ms, version";

// The row's kHitColumns, starting at column `first`.
ColdHit hit_from(const pqxx::row& r, pqxx::row::size_type first);
std::vector<ColdHit> hits_from(const pqxx::result& res);

}  // namespace bk::cold
