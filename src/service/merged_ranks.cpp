// Ranks and neighbourhoods of members of a period that has spilled (see merged_reads.cpp for
// why one snapshot and the spill generation make the answer consistent).
#include <algorithm>
#include <set>
#include <unordered_map>

#include "service/live_reads.h"
#include "service/read_steps.h"

namespace bk::service {

using read_steps::kMaxAttempts;
using read_steps::merge;
using read_steps::without;

namespace {

// The member and its nearest k each side from both tiers, in listing order; `before` of them
// listed before it.
struct AroundSlice {
  std::vector<ScoredMember> members;
  std::size_t before = 0;
};

// `cold_before` nearest first, `cold_after` in listing order (both without stale rows).
AroundSlice around_slice(const ScoredMember& self, std::vector<ScoredMember> cold_before,
                         const std::vector<ScoredMember>& cold_after, const hot::Neighbours& hot,
                         std::size_t k) {
  std::vector<ScoredMember> before = std::move(cold_before);
  before.insert(before.end(), hot.before.begin(), hot.before.end());
  std::sort(before.begin(), before.end(),
            [](const ScoredMember& a, const ScoredMember& b) { return listed_before(b, a); });
  if (before.size() > k) before.resize(k);
  std::reverse(before.begin(), before.end());
  std::vector<ScoredMember> after = merge(cold_after, hot.after);
  if (after.size() > k) after.resize(k);
  AroundSlice out{std::move(before), 0};
  out.before = out.members.size();
  out.members.push_back(self);
  out.members.insert(out.members.end(), after.begin(), after.end());
  return out;
}

}  // namespace

std::optional<Standing> LiveReads::merged_rank(const PeriodRef& ref, const std::string& member) {
  const auto around = merged_around(ref, member, 0);
  if (around.empty()) return std::nullopt;
  return around.front();
}

std::vector<Standing> LiveReads::merged_around(const PeriodRef& ref, const std::string& member,
                                               std::int64_t k) {
  read_steps::require_cold(cold_, ref);
  std::int64_t slack = 16;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    begin_attempt(attempt);
    if (auto rows = around_attempt(ref, member, k, slack)) return std::move(*rows);
  }
  throw read_steps::inconsistent(ref);
}

std::optional<std::vector<Standing>> LiveReads::around_attempt(const PeriodRef& ref,
                                                               const std::string& member,
                                                               std::int64_t k,
                                                               std::int64_t& slack) {
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck = read_steps::cold_key(ref);
  const hot::ReadState first = hot_.read_state(keys, member);
  const auto reader = snapshot(ref, keys, first.gen);
  // The member's score: hot wins; otherwise its cold row.
  ScoredMember self{member, first.member_score.value_or(0)};
  if (!first.member_score) {
    // A member in the stale set that is not hot was removed (a tombstone): its row is void.
    const bool removed = std::find(first.hot_and_stale.begin(), first.hot_and_stale.end(),
                                   member) != first.hot_and_stale.end();
    const auto rows = removed ? std::vector<cold::ColdHit>{} : reader->rows_for(ck, {member});
    if (rows.empty()) {
      if (hot_.generation(keys) != first.gen) return std::nullopt;  // it may have just moved
      return std::vector<Standing>{};
    }
    self.encoded = rows.front().encoded;
  }
  const auto cold_before = reader->before(ck, self.encoded, member, k + slack);
  const auto cold_after = reader->after(ck, self.encoded, member, k + slack);
  std::int64_t cold_count_before = reader->count_before(ck, self.encoded, member);

  const hot::ReadState st = hot_.read_state(keys, member);
  if (st.member_score != first.member_score) return std::nullopt;  // updated meanwhile
  const std::set<std::string> skip(st.hot_and_stale.begin(), st.hot_and_stale.end());
  // Cold rows of hot members are not part of the board: take them out of the counts.
  const auto stale = reader->rows_for(ck, st.hot_and_stale);
  for (const auto& row : stale) {
    if (listed_before({row.member, row.encoded}, self)) --cold_count_before;
  }
  auto live_before = without(cold_before, skip);
  const auto live_after = without(cold_after, skip);
  const auto k_size = static_cast<std::size_t>(k);
  if ((static_cast<std::int64_t>(cold_before.size()) == k + slack && live_before.size() < k_size) ||
      (static_cast<std::int64_t>(cold_after.size()) == k + slack && live_after.size() < k_size)) {
    slack = slack * 4 + static_cast<std::int64_t>(skip.size());
    return std::nullopt;
  }
  const hot::Neighbours hot_n = hot_.neighbours(keys, self.encoded, member, k);
  const AroundSlice slice = around_slice(self, std::move(live_before), live_after, hot_n, k_size);
  const std::int64_t first_position =
      hot_n.count_before + cold_count_before - static_cast<std::int64_t>(slice.before);
  // 1 + everyone strictly better than the first entry, in both tiers.
  const std::int64_t first_encoded = slice.members.front().encoded;
  std::int64_t better =
      hot_.count_better(keys, first_encoded) + reader->count_better(ck, first_encoded);
  for (const auto& row : stale) {
    if (row.encoded < first_encoded) --better;
  }
  if (hot_.generation(keys) != first.gen) return std::nullopt;
  const auto ranks = competition_ranks(slice.members, SliceStart{first_position, better + 1});
  std::vector<Standing> out;
  for (std::size_t i = 0; i < slice.members.size(); ++i) {
    if (k == 0 && slice.members[i].member != member) continue;
    out.push_back(decode_scored(ref, slice.members[i], ranks[i]));
  }
  return out;
}

