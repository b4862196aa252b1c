// Each call forwarded to the tier's own function: no logic here, so the fakes of tests/service
// stand for exactly what these do.
#include "service/tier_adapters.h"

namespace bk::service {
namespace {

class Snapshot final : public ColdSnapshot {
 public:
  explicit Snapshot(cold::ColdReader reader) : reader_(std::move(reader)) {}

  std::int64_t count(const cold::PeriodKey& p) override { return reader_.count(p); }
  std::int64_t count_better(const cold::PeriodKey& p, std::int64_t e) override {
    return reader_.count_better(p, e);
  }
  std::vector<std::int64_t> count_better(const cold::PeriodKey& p,
                                         const std::vector<std::int64_t>& e) override {
    return reader_.count_better(p, e);
  }
  std::int64_t count_before(const cold::PeriodKey& p, std::int64_t e,
                            const std::string& m) override {
    return reader_.count_before(p, e, m);
  }
  std::vector<cold::ColdHit> slice(const cold::PeriodKey& p, std::int64_t offset,
                                   std::int64_t limit) override {
    return reader_.slice(p, offset, limit);
  }
  std::optional<std::pair<std::int64_t, std::string>> key_at(const cold::PeriodKey& p,
                                                             std::int64_t position) override {
    return reader_.key_at(p, position);
  }
  std::vector<cold::ColdHit> from(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                  std::int64_t limit) override {
    return reader_.from(p, e, m, limit);
  }
  std::vector<cold::ColdHit> after(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                   std::int64_t limit) override {
    return reader_.after(p, e, m, limit);
  }
  std::vector<cold::ColdHit> before(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                    std::int64_t limit) override {
    return reader_.before(p, e, m, limit);
  }
  std::vector<cold::ColdHit> rows_for(const cold::PeriodKey& p,
                                      const std::vector<std::string>& members) override {
    return reader_.rows_for(p, members);
  }

 private:
  cold::ColdReader reader_;
};

}  // namespace

hot::HotRead<std::vector<hot::Listed>> RedisTier::range(const hot::PeriodKeys& keys,
                                                        std::int64_t offset, std::int64_t count) {
  return board_.range(conn_, keys, offset, count);
}

hot::HotRead<std::vector<hot::Listed>> RedisTier::around(const hot::PeriodKeys& keys,
                                                         const std::string& member,
                                                         std::int64_t k) {
  return board_.around(conn_, keys, member, k);
}

hot::HotRead<std::optional<hot::Listed>> RedisTier::member(const hot::PeriodKeys& keys,
                                                           const std::string& member) {
  return board_.member(conn_, keys, member);
}

hot::ReadState RedisTier::read_state(const hot::PeriodKeys& keys, const std::string& member,
                                     std::int64_t head, const hot::BoardKeys* profiles) {
  return board_.read_state(conn_, keys, member, head, profiles);
}

hot::Neighbours RedisTier::neighbours(const hot::PeriodKeys& keys, std::int64_t encoded,
                                      const std::string& member, std::int64_t k) {
  return board_.neighbours(conn_, keys, encoded, member, k);
}

hot::AfterKey RedisTier::after(const hot::PeriodKeys& keys, std::int64_t encoded,
                               const std::string& member, std::int64_t count) {
  return board_.after(conn_, keys, encoded, member, count);
}

std::string RedisTier::generation(const hot::PeriodKeys& keys) {
  return board_.generation(conn_, keys);
}

std::int64_t RedisTier::size(const hot::PeriodKeys& keys) {
  return board_.size(conn_, keys.live);
}

std::vector<std::optional<std::int64_t>> RedisTier::scores(
    const hot::PeriodKeys& keys, const std::vector<std::string>& members) {
  return board_.scores(conn_, keys.live, members);
}

std::int64_t RedisTier::count_better(const hot::PeriodKeys& keys, std::int64_t encoded) {
  return board_.count_better(conn_, keys.live, encoded);
}

std::vector<std::int64_t> RedisTier::count_better(const hot::PeriodKeys& keys,
                                                  const std::vector<std::int64_t>& encoded) {
  return board_.count_better(conn_, keys.live, encoded);
}

std::vector<ScoredMember> RedisTier::slice(const hot::PeriodKeys& keys, std::int64_t start,
                                           std::int64_t count) {
  return board_.slice(conn_, keys.live, start, count);
}

std::vector<hot::LivePeriod> RedisTier::live_periods(const hot::BoardKeys& board) {
  return hot::live_periods(conn_, board);
}

hot::StoredProfiles RedisTier::read_profiles(const hot::BoardKeys& board,
                                             const std::vector<std::string>& members) {
  return hot::read_profiles(conn_, board, members);
}

std::map<std::string, std::string> RedisTier::write_profiles(
    const std::map<std::string, hot::ProfileWrites>& boards) {
  return hot::write_profiles(conn_, board_.key_prefix(), boards);
}

cold::ColdStore& PostgresTier::reading() {
  cold::ColdStore& primary = store_();
  if (!replica_) return primary;
  cold::ColdStore* replica = fresh_replica(primary, replica_, *replica_reads_);
  return replica != nullptr ? *replica : primary;
}

std::unique_ptr<ColdSnapshot> PostgresTier::snapshot() {
  return std::make_unique<Snapshot>(reading().reader());
}

std::vector<cold::Profile> PostgresTier::profiles(const std::string& board,
                                                  const std::vector<std::string>& members) {
  return reading().profiles(board, members);
}

}  // namespace bk::service
