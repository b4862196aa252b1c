// Pages of a period that has spilled: the board is the hot members plus the cold rows of
// members that are not hot, in one listing order with exact competition ranks.
//
// Consistency with a spill running at the same time: the cold rows come from one
// PostgreSQL snapshot taken after the spill generation was read, and the Redis reads come
// after it. A spill enters members in the stale set before committing their cold rows and
// bumps the generation when it removes them from Redis, so: a member in the snapshot and
// still hot is in the stale set (its cold row is skipped), and a member missing from both
// means a removal happened in between, which the generation shows (the read is repeated).
#include <algorithm>
#include <set>

#include "service/live_reads.h"
#include "service/read_steps.h"

namespace bk::service {

using read_steps::kMaxAttempts;
using read_steps::merge;
using read_steps::without;

std::vector<Standing> LiveReads::merged_top(const PeriodRef& ref, std::int64_t offset,
                                            std::int64_t count) {
  read_steps::require_cold(cold_, ref);
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck = read_steps::cold_key(ref);
  if (offset >= hot_.size(keys)) return merged_top_deep(ref, offset, count);
  const std::int64_t want = offset + count;
  std::int64_t slack = 16;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    begin_attempt(attempt);
    // The first pages (the common read) come from the cold summary without PostgreSQL.
    if (want <= ColdSummaries::kSummaryHead / 2) {
      const hot::ReadState st = hot_.read_state(keys, "", want);
      const ColdSummary* summary = summaries_.of(ref, keys, st);
      if (summary == nullptr) continue;
      if (auto all = listed_from_summary(*summary, st, want)) {
        return page_of(ref, std::move(*all), offset, want);
      }
    }
    const std::string gen_before = hot_.generation(keys);
    const auto reader = snapshot(ref, keys, gen_before);
    const auto cold_rows = reader->slice(ck, 0, want + slack);
    const hot::ReadState st = hot_.read_state(keys, "");
    const auto hot_rows = hot_.slice(keys, 0, want);
    if (hot_.generation(keys) != gen_before) continue;
    const std::set<std::string> skip(st.hot_and_stale.begin(), st.hot_and_stale.end());
    const auto cold_live = without(cold_rows, skip);
    if (static_cast<std::int64_t>(cold_rows.size()) == want + slack &&
        static_cast<std::int64_t>(cold_live.size()) < want) {
      slack = slack * 4 + static_cast<std::int64_t>(skip.size());  // skipped too many: read more
      continue;
    }
    return page_of(ref, merge(hot_rows, cold_live), offset, want);
  }
  throw read_steps::inconsistent(ref);
}

// A page past the hot members' count: PostgreSQL is asked for the cold row at position
// offset - |hot| (a key-only query, key0), Redis for how many hot members are listed before
// it, and the page lies at most the hot and stale members' worth of rows after key0: memory
// and transfer follow the hot size (about hot_keep), not the depth.
//
// With H the hot members, S the cold rows of hot members (stale: skipped) and k0 = offset -
// |H|: the listing holds P = k0 - |S before key0| + |H before key0| members before key0, and
// P <= offset; the page starts offset - P <= |H| + |S| members at or after key0.
std::vector<Standing> LiveReads::merged_top_deep(const PeriodRef& ref, std::int64_t offset,
                                                 std::int64_t count) {
  read_steps::require_cold(cold_, ref);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    begin_attempt(attempt);
    if (auto page = deep_attempt(ref, offset, count)) return std::move(*page);
  }
  throw read_steps::inconsistent(ref);
}

