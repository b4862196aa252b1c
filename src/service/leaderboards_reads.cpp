// Leaderboards' reads and profiles: the units that do them (service/live_reads.h,
// service/profiles.h) over the real tiers, and the facade's forwarding methods.
#include "service/leaderboards.h"

#include "service/live_reads.h"
#include "service/profiles.h"
#include "service/tier_adapters.h"

namespace bk::service {

// The units refer to each other and to the facade's connection, board scripts, cold store and
// counters: built in place, never moved.
struct Leaderboards::ReadUnits {
  explicit ReadUnits(Leaderboards& b)
      : redis(b.redis_, b.hot_),
        postgres([&b] { return b.has_cold(); },
                 [&b]() -> cold::ColdStore& { return b.cold_store(); }),
        profiles(b.config_.redis.key_prefix, redis, postgres),
        live(b.config_, b.clock_, redis, postgres, profiles, b.counters_.retries) {}

  RedisTier redis;
  PostgresTier postgres;
  Profiles profiles;
  LiveReads live;
};

std::shared_ptr<Leaderboards::ReadUnits> Leaderboards::make_reads() {
  return std::make_shared<ReadUnits>(*this);
}

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
