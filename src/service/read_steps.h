// Steps the open-period reads share (service/live_reads.h): merging the two tiers' rows in
// listing order, skipping stale cold rows, and retrying a read that met a spill.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "service/tiers.h"
#include "service/types.h"

namespace bk::service::read_steps {

// A read that keeps meeting a running spill (each chunk it removes moves the generation)
// pauses a little more each time from the fourth attempt on, so that it lands between two
// chunks, and at worst waits for the spill to finish: up to about 3 s before it gives up.
inline constexpr int kMaxAttempts = 60;
void pause_before(int attempt);

// A merged read that kept meeting spills or rehydrations.
Error inconsistent(const PeriodRef& ref);

// The cold tier's snapshot for a read of `ref`, which has spilled: an Error saying so when the
// service has no cold tier.
void require_cold(const ColdTier& cold, const PeriodRef& ref);

cold::PeriodKey cold_key(const PeriodRef& ref);

// Members listed before/after in one order, from two sorted sources.
std::vector<ScoredMember> merge(const std::vector<ScoredMember>& a,
                                const std::vector<ScoredMember>& b);

// The cold rows that are members of the board: those of hot members (stale) skipped.
std::vector<ScoredMember> without(const std::vector<cold::ColdHit>& rows,
                                  const std::set<std::string>& skip);

// The first `want` rows of a spilled period are Redis's alone: they are hot and scored below
// every cold member (hot::ReadState::cold_bound).
bool in_hot_part(const hot::ReadState& st, std::int64_t want);

}  // namespace bk::service::read_steps
