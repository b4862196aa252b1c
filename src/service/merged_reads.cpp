// Reads of a period that has spilled: the board is the hot members plus the cold rows of
// members that are not hot, in one listing order with exact competition ranks.
//
// Consistency with a spill running at the same time: the cold rows come from one
// PostgreSQL snapshot taken after the spill generation was read, and the Redis reads come
// after it. A spill enters members in the stale set before committing their cold rows and
// bumps the generation when it removes them from Redis, so: a member in the snapshot and
// still hot is in the stale set (its cold row is skipped), and a member missing from both
// means a removal happened in between, which the generation shows (the read is repeated).
#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "service/leaderboards.h"

namespace bk::service {
namespace {

// A read that keeps meeting a running spill (each chunk it removes moves the generation)
// pauses a little more each time from the fourth attempt on, so that it lands between two
// chunks, and at worst waits for the spill to finish: up to about 3 s before it gives up.
constexpr int kMaxAttempts = 60;

void pause_before(int attempt) {
  if (attempt >= 3) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(attempt, 60)));
}

// Members listed before/after in one order, from two sorted sources.
std::vector<ScoredMember> merge(const std::vector<ScoredMember>& a,
                                const std::vector<ScoredMember>& b) {
  std::vector<ScoredMember> out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), listed_before);
  return out;
}

std::vector<ScoredMember> without(const std::vector<cold::ColdHit>& rows,
                                  const std::set<std::string>& skip) {
  std::vector<ScoredMember> out;
  for (const auto& r : rows) {
    if (skip.count(r.member) == 0) out.push_back({r.member, r.encoded});
  }
  return out;
}

// The first `want` rows of a spilled period are Redis's alone: they are hot and scored below
// every cold member (hot::ReadState::cold_bound).
bool in_hot_part(const hot::ReadState& st, std::int64_t want) {
  return st.cold_bound && static_cast<std::int64_t>(st.head.size()) >= want && want > 0 &&
         st.head[static_cast<std::size_t>(want) - 1].encoded < *st.cold_bound;
}

cold::PeriodKey cold_key(const PeriodRef& ref) {
  return {ref.board, ref.spec->name, ref.period.id};
}

}  // namespace

cold::ColdStore& Leaderboards::cold_for(const PeriodRef& ref) {
  if (!has_cold()) {
    throw Error("period " + ref.spec->name + ":" + ref.period.id + " of board '" + ref.board +
                "' has spilled to the cold tier; reading it needs PostgreSQL");
  }
  return cold_store();
}

Standing Leaderboards::decode_scored(const PeriodRef& ref, const ScoredMember& m,
                                     std::int64_t rank) const {
  return decode(ref, hot::Listed{m.member, m.encoded, rank});
}

std::vector<Standing> Leaderboards::ranked(const PeriodRef& ref,
                                           const std::vector<ScoredMember>& page,
                                           SliceStart start) const {
  const auto ranks = competition_ranks(page, start);
  std::vector<Standing> out;
  out.reserve(page.size());
  for (std::size_t i = 0; i < page.size(); ++i)
    out.push_back(decode_scored(ref, page[i], ranks[i]));
  return out;
}

Error Leaderboards::inconsistent(const PeriodRef& ref) {
  return Error("could not read " + ref.board + " " + ref.spec->name + " " + ref.period.id +
               " consistently while spills kept running; try again");
}

