// A written member's standings before and after its update, from what the update script read
// in the same atomic step (hot::HotStanding): Redis alone answers a period that has not spilled
// and a score within its hot part; beyond it, the cold rows of the spill generation the script
// saw are counted too, as ranks_attempt (merged_ranks.cpp) counts them.
#include <algorithm>

#include "service/live_reads.h"
#include "service/read_steps.h"

namespace bk::service {

std::optional<BeforeAfter> LiveReads::update_standings(const PeriodRef& ref,
                                                       const std::string& member,
                                                       const hot::HotStanding& facts) {
  // Not hot after the event (a duplicate's member) in a spilled period: it may be cold.
  if (!facts.after && facts.spilled) return std::nullopt;
  // Listed before every cold member, or the period has none: hot members alone are better.
  const auto hot_part = [&](std::int64_t encoded) {
    return !facts.spilled || (facts.cold_bound && encoded < *facts.cold_bound);
  };
  std::vector<std::int64_t> beyond;
  for (const auto& score : {facts.before, facts.after}) {
    if (score && !hot_part(*score)) beyond.push_back(*score);
  }
  std::vector<std::int64_t> cold(beyond.size(), 0);
  if (!beyond.empty()) {
    if (!facts.hot_and_stale) {
      throw Error("internal: the update script read no stale set for a rank beyond the hot part");
    }
    auto counted = cold_better_at(ref, facts.gen, *facts.hot_and_stale, beyond);
    if (!counted) return std::nullopt;
    cold = std::move(*counted);
  }
  std::size_t next = 0;
  const auto standing = [&](const std::optional<std::int64_t>& score,
                            std::int64_t hot_better) -> std::optional<Standing> {
    if (!score) return std::nullopt;
    const std::int64_t cold_better = hot_part(*score) ? 0 : cold.at(next++);
    return decode_scored(ref, {member, *score}, 1 + hot_better + cold_better);
  };
  BeforeAfter out;
  out.before = standing(facts.before, facts.before_better);
  out.after = standing(facts.after, facts.after_better);
  return out;
}

// The cold rows of one spill generation are fixed: an index of it (from memory) answers for
// the moment the script read; PostgreSQL's rows are those of now, the same while the spill
// generation has not moved (rehydrations, which move only the other part, enter members in
// the stale set, which the script read with the rest).
std::optional<std::vector<std::int64_t>> LiveReads::cold_better_at(
    const PeriodRef& ref, const std::string& gen, const std::vector<std::string>& stale,
    const std::vector<std::int64_t>& encoded) {
  read_steps::require_cold(cold_, ref);
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck = read_steps::cold_key(ref);
  bool from_memory = false;
  const auto reader = snapshot(ref, keys, gen, &from_memory);
  // Cold rows of hot members (stale) and of removed ones (tombstones) are no members.
  std::vector<std::int64_t> skipped;
  for (const auto& row : reader->rows_for(ck, stale)) skipped.push_back(row.encoded);
  std::sort(skipped.begin(), skipped.end());
  std::vector<std::int64_t> counts = reader->count_better(ck, encoded);
  if (!from_memory && spill_generation(hot_.generation(keys)) != spill_generation(gen)) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    counts[i] -= std::lower_bound(skipped.begin(), skipped.end(), encoded[i]) - skipped.begin();
  }
  return counts;
}

}  // namespace bk::service