// The period's members as of a ranks read of `st` (whose generation it checked after its cold
// reads): the hot ones and the cold rows that are no stale copy of a hot member's (as
// ColdSummaries counts them), from what is kept for the generation or else counted in the
// read's own snapshot (repeatable read: the same rows it ranked against) and kept.
std::optional<std::int64_t> LiveReads::members_of(const hot::PeriodKeys& keys,
                                                  const cold::PeriodKey& ck,
                                                  const hot::ReadState& st, ColdSnapshot* reader,
                                                  std::size_t stale) {
  if (!st.spilled) return st.size;
  if (reader == nullptr) return std::nullopt;
  std::optional<std::int64_t> live = summaries_.live(keys.meta, st.gen);
  if (!live) {
    live = reader->count(ck) - static_cast<std::int64_t>(stale);
    summaries_.remember_live(keys.meta, st.gen, *live);
  }
  return st.size + *live;
}

std::vector<std::optional<Standing>> LiveReads::ranks_of(const PeriodRef& ref,
                                                         const std::vector<std::string>& members,
                                                         std::optional<std::int64_t>* members_out) {
  check_bound(ref, "members", static_cast<std::int64_t>(members.size()), kMaxReadRows);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    begin_attempt(attempt);
    if (auto found = ranks_attempt(ref, members, members_out)) return std::move(*found);
  }
  throw read_steps::inconsistent(ref);
}

std::optional<std::vector<std::optional<Standing>>> LiveReads::ranks_attempt(
    const PeriodRef& ref, const std::vector<std::string>& members,
    std::optional<std::int64_t>* members_out) {
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck = read_steps::cold_key(ref);
  const hot::ReadState st = hot_.read_state(keys, "");
  const auto hot_scores = hot_.scores(keys, members);
  std::vector<std::optional<std::int64_t>> score(hot_scores.begin(), hot_scores.end());
  std::unique_ptr<ColdSnapshot> reader;
  std::vector<std::int64_t> stale;  // encoded scores of cold rows of hot members, sorted
  // All of them hot and scored below every cold member: Redis alone answers.
  const bool hot_part = st.cold_bound && std::all_of(score.begin(), score.end(), [&](auto& s) {
                          return s && *s < *st.cold_bound;
                        });
  if (st.spilled && !hot_part) {
    read_steps::require_cold(cold_, ref);
    reader = snapshot(ref, keys, st.gen);
    // Not hot, and not removed (a tombstone: in the stale set, not hot; its row is void).
    const std::set<std::string> void_rows(st.hot_and_stale.begin(), st.hot_and_stale.end());
    std::vector<std::string> missing;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (!score[i] && void_rows.count(members[i]) == 0) missing.push_back(members[i]);
    }
    std::unordered_map<std::string, std::int64_t> cold_score;
    for (const auto& row : reader->rows_for(ck, missing)) cold_score[row.member] = row.encoded;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto it = cold_score.find(members[i]);
      if (!score[i] && it != cold_score.end()) score[i] = it->second;
    }
    for (const auto& row : reader->rows_for(ck, st.hot_and_stale)) stale.push_back(row.encoded);
    std::sort(stale.begin(), stale.end());
  }
  std::vector<std::int64_t> found;
  for (const auto& s : score) {
    if (s) found.push_back(*s);
  }
  const auto hot_better = hot_.count_better(keys, found);
  const auto cold_better =
      reader ? reader->count_better(ck, found) : std::vector<std::int64_t>(found.size(), 0);
  if (hot_.generation(keys) != st.gen) return std::nullopt;
  if (members_out) *members_out = members_of(keys, ck, st, reader.get(), stale.size());
  std::vector<std::optional<Standing>> out(members.size());
  for (std::size_t i = 0, f = 0; i < members.size(); ++i) {
    if (!score[i]) continue;
    // 1 + the members strictly better in both tiers (a stale cold row is no member).
    const auto stale_better =
        std::lower_bound(stale.begin(), stale.end(), *score[i]) - stale.begin();
    out[i] = decode_scored(ref, {members[i], *score[i]},
                           1 + hot_better[f] + cold_better[f] - stale_better);
    ++f;
  }
  return out;
}

}  // namespace bk::service