std::vector<Standing> Leaderboards::merged_top(const PeriodRef& ref, std::int64_t offset,
                                               std::int64_t count) {
  cold::ColdStore& cold = cold_for(ref);
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck{ref.board, ref.spec->name, ref.period.id};
  if (offset >= hot_.size(redis_, keys.live)) return merged_top_deep(ref, offset, count);
  const std::int64_t want = offset + count;
  std::int64_t slack = 16;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) ++counters_.retries;
    pause_before(attempt);
    // The first pages (the common read) come from the cold summary without PostgreSQL.
    if (want <= kSummaryHead / 2) {
      const hot::ReadState st = hot_.read_state(redis_, keys, "", want);
      const ColdSummary* summary = cold_summary(ref, keys, st);
      if (summary == nullptr) continue;
      if (auto all = listed_from_summary(*summary, st, want)) {
        return page_of(ref, std::move(*all), offset, want);
      }
    }
    const std::string gen_before = hot_.generation(redis_, keys);
    cold::ColdReader reader = cold.reader();
    const auto cold_rows = reader.slice(ck, 0, want + slack);
    const hot::ReadState st = hot_.read_state(redis_, keys, "");
    const auto hot_rows = hot_.slice(redis_, keys.live, 0, want);
    if (hot_.generation(redis_, keys) != gen_before) continue;
    const std::set<std::string> skip(st.hot_and_stale.begin(), st.hot_and_stale.end());
    const auto cold_live = without(cold_rows, skip);
    if (static_cast<std::int64_t>(cold_rows.size()) == want + slack &&
        static_cast<std::int64_t>(cold_live.size()) < want) {
      slack = slack * 4 + static_cast<std::int64_t>(skip.size());  // skipped too many: read more
      continue;
    }
    return page_of(ref, merge(hot_rows, cold_live), offset, want);
  }
  throw inconsistent(ref);
}

std::vector<Standing> Leaderboards::page_of(const PeriodRef& ref, std::vector<ScoredMember> all,
                                            std::int64_t offset, std::int64_t want) const {
  if (static_cast<std::int64_t>(all.size()) > want) all.resize(static_cast<std::size_t>(want));
  if (static_cast<std::int64_t>(all.size()) <= offset) return {};
  const std::vector<ScoredMember> page(all.begin() + offset, all.end());
  // Everything strictly better than the page's first entry is in the prefix we hold.
  const auto better = std::count_if(all.begin(), all.begin() + offset, [&](const ScoredMember& m) {
    return m.encoded < page.front().encoded;
  });
  return ranked(ref, page, SliceStart{offset, better + 1});
}

// A page past the hot members' count: PostgreSQL is asked for the cold row at position
// offset - |hot| (a key-only query, key0), Redis for how many hot members are listed before
// it, and the page lies at most the hot and stale members' worth of rows after key0: memory
// and transfer follow the hot size (about hot_keep), not the depth.
//
// With H the hot members, S the cold rows of hot members (stale: skipped) and k0 = offset -
// |H|: the listing holds P = k0 - |S before key0| + |H before key0| members before key0, and
// P <= offset; the page starts offset - P <= |H| + |S| members at or after key0.
std::vector<Standing> Leaderboards::merged_top_deep(const PeriodRef& ref, std::int64_t offset,
                                                    std::int64_t count) {
  cold::ColdStore& cold = cold_for(ref);
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck{ref.board, ref.spec->name, ref.period.id};
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) ++counters_.retries;
    pause_before(attempt);
    const std::string gen_before = hot_.generation(redis_, keys);
    cold::ColdReader reader = cold.reader();
    const hot::ReadState st = hot_.read_state(redis_, keys, "");
    std::vector<ScoredMember> stale;  // cold rows of hot members, in listing order
    for (const auto& row : reader.rows_for(ck, st.hot_and_stale))
      stale.push_back({row.member, row.encoded});
    const std::int64_t k0 = std::max<std::int64_t>(0, offset - hot_.size(redis_, keys.live));
    const auto key0 = reader.key_at(ck, k0);
    if (!key0) {
      if (hot_.generation(redis_, keys) != gen_before) continue;
      return {};  // fewer than k0 + 1 cold rows: fewer than offset + 1 members in all
    }
    const ScoredMember at0{key0->second, key0->first};
    const auto stale_before = static_cast<std::int64_t>(
        std::lower_bound(stale.begin(), stale.end(), at0, listed_before) - stale.begin());
    const std::int64_t hot_before =
        hot_.neighbours(redis_, keys, at0.encoded, at0.member, 0).count_before;
    const std::int64_t listed_before_at0 = k0 - stale_before + hot_before;
    const std::int64_t skip_n = offset - listed_before_at0;  // >= 0
    const auto cold_rows = reader.from(ck, at0.encoded, at0.member,
                                       skip_n + count + static_cast<std::int64_t>(stale.size()));
    const std::set<std::string> skip(st.hot_and_stale.begin(), st.hot_and_stale.end());
    const std::vector<ScoredMember> hot_rest =
        hot_.slice(redis_, keys.live, hot_before, skip_n + count);
    const std::vector<ScoredMember> all = merge(hot_rest, without(cold_rows, skip));
    if (static_cast<std::int64_t>(all.size()) <= skip_n) {
      if (hot_.generation(redis_, keys) != gen_before) continue;
      return {};
    }
    const auto first = all.begin() + skip_n;
    const auto last =
        all.begin() + std::min<std::int64_t>(static_cast<std::int64_t>(all.size()), skip_n + count);
    const std::vector<ScoredMember> page(first, last);
    // Everyone strictly better than the page's first entry: all members before key0 when
    // its score is better than the page's (else PostgreSQL counts), and those between.
    const std::int64_t e = page.front().encoded;
    std::int64_t better = 0;
    if (at0.encoded < e) {
      better = listed_before_at0;
    } else {
      better = reader.count_better(ck, e) + hot_.count_better(redis_, keys.live, e) -
               std::count_if(stale.begin(), stale.end(),
                             [&](const ScoredMember& m) { return m.encoded < e; });
    }
    // The members between key0 and the page (none of them before key0).
    better +=
        std::count_if(all.begin(), first, [&](const ScoredMember& m) { return m.encoded < e; });
    if (hot_.generation(redis_, keys) != gen_before) continue;
    return ranked(ref, page, SliceStart{offset, better + 1});
  }
  throw inconsistent(ref);
}

