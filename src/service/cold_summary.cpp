// The cold summary cache of spilled periods.
#include "service/cold_summary.h"

#include <set>

#include "service/read_steps.h"

namespace bk::service {

const ColdSummary* ColdSummaries::of(const PeriodRef& ref, const hot::PeriodKeys& keys,
                                     const hot::ReadState& st) {
  if (const auto it = by_period_.find(keys.meta);
      it != by_period_.end() && it->second.gen == st.gen) {
    return &it->second;
  }
  const cold::PeriodKey ck = read_steps::cold_key(ref);
  read_steps::require_cold(cold_, ref);
  const std::unique_ptr<ColdSnapshot> reader = snapshot_(ref, keys, st.gen);
  ColdSummary summary{st.gen, reader->count(ck), {}};
  for (const auto& row : reader->slice(ck, 0, kSummaryHead))
    summary.head.push_back({row.member, row.encoded});
  // The hot members whose rows are in this snapshot are in the stale set by now (a spill
  // enters them before it commits their rows).
  const hot::ReadState after = hot_.read_state(keys, "");
  if (after.gen != st.gen) return nullptr;
  summary.live -= static_cast<std::int64_t>(reader->rows_for(ck, after.hot_and_stale).size());
  if (by_period_.size() >= kMaxPeriods) by_period_.clear();
  return &(by_period_[keys.meta] = std::move(summary));
}

std::optional<std::int64_t> ColdSummaries::live(const std::string& meta,
                                                const std::string& gen) const {
  if (const auto it = by_period_.find(meta); it != by_period_.end() && it->second.gen == gen) {
    return it->second.live;
  }
  if (const auto it = live_by_period_.find(meta);
      it != live_by_period_.end() && it->second.first == gen) {
    return it->second.second;
  }
  return std::nullopt;
}

void ColdSummaries::remember_live(const std::string& meta, const std::string& gen,
                                  std::int64_t live) {
  if (live_by_period_.size() >= kMaxPeriods) live_by_period_.clear();
  live_by_period_[meta] = {gen, live};
}

std::optional<std::vector<ScoredMember>> listed_from_summary(const ColdSummary& summary,
                                                             const hot::ReadState& st,
                                                             std::int64_t want) {
  // A hot member whose cold row is in the summary is in the stale set (see ColdSummary).
  const std::set<std::string> skip(st.hot_and_stale.begin(), st.hot_and_stale.end());
  std::vector<ScoredMember> cold_live;
  for (const auto& m : summary.head) {
    if (skip.count(m.member) == 0) cold_live.push_back(m);
  }
  // Enough live cold rows, or every cold row there is.
  if (static_cast<std::int64_t>(cold_live.size()) < want &&
      static_cast<std::int64_t>(summary.head.size()) == ColdSummaries::kSummaryHead) {
    return std::nullopt;
  }
  return read_steps::merge(st.head, cold_live);
}

}  // namespace bk::service
