// The real tiers behind service/tiers.h: Redis through hot::BoardScripts and hot's named
// functions on one connection, PostgreSQL through cold::ColdStore's public methods.
#pragma once
#include <functional>
#include <memory>

#include "hot/board_scripts.h"
#include "redis/connection.h"
#include "service/replica.h"
#include "service/tiers.h"

namespace bk::service {

class RedisTier final : public HotTier {
 public:
  RedisTier(redis::Connection& conn, hot::BoardScripts& board) : conn_(conn), board_(board) {}

  hot::HotRead<std::vector<hot::Listed>> range(const hot::PeriodKeys& keys, std::int64_t offset,
                                               std::int64_t count) override;
  hot::HotRead<std::vector<hot::Listed>> around(const hot::PeriodKeys& keys,
                                                const std::string& member, std::int64_t k) override;
  hot::HotRead<std::optional<hot::Listed>> member(const hot::PeriodKeys& keys,
                                                  const std::string& member) override;
  hot::ReadState read_state(const hot::PeriodKeys& keys, const std::string& member,
                            std::int64_t head, const hot::BoardKeys* profiles) override;
  hot::Neighbours neighbours(const hot::PeriodKeys& keys, std::int64_t encoded,
                             const std::string& member, std::int64_t k) override;
  hot::AfterKey after(const hot::PeriodKeys& keys, std::int64_t encoded, const std::string& member,
                      std::int64_t count, const hot::BoardKeys* profiles) override;
  std::string generation(const hot::PeriodKeys& keys) override;
  std::int64_t size(const hot::PeriodKeys& keys) override;
  std::vector<std::optional<std::int64_t>> scores(const hot::PeriodKeys& keys,
                                                  const std::vector<std::string>& members) override;
  std::int64_t count_better(const hot::PeriodKeys& keys, std::int64_t encoded) override;
  std::vector<std::int64_t> count_better(const hot::PeriodKeys& keys,
                                         const std::vector<std::int64_t>& encoded) override;
  std::vector<ScoredMember> slice(const hot::PeriodKeys& keys, std::int64_t start,
                                  std::int64_t count) override;
  std::vector<hot::LivePeriod> live_periods(const hot::BoardKeys& board) override;
  std::vector<std::string> known_boards(const std::string& prefix) override;
  std::optional<hot::CohortRead> cohort_of(const hot::LeaguePeriod& p, const std::string& member,
                                           std::int64_t size) override;
  hot::CohortRead cohort(const hot::LeaguePeriod& p, std::int64_t division, std::int64_t number,
                         std::int64_t size) override;
  bool waiting(const hot::LeaguePeriod& p, const std::string& member) override;
  hot::StoredProfiles read_profiles(const hot::BoardKeys& board,
                                    const std::vector<std::string>& members) override;
  std::map<std::string, std::string> write_profiles(
      const std::map<std::string, hot::ProfileWrites>& boards) override;

 private:
  redis::Connection& conn_;
  hot::BoardScripts& board_;
  hot::League league_{board_.key_prefix()};
};

// `present` says whether a cold tier is configured; `store` connects it when first needed.
// With a replica (read_from), snapshots and profiles go to it when it is fresh enough
// (service/replica.h).
class PostgresTier final : public ColdTier {
 public:
  PostgresTier(std::function<bool()> present, std::function<cold::ColdStore&()> store)
      : present_(std::move(present)), store_(std::move(store)) {}
  void read_from(std::function<cold::ColdStore&()> replica, std::shared_ptr<ReplicaReads> reads) {
    replica_ = std::move(replica);
    replica_reads_ = std::move(reads);
  }

  bool present() const override { return present_(); }
  std::unique_ptr<ColdSnapshot> snapshot() override;
  std::vector<cold::Profile> profiles(const std::string& board,
                                      const std::vector<std::string>& members) override;

 private:
  std::function<bool()> present_;
  std::function<cold::ColdStore&()> store_;
  std::function<cold::ColdStore&()> replica_;
  std::shared_ptr<ReplicaReads> replica_reads_;
  // The replica when a read that begins now may use it (service/replica.h), else null.
  cold::ColdStore* replica();
};

}  // namespace bk::service