std::optional<Standing> Leaderboards::merged_rank(const PeriodRef& ref, const std::string& member) {
  const auto around = merged_around(ref, member, 0);
  if (around.empty()) return std::nullopt;
  return around.front();
}

std::vector<Standing> Leaderboards::merged_around(const PeriodRef& ref, const std::string& member,
                                                  std::int64_t k) {
  cold::ColdStore& cold = cold_for(ref);
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck{ref.board, ref.spec->name, ref.period.id};
  std::int64_t slack = 16;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) ++counters_.retries;
    pause_before(attempt);
    const hot::ReadState first = hot_.read_state(redis_, keys, member);
    cold::ColdReader reader = cold.reader();
    // The member's score: hot wins; otherwise its cold row.
    ScoredMember self{member, 0};
    if (first.member_score) {
      self.encoded = *first.member_score;
    } else {
      const auto rows = reader.rows_for(ck, {member});
      if (rows.empty()) {
        if (hot_.generation(redis_, keys) != first.gen) continue;  // it may have just moved
        return {};
      }
      self.encoded = rows.front().encoded;
    }
    const auto cold_before = reader.before(ck, self.encoded, member, k + slack);
    const auto cold_after = reader.after(ck, self.encoded, member, k + slack);
    std::int64_t cold_count_before = reader.count_before(ck, self.encoded, member);

    const hot::ReadState st = hot_.read_state(redis_, keys, member);
    if (st.member_score != first.member_score) continue;  // updated meanwhile: read again
    const std::set<std::string> skip(st.hot_and_stale.begin(), st.hot_and_stale.end());
    // Cold rows of hot members are not part of the board: take them out of the counts.
    for (const auto& row : reader.rows_for(ck, st.hot_and_stale)) {
      if (listed_before({row.member, row.encoded}, self)) --cold_count_before;
    }
    const auto live_before = without(cold_before, skip);
    const auto live_after = without(cold_after, skip);
    const auto k_size = static_cast<std::size_t>(k);
    if ((static_cast<std::int64_t>(cold_before.size()) == k + slack &&
         live_before.size() < k_size) ||
        (static_cast<std::int64_t>(cold_after.size()) == k + slack && live_after.size() < k_size)) {
      slack = slack * 4 + static_cast<std::int64_t>(skip.size());
      continue;
    }
    const hot::Neighbours hot_n = hot_.neighbours(redis_, keys, self.encoded, member, k);

    // Nearest k on each side, from both tiers.
    std::vector<ScoredMember> before = live_before;  // nearest first
    before.insert(before.end(), hot_n.before.begin(), hot_n.before.end());
    std::sort(before.begin(), before.end(),
              [](const ScoredMember& a, const ScoredMember& b) { return listed_before(b, a); });
    if (before.size() > k_size) before.resize(k_size);
    std::reverse(before.begin(), before.end());
    std::vector<ScoredMember> after = merge(live_after, hot_n.after);
    if (after.size() > k_size) after.resize(k_size);

    std::vector<ScoredMember> slice = before;
    slice.push_back(self);
    slice.insert(slice.end(), after.begin(), after.end());
    const std::int64_t self_position = hot_n.count_before + cold_count_before;
    const std::int64_t first_position = self_position - static_cast<std::int64_t>(before.size());
    // 1 + everyone strictly better than the first entry, in both tiers.
    const std::int64_t first_encoded = slice.front().encoded;
    std::int64_t better = hot_.count_better(redis_, keys.live, first_encoded) +
                          reader.count_better(ck, first_encoded);
    for (const auto& row : reader.rows_for(ck, st.hot_and_stale)) {
      if (row.encoded < first_encoded) --better;
    }
    if (hot_.generation(redis_, keys) != first.gen) continue;
    const auto ranks = competition_ranks(slice, SliceStart{first_position, better + 1});
    std::vector<Standing> out;
    for (std::size_t i = 0; i < slice.size(); ++i) {
      if (k == 0 && slice[i].member != member) continue;
      out.push_back(decode_scored(ref, slice[i], ranks[i]));
    }
    return out;
  }
  throw inconsistent(ref);
}

