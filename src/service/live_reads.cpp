// The open-period reads: routing between Redis alone and the merged reads, the count and the
// first page of a period, cursors, decoding and ranking.
#include "service/live_reads.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>

#include "cold/call_deadline.h"
#include "core/validate.h"
#include "service/read_steps.h"

namespace bk::service {

using read_steps::kMaxAttempts;

void check_bound(const PeriodRef& ref, const char* what, std::int64_t value, std::int64_t max) {
  if (value >= 0 && value <= max) return;
  throw UsageError("a read of " + ref.board + " " + ref.spec->name + " " + ref.period.id + ": " +
                   what + " " + std::to_string(value) + " is outside [0, " + std::to_string(max) +
                   "]");
}

LiveReads::LiveReads(const Config& config, Clock clock, HotTier& hot, ColdTier& cold,
                     Profiles& profiles, std::int64_t& retries)
    : config_(config),
      clock_(clock),
      hot_(hot),
      cold_(cold),
      profiles_(profiles),
      retries_(retries),
      summaries_(hot, cold,
                 [this](const PeriodRef& ref, const hot::PeriodKeys& keys, const std::string& gen) {
                   return snapshot(ref, keys, gen);
                 }) {
  for (const BoardConfig& b : config_.boards) {
    for (const PeriodSpec& p : b.periods) layouts_.emplace(&p, b.layout_for(p));
  }
}

void LiveReads::share_cold_ranks(std::shared_ptr<ColdIndexes> indexes) {
  indexes_ = std::move(indexes);
}

std::unique_ptr<ColdSnapshot> LiveReads::snapshot(const PeriodRef& ref, const hot::PeriodKeys& keys,
                                                  const std::string& gen, bool* from_memory) {
  if (indexes_) {
    const std::string spill = spill_generation(gen);
    if (!spill.empty()) {
      if (auto index = indexes_->find(ref, keys.meta, spill)) {
        if (from_memory != nullptr) *from_memory = true;
        return snapshot_of(std::move(index));
      }
    }
  }
  return cold_.snapshot();
}

// A spill generation, read after Redis named it and checked unmoved after: what any snapshot
// within it holds (service/cold_index.h).
bool LiveReads::load_cold_ranks(const PeriodRef& ref) {
  if (!indexes_) return false;
  const hot::PeriodKeys keys = period_keys(ref);
  const hot::ReadState st = hot_.read_state(keys, "");
  const std::string spill = spill_generation(st.gen);
  if (!st.spilled || spill.empty() || !cold_.present()) {
    indexes_->not_loaded(keys.meta, spill, ColdIndexes::Outcome::nothing);
    return false;
  }
  if (indexes_->has(keys.meta, spill)) return true;
  try {
    const auto reader = cold_.snapshot();
    auto index = read_index(*reader, read_steps::cold_key(ref), spill, indexes_->budget());
    if (!index) {
      indexes_->not_loaded(keys.meta, spill, ColdIndexes::Outcome::too_large);
      return false;
    }
    if (spill_generation(hot_.generation(keys)) != spill) {  // a read asks for the next one
      indexes_->not_loaded(keys.meta, spill, ColdIndexes::Outcome::nothing);
      return false;
    }
    indexes_->install(keys.meta, std::move(index));
    return true;
  } catch (...) {
    indexes_->not_loaded(keys.meta, spill, ColdIndexes::Outcome::failed);
    throw;
  }
}

void LiveReads::begin_attempt(int attempt) {
  if (attempt > 0) ++retries_;
  read_steps::pause_before(attempt);
}

hot::PeriodKeys LiveReads::period_keys(const PeriodRef& ref) const {
  return {hot::BoardKeys(config_.redis.key_prefix, ref.board), ref.spec->name, ref.period.id};
}

Standing LiveReads::decode(const PeriodRef& ref, const hot::Listed& l) const {
  const Decoded d = ScoreCodec(layouts_.at(ref.spec)).decode(l.encoded, ref.period.start);
  return Standing{l.rank, l.member, d.points, d.achieved_at};
}

std::vector<Standing> LiveReads::decode_all(const PeriodRef& ref,
                                            const std::vector<hot::Listed>& listed) const {
  std::vector<Standing> out;
  out.reserve(listed.size());
  for (const hot::Listed& l : listed) out.push_back(decode(ref, l));
  return out;
}

Standing LiveReads::decode_scored(const PeriodRef& ref, const ScoredMember& m,
                                  std::int64_t rank) const {
  return decode(ref, hot::Listed{m.member, m.encoded, rank});
}

std::vector<Standing> LiveReads::ranked(const PeriodRef& ref, const std::vector<ScoredMember>& page,
                                        SliceStart start) const {
  const auto ranks = competition_ranks(page, start);
  std::vector<Standing> out;
  out.reserve(page.size());
  for (std::size_t i = 0; i < page.size(); ++i)
    out.push_back(decode_scored(ref, page[i], ranks[i]));
  return out;
}

std::vector<Standing> LiveReads::page_of(const PeriodRef& ref, std::vector<ScoredMember> all,
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

LiveReads::Following LiveReads::following(const PeriodRef& ref, const ScoredMember& key,
                                          std::int64_t through, std::int64_t better,
                                          const std::vector<ScoredMember>& after) const {
  if (after.empty()) return {through, {}, std::nullopt};
  // Everyone listed at or before the key scores at most the key's score: all of them are
  // better than a first row scored worse than the key, else those scored below the key.
  const std::int64_t first_better = after.front().encoded > key.encoded ? through : better;
  return {through, ranked(ref, after, SliceStart{through, first_better + 1}), std::nullopt};
}

// Each hot read says, atomically with what it read, whether the period has spilled; then
// the answer comes from both tiers.
std::vector<Standing> LiveReads::top(const PeriodRef& ref, std::int64_t offset,
                                     std::int64_t count) {
  auto rows = top_rows(ref, offset, count);
  profiles_.attach(ref.board, rows);
  return rows;
}

std::vector<Standing> LiveReads::top_rows(const PeriodRef& ref, std::int64_t offset,
                                          std::int64_t count) {
  check_bound(ref, "count", count, kMaxReadRows);
  check_bound(ref, "offset", offset, kMaxReadOffset);
  if (count == 0) return {};
  auto hot = hot_.range(period_keys(ref), offset, count);
  if (hot.spilled) return merged_top(ref, offset, count);
  return decode_all(ref, hot.value);
}

std::optional<Standing> LiveReads::rank(const PeriodRef& ref, const std::string& member) {
  auto hot = hot_.member(period_keys(ref), member);
  std::vector<Standing> found;
  if (hot.spilled) {
    if (auto s = merged_rank(ref, member)) found.push_back(std::move(*s));
  } else if (hot.value) {
    found.push_back(decode(ref, *hot.value));
  }
  if (found.empty()) return std::nullopt;
  profiles_.attach(ref.board, found);
  return std::move(found.front());
}

std::vector<std::optional<Standing>> LiveReads::ranks(const PeriodRef& ref,
                                                      const std::vector<std::string>& members,
                                                      std::optional<std::int64_t>* members_out) {
  auto found = ranks_of(ref, members, members_out);
  std::vector<Standing> rows;
  for (auto& s : found) {
    if (s) rows.push_back(std::move(*s));
  }
  profiles_.attach(ref.board, rows);
  for (std::size_t i = 0, r = 0; i < found.size(); ++i) {
    if (found[i]) found[i] = std::move(rows[r++]);
  }
  return found;
}

std::vector<Standing> LiveReads::around(const PeriodRef& ref, const std::string& member,
                                        std::int64_t k) {
  check_bound(ref, "k", k, kMaxReadRows / 2);
  auto hot = hot_.around(period_keys(ref), member, k);
  auto rows = hot.spilled ? merged_around(ref, member, k) : decode_all(ref, hot.value);
  profiles_.attach(ref.board, rows);
  return rows;
}

std::vector<PeriodStatus> LiveReads::periods(const std::string& board) {
  const BoardConfig& c = board_entry(config_, board);
  const Instant now = clock_.now();
  const std::vector<hot::LivePeriod> registry =
      hot_.live_periods(hot::BoardKeys(config_.redis.key_prefix, board));
  std::vector<PeriodStatus> out;
  for (const PeriodSpec& spec : c.periods) {
    PeriodStatus s;
    s.period = spec.name;
    try {
      s.current = period_latest(spec, *c.zone, now);
      const PeriodRef ref{&c, &spec, board, s.current};
      // Cold rows of members that are hot again are stale: counted once, as hot.
      s.current_members = count(ref);
      s.hot_members = hot_.size(period_keys(ref));
      s.cold_members = std::max<std::int64_t>(0, s.current_members - s.hot_members);
    } catch (const RefusedError&) {
      // alltime before 2020 or a cron that never fires: no current period.
    }
    for (const hot::LivePeriod& live : registry) {
      if (live.period != spec.name) continue;
      ++s.live;
      if (live.end + c.grace <= now) ++s.due;
    }
    out.push_back(std::move(s));
  }
  return out;
}

BoardsPage LiveReads::boards(const std::optional<std::string>& after, std::int64_t limit) {
  if (limit < 1 || limit > kMaxReadRows) {
    throw UsageError("a list of boards: limit " + std::to_string(limit) + " is outside [1, " +
                     std::to_string(kMaxReadRows) + "]");
  }
  const auto listed = [&](const std::string& b) { return !after || b > *after; };
  std::map<std::string, bool> names;  // board -> Redis holds it
  for (const BoardConfig& c : config_.boards) {
    if (!board_name_problem(c.pattern) && listed(c.pattern)) names.emplace(c.pattern, false);
  }
  for (std::string& b : hot_.known_boards(config_.redis.key_prefix)) {
    if (listed(b)) names[std::move(b)] = true;
  }
  BoardsPage page;
  for (const auto& [board, in_redis] : names) {
    if (static_cast<std::int64_t>(page.boards.size()) == limit) {
      page.next = page.boards.back().board;
      break;
    }
    page.boards.push_back(BoardListing{board, config_.board_for(board), in_redis});
  }
  return page;
}

std::int64_t LiveReads::count(const PeriodRef& ref) {
  const hot::PeriodKeys keys = period_keys(ref);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    read_steps::pause_before(attempt);
    const hot::ReadState st = hot_.read_state(keys, "");
    if (!st.spilled) return st.size;
    if (const ColdSummary* cold = summaries_.of(ref, keys, st)) return st.size + cold->live;
  }
  throw read_steps::inconsistent(ref);
}

LiveReads::Counted LiveReads::first_page(const PeriodRef& ref, std::int64_t count) {
  KnownProfiles known;
  Counted page = first_page_rows(ref, count, &known);
  profiles_.attach(ref.board, page.rows, &known);
  return page;
}

namespace {

// The profiles a read script returned with the members it listed.
void note_profiles(const std::vector<ScoredMember>& listed, const hot::ListedProfiles& profiles,
                   KnownProfiles& known) {
  known.names_moved = profiles.names_moved;
  known.metadata_moved = profiles.metadata_moved;
  known.by_member.clear();
  for (std::size_t i = 0; i < profiles.names.size() && i < listed.size(); ++i) {
    known.by_member.emplace(listed[i].member, std::pair{profiles.names[i], profiles.metadata[i]});
  }
}

}  // namespace

LiveReads::Counted LiveReads::first_page_rows(const PeriodRef& ref, std::int64_t count,
                                              KnownProfiles* known) {
  check_bound(ref, "count", count, kMaxReadRows);
  const hot::PeriodKeys keys = period_keys(ref);
  const hot::BoardKeys board(config_.redis.key_prefix, ref.board);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    begin_attempt(attempt);
    // Atomic: the generation, the stale set, the size and the first members agree.
    const hot::ReadState st = hot_.read_state(keys, "", count, known != nullptr ? &board : nullptr);
    if (known != nullptr) note_profiles(st.head, st.head_profiles, *known);
    if (!st.spilled) return {st.size, page_of(ref, st.head, 0, count)};
    if (read_steps::in_hot_part(st, count)) {
      bool moved = false;
      const auto total = total_if_reachable(ref, keys, st, moved);
      if (moved) continue;
      return {total, page_of(ref, st.head, 0, count)};
    }
    const ColdSummary* summary = summaries_.of(ref, keys, st);
    if (summary == nullptr) continue;
    const std::int64_t total = st.size + summary->live;
    if (count <= ColdSummaries::kSummaryHead / 2) {
      if (auto all = listed_from_summary(*summary, st, count)) {
        return {total, page_of(ref, std::move(*all), 0, count)};
      }
    }
    return {total, top_rows(ref, 0, count)};
  }
  throw read_steps::inconsistent(ref);
}

