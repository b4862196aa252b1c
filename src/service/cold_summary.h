// What reads need of a spilled period's cold tier, as of one spill / rehydrate generation of
// the period (read_state's gen), kept between reads: the first pages and the count of a
// spilled period then need no PostgreSQL.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "service/tiers.h"
#include "service/types.h"

namespace bk::service {

// Exact while its generation lasts: a spill commits cold rows only for members that are hot
// (and stale) until it removes them, which moves the generation, and a rehydration moves it
// too.
struct ColdSummary {
  std::string gen;
  std::int64_t live = 0;           // cold rows of members that are not hot
  std::vector<ScoredMember> head;  // the first kSummaryHead cold rows, stale ones included
};

class ColdSummaries {
 public:
  static constexpr std::int64_t kSummaryHead = 1024;
  // At most this many periods' summaries are kept: reads move on to new periods.
  static constexpr std::size_t kMaxPeriods = 256;

  // `snapshot` gives the cold rows for a read that found a generation in Redis.
  using Snapshots = std::function<std::unique_ptr<ColdSnapshot>(
      const PeriodRef&, const hot::PeriodKeys&, const std::string& gen)>;
  ColdSummaries(HotTier& hot, ColdTier& cold, Snapshots snapshot)
      : hot_(hot), cold_(cold), snapshot_(std::move(snapshot)) {}

  // The summary for `st.gen`, made when there is none; nullptr when the generation moved
  // meanwhile (read again).
  const ColdSummary* of(const PeriodRef& ref, const hot::PeriodKeys& keys,
                        const hot::ReadState& st);
  // The live cold rows of the period (by its meta key) at `gen`, when a summary or a read that
  // counted them (remember_live) has them; nullopt otherwise.
  std::optional<std::int64_t> live(const std::string& meta, const std::string& gen) const;
  // What a read counted in its own snapshot of `gen` (ranks for a tier's percent rule).
  void remember_live(const std::string& meta, const std::string& gen, std::int64_t live);

 private:
  HotTier& hot_;
  ColdTier& cold_;
  Snapshots snapshot_;
  std::unordered_map<std::string, ColdSummary> by_period_;  // by the period's meta key
  // Counts alone (gen, live), by the period's meta key.
  std::unordered_map<std::string, std::pair<std::string, std::int64_t>> live_by_period_;
};

// The first `want` members (or all there are) in listing order, from `st` (read with head >=
// want) and the summary of its generation; nullopt when the summary's cold rows may not reach
// that far.
std::optional<std::vector<ScoredMember>> listed_from_summary(const ColdSummary& summary,
                                                             const hot::ReadState& st,
                                                             std::int64_t want);

}  // namespace bk::service