const Leaderboards::ColdSummary* Leaderboards::cold_summary(const PeriodRef& ref,
                                                            const hot::PeriodKeys& keys,
                                                            const hot::ReadState& st) {
  if (const auto it = summaries_.find(keys.meta);
      it != summaries_.end() && it->second.gen == st.gen) {
    return &it->second;
  }
  const cold::PeriodKey ck{ref.board, ref.spec->name, ref.period.id};
  cold::ColdReader reader = cold_for(ref).reader();
  ColdSummary summary{st.gen, reader.count(ck), {}};
  for (const auto& row : reader.slice(ck, 0, kSummaryHead))
    summary.head.push_back({row.member, row.encoded});
  // The hot members whose rows are in this snapshot are in the stale set by now (a spill
  // enters them before it commits their rows).
  const hot::ReadState after = hot_.read_state(redis_, keys, "");
  if (after.gen != st.gen) return nullptr;
  summary.live -= static_cast<std::int64_t>(reader.rows_for(ck, after.hot_and_stale).size());
  if (summaries_.size() >= 256) summaries_.clear();  // bounded: reads move on to new periods
  return &(summaries_[keys.meta] = std::move(summary));
}

std::optional<std::vector<ScoredMember>> Leaderboards::listed_from_summary(
    const ColdSummary& summary, const hot::ReadState& st, std::int64_t want) const {
  // A hot member whose cold row is in the summary is in the stale set (see ColdSummary).
  const std::set<std::string> skip(st.hot_and_stale.begin(), st.hot_and_stale.end());
  std::vector<ScoredMember> cold_live;
  for (const auto& m : summary.head) {
    if (skip.count(m.member) == 0) cold_live.push_back(m);
  }
  // Enough live cold rows, or every cold row there is.
  if (static_cast<std::int64_t>(cold_live.size()) < want &&
      static_cast<std::int64_t>(summary.head.size()) == kSummaryHead) {
    return std::nullopt;
  }
  return merge(st.head, cold_live);
}

std::int64_t Leaderboards::count(const PeriodRef& ref) {
  const hot::PeriodKeys keys = period_keys(ref);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    pause_before(attempt);
    const hot::ReadState st = hot_.read_state(redis_, keys, "");
    if (!st.spilled) return st.size;
    if (const ColdSummary* cold = cold_summary(ref, keys, st)) return st.size + cold->live;
  }
  throw inconsistent(ref);
}

