// Each call forwarded to the tier's own function, so the fakes of tests/service stand for
// exactly what these do; the one decision here is PostgreSQL's replica (service/replica.h):
// which store a read uses, and what a failure on the replica does.
#include "service/tier_adapters.h"

#include "cold/error.h"
#include "core/error.h"

namespace bk::service {
namespace {

class Snapshot final : public ColdSnapshot {
 public:
  // `replica`: the reader is on the replica (its failures rest it: see call()).
  explicit Snapshot(cold::ColdReader reader, ReplicaReads* replica = nullptr)
      : reader_(std::move(reader)), replica_(replica) {}

  std::int64_t count(const cold::PeriodKey& p) override {
    return call([&] { return reader_.count(p); });
  }
  std::int64_t count_better(const cold::PeriodKey& p, std::int64_t e) override {
    return call([&] { return reader_.count_better(p, e); });
  }
  std::vector<std::int64_t> count_better(const cold::PeriodKey& p,
                                         const std::vector<std::int64_t>& e) override {
    return call([&] { return reader_.count_better(p, e); });
  }
  std::int64_t count_before(const cold::PeriodKey& p, std::int64_t e,
                            const std::string& m) override {
    return call([&] { return reader_.count_before(p, e, m); });
  }
  std::vector<cold::ColdHit> slice(const cold::PeriodKey& p, std::int64_t offset,
                                   std::int64_t limit) override {
    return call([&] { return reader_.slice(p, offset, limit); });
  }
  std::optional<std::pair<std::int64_t, std::string>> key_at(const cold::PeriodKey& p,
                                                             std::int64_t position) override {
    return call([&] { return reader_.key_at(p, position); });
  }
  std::vector<cold::ColdHit> from(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                  std::int64_t limit) override {
    return call([&] { return reader_.from(p, e, m, limit); });
  }
  std::vector<cold::ColdHit> after(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                   std::int64_t limit) override {
    return call([&] { return reader_.after(p, e, m, limit); });
  }
  std::vector<cold::ColdHit> before(const cold::PeriodKey& p, std::int64_t e, const std::string& m,
                                    std::int64_t limit) override {
    return call([&] { return reader_.before(p, e, m, limit); });
  }
  std::vector<cold::ColdHit> rows_for(const cold::PeriodKey& p,
                                      const std::vector<std::string>& members) override {
    return call([&] { return reader_.rows_for(p, members); });
  }

 private:
  cold::ColdReader reader_;
  ReplicaReads* replica_;

  // A read on the replica that fails rests it (the next reads go to the primary) and fails
  // as unavailable (503, Retry-After): a recovery conflict or a standby's refusal is the
  // replica's state, not a defect.
  template <class F>
  auto call(F&& f) -> decltype(f()) {
    if (replica_ == nullptr) return f();
    try {
      return f();
    } catch (const Error& e) {
      replica_failed(*replica_, e);
      if (e.transient()) throw;
      throw cold::PostgresUnavailable(std::string("the replica: ") + e.what());
    }
  }
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
                               const std::string& member, std::int64_t count,
                               const hot::BoardKeys* profiles) {
  return board_.after(conn_, keys, encoded, member, count, profiles);
}

std::string RedisTier::generation(const hot::PeriodKeys& keys) {
  return board_.generation(conn_, keys);
}

std::int64_t RedisTier::size(const hot::PeriodKeys& keys) {
  return board_.size(conn_, keys.live);
}

std::optional<hot::CohortRead> RedisTier::cohort_of(const hot::LeaguePeriod& p,
                                                    const std::string& member, std::int64_t size) {
  return league_.cohort_of(conn_, p, member, size);
}

hot::CohortRead RedisTier::cohort(const hot::LeaguePeriod& p, std::int64_t division,
                                  std::int64_t number, std::int64_t size) {
  return league_.cohort(conn_, p, division, number, size);
}

bool RedisTier::waiting(const hot::LeaguePeriod& p, const std::string& member) {
  return league_.waiting(conn_, p, member);
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

std::vector<std::string> RedisTier::known_boards(const std::string& prefix) {
  return hot::known_boards(conn_, prefix);
}

hot::StoredProfiles RedisTier::read_profiles(const hot::BoardKeys& board,
                                             const std::vector<std::string>& members) {
  return hot::read_profiles(conn_, board, members);
}

std::map<std::string, std::string> RedisTier::write_profiles(
    const std::map<std::string, hot::ProfileWrites>& boards) {
  return hot::write_profiles(conn_, board_.key_prefix(), boards);
}

cold::ColdStore* PostgresTier::replica() {
  return replica_ ? fresh_replica(store_(), replica_, *replica_reads_) : nullptr;
}

std::unique_ptr<ColdSnapshot> PostgresTier::snapshot() {
  if (cold::ColdStore* r = replica()) {
    try {
      return std::make_unique<Snapshot>(r->reader(), replica_reads_.get());
    } catch (const Error& e) {  // its transaction did not begin: the primary's instead
      replica_failed(*replica_reads_, e);
    }
  }
  return std::make_unique<Snapshot>(store_().reader());
}

std::vector<cold::Profile> PostgresTier::profiles(const std::string& board,
                                                  const std::vector<std::string>& members) {
  if (cold::ColdStore* r = replica()) {
    try {
      return r->profiles(board, members);
    } catch (const Error& e) {  // one call: asked again of the primary
      replica_failed(*replica_reads_, e);
    }
  }
  return store_().profiles(board, members);
}

}  // namespace bk::service
