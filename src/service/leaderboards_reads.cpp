// Leaderboards' forwarding to its reads and profiles (service/leaderboards_units.h).
#include "service/leaderboards.h"

#include "service/leaderboards_units.h"

namespace bk::service {

void Leaderboards::share_cold_ranks(std::shared_ptr<ColdIndexes> indexes) {
  reads_->live.share_cold_ranks(std::move(indexes));
}

bool Leaderboards::load_cold_ranks(const PeriodRef& ref) {
  return reads_->live.load_cold_ranks(ref);
}

void Leaderboards::read_from_replica(std::function<cold::ColdStore&()> replica,
                                     std::shared_ptr<ReplicaReads> reads) {
  reads_->postgres.read_from(std::move(replica), std::move(reads));
}

void Leaderboards::write_profiles(const std::vector<Update>& updates,
                                  std::vector<UpdateResult>& results) {
  reads_->profiles.write(updates, results);
}

std::vector<Standing> Leaderboards::top(const PeriodRef& ref, std::int64_t offset,
                                        std::int64_t count) {
  return reads_->live.top(ref, offset, count);
}

std::optional<Standing> Leaderboards::rank(const PeriodRef& ref, const std::string& member) {
  return reads_->live.rank(ref, member);
}

std::vector<std::optional<Standing>> Leaderboards::ranks(const PeriodRef& ref,
                                                         const std::vector<std::string>& members) {
  return reads_->live.ranks(ref, members);
}

std::vector<Standing> Leaderboards::around(const PeriodRef& ref, const std::string& member,
                                           std::int64_t k) {
  return reads_->live.around(ref, member, k);
}

std::vector<PeriodStatus> Leaderboards::periods(const std::string& board) {
  return reads_->live.periods(board);
}

std::int64_t Leaderboards::count(const PeriodRef& ref) {
  return reads_->live.count(ref);
}

Leaderboards::Counted Leaderboards::first_page(const PeriodRef& ref, std::int64_t count) {
  return reads_->live.first_page(ref, count);
}

std::int64_t Leaderboards::listing_score(const PeriodRef& ref, const Standing& s) const {
  return reads_->live.listing_score(ref, s);
}

Leaderboards::Following Leaderboards::listed_after(const PeriodRef& ref, const Standing& mark,
                                                   std::int64_t count) {
  return reads_->live.listed_after(ref, mark, count);
}

}  // namespace bk::service