Leaderboards::Counted Leaderboards::first_page(const PeriodRef& ref, std::int64_t count) {
  KnownProfiles known;
  Counted page = first_page_rows(ref, count, &known);
  attach_profiles(ref.board, page.rows, &known);
  return page;
}

Leaderboards::Counted Leaderboards::first_page_rows(const PeriodRef& ref, std::int64_t count,
                                                    KnownProfiles* known) {
  check_bound(ref, "count", count, kMaxReadRows);
  const hot::PeriodKeys keys = period_keys(ref);
  const hot::BoardKeys board(config_.redis.key_prefix, ref.board);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) ++counters_.retries;
    pause_before(attempt);
    // Atomic: the generation, the stale set, the size and the first members agree.
    const hot::ReadState st =
        hot_.read_state(redis_, keys, "", count, known != nullptr ? &board : nullptr);
    if (known != nullptr) {
      known->names_moved = st.names_moved;
      known->metadata_moved = st.metadata_moved;
      known->by_member.clear();
      for (std::size_t i = 0; i < st.head_names.size(); ++i) {
        known->by_member.emplace(st.head[i].member,
                                 std::pair{st.head_names[i], st.head_metadata[i]});
      }
    }
    if (!st.spilled) return {st.size, page_of(ref, st.head, 0, count)};
    if (in_hot_part(st, count)) {
      bool moved = false;
      const auto total = total_if_reachable(ref, keys, st, moved);
      if (moved) continue;
      return {total, page_of(ref, st.head, 0, count)};
    }
    const ColdSummary* summary = cold_summary(ref, keys, st);
    if (summary == nullptr) continue;
    const std::int64_t total = st.size + summary->live;
    if (count <= kSummaryHead / 2) {
      if (auto all = listed_from_summary(*summary, st, count)) {
        return {total, page_of(ref, std::move(*all), 0, count)};
      }
    }
    return {total, top_rows(ref, 0, count)};
  }
  throw inconsistent(ref);
}

std::int64_t Leaderboards::listing_score(const PeriodRef& ref, const Standing& s) const {
  try {
    return ScoreCodec(layout(*ref.spec))
        .encode(s.points, s.achieved_at.value_or(ref.period.start), ref.period.start);
  } catch (const OutOfRangeError& e) {
    throw UsageError("not a standing of " + ref.board + " " + ref.spec->name + " " + ref.period.id +
                     ": " + e.what());
  }
}

std::optional<std::int64_t> Leaderboards::total_if_reachable(const PeriodRef& ref,
                                                             const hot::PeriodKeys& keys,
                                                             const hot::ReadState& st,
                                                             bool& moved) {
  try {
    const ColdSummary* summary = cold_summary(ref, keys, st);
    moved = summary == nullptr;
    if (moved) return std::nullopt;
    return st.size + summary->live;
  } catch (const UnavailableError& e) {
    if (e.backend() != Backend::postgres) throw;
    spdlog::warn("{} {} {}: the cold members are not counted: {}", ref.board, ref.spec->name,
                 ref.period.id, e.what());
    return std::nullopt;
  }
}

Leaderboards::Following Leaderboards::listed_after(const PeriodRef& ref, const Standing& mark,
                                                   std::int64_t count) {
  check_bound(ref, "count", count, kMaxReadRows);
  const ScoredMember key{mark.member, listing_score(ref, mark)};
  const hot::AfterKey hot = hot_.after(redis_, period_keys(ref), key.encoded, key.member, count);
  Following out = hot.cold ? merged_after(ref, key, count)
                           : following(ref, key, hot.through, hot.better, hot.after);
  attach_profiles(ref.board, out.rows);
  return out;
}

Leaderboards::Following Leaderboards::following(const PeriodRef& ref, const ScoredMember& key,
                                                std::int64_t through, std::int64_t better,
                                                const std::vector<ScoredMember>& after) const {
  if (after.empty()) return {through, {}};
  // Everyone listed at or before the key scores at most the key's score: all of them are
  // better than a first row scored worse than the key, else those scored below the key.
  const std::int64_t first_better = after.front().encoded > key.encoded ? through : better;
  return {through, ranked(ref, after, SliceStart{through, first_better + 1})};
}

