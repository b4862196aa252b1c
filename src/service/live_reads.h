// The reads of open periods (Leaderboards forwards them here): answered by Redis alone while a
// period has not spilled (or within its hot part), else merged from both tiers with exact
// competition ranks; every row with its profile. Over service/tiers.h, so tests/service runs
// them against in-memory tiers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "service/cold_index.h"
#include "service/cold_summary.h"
#include "service/profiles.h"
#include "service/tiers.h"
#include "service/types.h"

namespace bk::service {

class LiveReads {
 public:
  using Counted = service::Counted;
  using Following = service::Following;

  // `retries` counts the read rounds repeated because a spill ran (Counters).
  LiveReads(const Config& config, Clock clock, HotTier& hot, ColdTier& cold, Profiles& profiles,
            std::int64_t& retries);

  // Leaderboards documents each.
  std::vector<Standing> top(const PeriodRef& ref, std::int64_t offset, std::int64_t count);
  std::optional<Standing> rank(const PeriodRef& ref, const std::string& member);
  // `members_out`, when given, is set to the period's member count when the read had it for
  // free or for one more statement in its own cold snapshot (a spilled period whose cold rows
  // it read); left empty otherwise. Tiers' percent rules take it (Reads::open_ranks).
  std::vector<std::optional<Standing>> ranks(const PeriodRef& ref,
                                             const std::vector<std::string>& members,
                                             std::optional<std::int64_t>* members_out = nullptr);
  std::vector<Standing> around(const PeriodRef& ref, const std::string& member, std::int64_t k);
  std::vector<PeriodStatus> periods(const std::string& board);
  BoardsPage boards(const std::optional<std::string>& after, std::int64_t limit);
  std::int64_t count(const PeriodRef& ref);
  // Where open periods are read from in Redis (a league's cohorts: service/cohorts.cpp).
  HotTier& hot() { return hot_; }
  Counted first_page(const PeriodRef& ref, std::int64_t count);
  std::int64_t listing_score(const PeriodRef& ref, const Standing& s) const;
  Following listed_after(const PeriodRef& ref, const Standing& mark, std::int64_t count);
  void share_cold_ranks(std::shared_ptr<ColdIndexes> indexes);
  bool load_cold_ranks(const PeriodRef& ref);
  // The member's standings before and after an update, from what the update script read with
  // it (written_ranks.cpp), without profiles; nullopt when the cold tier was needed and moved
  // on since (a spill), or the member is not hot after it in a spilled period (a duplicate's
  // member may be cold): rank it with ranks() instead.
  std::optional<BeforeAfter> update_standings(const PeriodRef& ref, const std::string& member,
                                              const hot::HotStanding& facts);

 private:
  const Config& config_;
  Clock clock_;
  HotTier& hot_;
  ColdTier& cold_;
  Profiles& profiles_;
  std::int64_t& retries_;
  ColdSummaries summaries_;
  std::shared_ptr<ColdIndexes> indexes_;  // null: every cold read asks PostgreSQL
  // Score layouts per period, computed once (a cron period's span needs a scan of firings).
  std::unordered_map<const PeriodSpec*, ScoreLayout> layouts_;

  // Decoding and ranking (live_reads.cpp).
  hot::PeriodKeys period_keys(const PeriodRef& ref) const;
  Standing decode(const PeriodRef& ref, const hot::Listed& l) const;
  std::vector<Standing> decode_all(const PeriodRef& ref,
                                   const std::vector<hot::Listed>& listed) const;
  Standing decode_scored(const PeriodRef& ref, const ScoredMember& m, std::int64_t rank) const;
  // A page in listing order, ranked from `start`, decoded.
  std::vector<Standing> ranked(const PeriodRef& ref, const std::vector<ScoredMember>& page,
                               SliceStart start) const;
  // Positions [offset, want) of the first `want` members in listing order (all of them, or
  // more), ranked.
  std::vector<Standing> page_of(const PeriodRef& ref, std::vector<ScoredMember> all,
                                std::int64_t offset, std::int64_t want) const;
  // Members listed after `key`, in listing order, ranked: `through` members are listed at or
  // before the key, `better` of them scored below it.
  Following following(const PeriodRef& ref, const ScoredMember& key, std::int64_t through,
                      std::int64_t better, const std::vector<ScoredMember>& after) const;

  // The reads without profiles (live_reads.cpp); Profiles::attach adds them.
  std::vector<Standing> top_rows(const PeriodRef& ref, std::int64_t offset, std::int64_t count);
  Counted first_page_rows(const PeriodRef& ref, std::int64_t count, KnownProfiles* known);
  // The members of a spilled period, hot and cold, as of `st` (its generation's summary):
  // nullopt when PostgreSQL cannot be reached; `moved` when the generation moved meanwhile
  // (read again).
  std::optional<std::int64_t> total_if_reachable(const PeriodRef& ref, const hot::PeriodKeys& keys,
                                                 const hot::ReadState& st, bool& moved);

  // Merged hot + cold reads of a spilled period (merged_reads.cpp, merged_ranks.cpp).
  std::vector<Standing> merged_top(const PeriodRef& ref, std::int64_t offset, std::int64_t count);
  std::vector<Standing> merged_top_deep(const PeriodRef& ref, std::int64_t offset,
                                        std::int64_t count);
  Following merged_after(const PeriodRef& ref, const ScoredMember& key, std::int64_t count);
  std::optional<Standing> merged_rank(const PeriodRef& ref, const std::string& member);
  std::vector<Standing> merged_around(const PeriodRef& ref, const std::string& member,
                                      std::int64_t k);
  std::vector<std::optional<Standing>> ranks_of(const PeriodRef& ref,
                                                const std::vector<std::string>& members,
                                                std::optional<std::int64_t>* members_out);
  // One attempt of a merged read each; nullopt: the tiers moved meanwhile (read again).
  std::optional<std::vector<Standing>> deep_attempt(const PeriodRef& ref, std::int64_t offset,
                                                    std::int64_t count);
  std::optional<std::vector<Standing>> around_attempt(const PeriodRef& ref,
                                                      const std::string& member, std::int64_t k,
                                                      std::int64_t& slack);
  std::optional<std::int64_t> members_of(const hot::PeriodKeys& keys, const cold::PeriodKey& ck,
                                         const hot::ReadState& st, ColdSnapshot* reader,
                                         std::size_t stale);
  std::optional<std::vector<std::optional<Standing>>> ranks_attempt(
      const PeriodRef& ref, const std::vector<std::string>& members,
      std::optional<std::int64_t>* members_out);
  // A snapshot of `ref`'s cold rows for a read that found generation `gen` in Redis: from
  // memory when the index of its spill generation is loaded (then `*from_memory` is set),
  // else PostgreSQL's.
  std::unique_ptr<ColdSnapshot> snapshot(const PeriodRef& ref, const hot::PeriodKeys& keys,
                                         const std::string& gen, bool* from_memory = nullptr);
  // Per score of `encoded`: the cold members scored strictly below it as of generation `gen`,
  // whose stale set Redis gave as `stale` (written_ranks.cpp); nullopt when the spill
  // generation moved since.
  std::optional<std::vector<std::int64_t>> cold_better_at(const PeriodRef& ref,
                                                          const std::string& gen,
                                                          const std::vector<std::string>& stale,
                                                          const std::vector<std::int64_t>& encoded);
  // Before each attempt of a merged read: a repeat is counted, and from the fourth on waits.
  void begin_attempt(int attempt);
};

}  // namespace bk::service
