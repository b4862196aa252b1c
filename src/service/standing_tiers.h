// The tier (core/tiers.h, the board's `tiers:`) of each standing an open period's read returns:
// what every read of a tiered board carries. Rank and points are the read's own; a percent rule
// also needs the period's member count, asked for once per read and only when a standing
// reaches such a rule: ranks take it from their own read (Reads::open_ranks), the other reads
// ask LiveReads::count (one Redis round trip); either way a spilled period's cold count costs
// at most one PostgreSQL round trip, none once kept for its spill generation.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/tiers.h"
#include "service/types.h"

namespace bk::service {

// The period's member count; nullopt when it cannot be had right now (PostgreSQL down).
using MemberCount = std::function<std::optional<std::int64_t>()>;

// Sets each row's `tier` from `tiers`. `members` is called at most once. A row whose tier
// needs the count when `members` gives none gets no tier and lists "tier" in `unavailable`.
void attach_tiers(const Tiers& tiers, std::vector<Standing>& rows, const MemberCount& members);

}  // namespace bk::service