// The page after a cursor's row on a spilled period, as of one spill generation (see the top
// of this file): the cold rows after the key from one snapshot, then the hot members after
// it and the key's place among them in one script call.
Leaderboards::Following Leaderboards::merged_after(const PeriodRef& ref, const ScoredMember& key,
                                                   std::int64_t count) {
  cold::ColdStore& cold = cold_for(ref);
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck = cold_key(ref);
  std::int64_t slack = 16;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) ++counters_.retries;
    pause_before(attempt);
    const std::string gen_before = hot_.generation(redis_, keys);
    cold::ColdReader reader = cold.reader();
    const auto cold_rows = reader.after(ck, key.encoded, key.member, count + slack);
    const std::int64_t cold_before = reader.count_before(ck, key.encoded, key.member);
    const std::int64_t cold_better = reader.count_better(ck, key.encoded);
    const auto own = reader.rows_for(ck, {key.member});
    const hot::AfterKey hot = hot_.after(redis_, keys, key.encoded, key.member, count);
    if (!hot.cold) return following(ref, key, hot.through, hot.better, hot.after);
    const auto stale = reader.rows_for(ck, hot.hot_and_stale);  // the same snapshot
    if (hot_.generation(redis_, keys) != gen_before) continue;
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
  throw inconsistent(ref);
}

std::vector<std::optional<Standing>> Leaderboards::ranks(const PeriodRef& ref,
                                                         const std::vector<std::string>& members) {
  auto found = ranks_of(ref, members);
  std::vector<Standing> rows;
  for (auto& s : found) {
    if (s) rows.push_back(std::move(*s));
  }
  attach_profiles(ref.board, rows);
  for (std::size_t i = 0, r = 0; i < found.size(); ++i) {
    if (found[i]) found[i] = std::move(rows[r++]);
  }
  return found;
}

std::vector<std::optional<Standing>> Leaderboards::ranks_of(
    const PeriodRef& ref, const std::vector<std::string>& members) {
  check_bound(ref, "members", static_cast<std::int64_t>(members.size()), kMaxReadRows);
  const hot::PeriodKeys keys = period_keys(ref);
  const cold::PeriodKey ck{ref.board, ref.spec->name, ref.period.id};
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (attempt > 0) ++counters_.retries;
    pause_before(attempt);
    const hot::ReadState st = hot_.read_state(redis_, keys, "");
    const auto hot_scores = hot_.scores(redis_, keys.live, members);
    std::vector<std::optional<std::int64_t>> score(hot_scores.begin(), hot_scores.end());
    std::optional<cold::ColdReader> reader;
    std::vector<std::int64_t> stale;  // encoded scores of cold rows of hot members, sorted
    // All of them hot and scored below every cold member: Redis alone answers.
    const bool hot_part = st.cold_bound && std::all_of(score.begin(), score.end(), [&](auto& s) {
                            return s && *s < *st.cold_bound;
                          });
    if (st.spilled && !hot_part) {
      reader.emplace(cold_for(ref).reader());
      std::vector<std::string> missing;
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (!score[i]) missing.push_back(members[i]);
      }
      std::unordered_map<std::string, std::int64_t> cold_score;
      for (const auto& row : reader->rows_for(ck, missing)) cold_score[row.member] = row.encoded;
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (score[i]) continue;
        if (const auto it = cold_score.find(members[i]); it != cold_score.end())
          score[i] = it->second;
      }
      for (const auto& row : reader->rows_for(ck, st.hot_and_stale)) stale.push_back(row.encoded);
      std::sort(stale.begin(), stale.end());
    }
    std::vector<std::int64_t> found;
    for (const auto& s : score) {
      if (s) found.push_back(*s);
    }
    const auto hot_better = hot_.count_better(redis_, keys.live, found);
    const auto cold_better =
        reader ? reader->count_better(ck, found) : std::vector<std::int64_t>(found.size(), 0);
    if (hot_.generation(redis_, keys) != st.gen) continue;
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
  throw inconsistent(ref);
}

}  // namespace bk::service