std::optional<std::int64_t> LiveReads::total_if_reachable(const PeriodRef& ref,
                                                          const hot::PeriodKeys& keys,
                                                          const hot::ReadState& st, bool& moved) {
  try {
    // Under a deadline (serve), the count gets half of what is left: a PostgreSQL that does
    // not answer then costs the first page its total (null), not the whole read.
    std::optional<cold::CallDeadline> half;
    if (const auto deadline = cold::call_deadline()) {
      const auto now = std::chrono::steady_clock::now();
      if (*deadline > now) half.emplace(now + (*deadline - now) / 2);
    }
    const ColdSummary* summary = summaries_.of(ref, keys, st);
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

std::int64_t LiveReads::listing_score(const PeriodRef& ref, const Standing& s) const {
  try {
    return ScoreCodec(layouts_.at(ref.spec))
        .encode(s.points, s.achieved_at.value_or(ref.period.start), ref.period.start);
  } catch (const OutOfRangeError& e) {
    throw UsageError("not a standing of " + ref.board + " " + ref.spec->name + " " + ref.period.id +
                     ": " + e.what());
  }
}

LiveReads::Following LiveReads::listed_after(const PeriodRef& ref, const Standing& mark,
                                             std::int64_t count) {
  check_bound(ref, "count", count, kMaxReadRows);
  const ScoredMember key{mark.member, listing_score(ref, mark)};
  const hot::BoardKeys board(config_.redis.key_prefix, ref.board);
  const hot::AfterKey hot = hot_.after(period_keys(ref), key.encoded, key.member, count, &board);
  if (hot.cold) {
    Following out = merged_after(ref, key, count);
    profiles_.attach(ref.board, out.rows);
    return out;
  }
  Following out = following(ref, key, hot.through, hot.better, hot.after);
  if (!hot.spilled) out.total = hot.size;
  KnownProfiles known;
  note_profiles(hot.after, hot.profiles, known);
  profiles_.attach(ref.board, out.rows, &known);
  return out;
}

}  // namespace bk::service