std::optional<std::vector<Standing>> LiveReads::deep_attempt(const PeriodRef& ref,
                                                             std::int64_t offset,
                                                             std::int64_t count) {
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck = read_steps::cold_key(ref);
  const std::string gen_before = hot_.generation(keys);
  const auto reader = snapshot(ref, keys, gen_before);
  const hot::ReadState st = hot_.read_state(keys, "");
  std::vector<ScoredMember> stale;  // cold rows of hot members, in listing order
  for (const auto& row : reader->rows_for(ck, st.hot_and_stale))
    stale.push_back({row.member, row.encoded});
  const std::int64_t k0 = std::max<std::int64_t>(0, offset - hot_.size(keys));
  const auto key0 = reader->key_at(ck, k0);
  const auto moved = [&] { return hot_.generation(keys) != gen_before; };
  if (!key0) {
    if (moved()) return std::nullopt;
    return std::vector<Standing>{};  // fewer than k0 + 1 cold rows: fewer than offset + 1 members
  }
  const ScoredMember at0{key0->second, key0->first};
  const auto stale_before = static_cast<std::int64_t>(
      std::lower_bound(stale.begin(), stale.end(), at0, listed_before) - stale.begin());
  const std::int64_t hot_before = hot_.neighbours(keys, at0.encoded, at0.member, 0).count_before;
  const std::int64_t listed_before_at0 = k0 - stale_before + hot_before;
  const std::int64_t skip_n = offset - listed_before_at0;  // >= 0
  const auto cold_rows = reader->from(ck, at0.encoded, at0.member,
                                      skip_n + count + static_cast<std::int64_t>(stale.size()));
  const std::set<std::string> skip(st.hot_and_stale.begin(), st.hot_and_stale.end());
  const std::vector<ScoredMember> all =
      merge(hot_.slice(keys, hot_before, skip_n + count), without(cold_rows, skip));
  if (static_cast<std::int64_t>(all.size()) <= skip_n) {
    if (moved()) return std::nullopt;
    return std::vector<Standing>{};
  }
  const auto first = all.begin() + skip_n;
  const auto last =
      all.begin() + std::min<std::int64_t>(static_cast<std::int64_t>(all.size()), skip_n + count);
  const std::vector<ScoredMember> page(first, last);
  // Everyone strictly better than the page's first entry: all members before key0 when
  // its score is better than the page's (else PostgreSQL counts), and those between.
  const std::int64_t e = page.front().encoded;
  std::int64_t better = listed_before_at0;
  if (at0.encoded >= e) {
    better = reader->count_better(ck, e) + hot_.count_better(keys, e) -
             std::count_if(stale.begin(), stale.end(),
                           [&](const ScoredMember& m) { return m.encoded < e; });
  }
  // The members between key0 and the page (none of them before key0).
  better += std::count_if(all.begin(), first, [&](const ScoredMember& m) { return m.encoded < e; });
  if (moved()) return std::nullopt;
  return ranked(ref, page, SliceStart{offset, better + 1});
}

// The page after a cursor's row on a spilled period, as of one spill generation (see the top
// of this file): the cold rows after the key from one snapshot, then the hot members after
// it and the key's place among them in one script call.
LiveReads::Following LiveReads::merged_after(const PeriodRef& ref, const ScoredMember& key,
                                             std::int64_t count) {
  read_steps::require_cold(cold_, ref);
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck = read_steps::cold_key(ref);
  std::int64_t slack = 16;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    begin_attempt(attempt);
    const std::string gen_before = hot_.generation(keys);
    const auto reader = snapshot(ref, keys, gen_before);
    const auto cold_rows = reader->after(ck, key.encoded, key.member, count + slack);
    const std::int64_t cold_before = reader->count_before(ck, key.encoded, key.member);
    const std::int64_t cold_better = reader->count_better(ck, key.encoded);
    const auto own = reader->rows_for(ck, {key.member});
    const hot::AfterKey hot = hot_.after(keys, key.encoded, key.member, count);
    if (!hot.cold) return following(ref, key, hot.through, hot.better, hot.after);
    const auto stale = reader->rows_for(ck, hot.hot_and_stale);  // the same snapshot
    if (hot_.generation(keys) != gen_before) continue;
    const std::set<std::string> skip(hot.hot_and_stale.begin(), hot.hot_and_stale.end());
    const auto cold_live = without(cold_rows, skip);
    if (static_cast<std::int64_t>(cold_rows.size()) == count + slack &&
        static_cast<std::int64_t>(cold_live.size()) < count) {
      slack = slack * 4 + static_cast<std::int64_t>(skip.size());  // skipped too many: read more
      continue;
    }
    // Cold rows at or before the key (the key's own row, if its member is cold there), less
    // the stale ones: cold rows of hot members are not part of the board.
    std::int64_t through = hot.through + cold_before;
    if (!own.empty() && own.front().encoded == key.encoded) ++through;
    std::int64_t better = hot.better + cold_better;
    for (const auto& row : stale) {
      if (!listed_before(key, {row.member, row.encoded})) --through;
      if (row.encoded < key.encoded) --better;
    }
    std::vector<ScoredMember> after = merge(hot.after, cold_live);
    if (static_cast<std::int64_t>(after.size()) > count)
      after.resize(static_cast<std::size_t>(count));
    return following(ref, key, through, better, after);
  }
  throw read_steps::inconsistent(ref);
}

}  // namespace bk::service
