// What the service's reads and profiles need from the two tiers, named in the service's terms:
// from Redis the read scripts and the profile hashes, from PostgreSQL a period's cold rows in
// listing order and the profiles that moved there. Tests put in-memory fakes behind them.
//
// Declared in service, not in hot or cold: they are the service's needs (a merged read's
// steps), cold::ColdStore is not ours to change (a thin adapter implements the interface
// without touching it), and hot::BoardScripts takes a connection per call, which the adapter
// binds. The adapters (service/tier_adapters.h) use only the tiers' public functions.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cold/cold_store.h"
#include "core/rank.h"
#include "hot/board_scripts.h"
#include "hot/keys.h"
#include "hot/league.h"
#include "hot/profiles.h"
#include "hot/read_protocol.h"
#include "hot/registry.h"

namespace bk::service {

// Redis, as reads and profiles use it. hot::BoardScripts documents each read.
class HotTier {
 public:
  virtual ~HotTier() = default;

  // The read scripts.
  virtual hot::HotRead<std::vector<hot::Listed>> range(const hot::PeriodKeys& keys,
                                                       std::int64_t offset, std::int64_t count) = 0;
  virtual hot::HotRead<std::vector<hot::Listed>> around(const hot::PeriodKeys& keys,
                                                        const std::string& member,
                                                        std::int64_t k) = 0;
  virtual hot::HotRead<std::optional<hot::Listed>> member(const hot::PeriodKeys& keys,
                                                          const std::string& member) = 0;
  virtual hot::ReadState read_state(const hot::PeriodKeys& keys, const std::string& member,
                                    std::int64_t head = 0,
                                    const hot::BoardKeys* profiles = nullptr) = 0;
  virtual hot::Neighbours neighbours(const hot::PeriodKeys& keys, std::int64_t encoded,
                                     const std::string& member, std::int64_t k) = 0;
  virtual hot::AfterKey after(const hot::PeriodKeys& keys, std::int64_t encoded,
                              const std::string& member, std::int64_t count,
                              const hot::BoardKeys* profiles = nullptr) = 0;
  virtual std::string generation(const hot::PeriodKeys& keys) = 0;

  // The live members of a period.
  virtual std::int64_t size(const hot::PeriodKeys& keys) = 0;
  virtual std::vector<std::optional<std::int64_t>> scores(
      const hot::PeriodKeys& keys, const std::vector<std::string>& members) = 0;
  virtual std::int64_t count_better(const hot::PeriodKeys& keys, std::int64_t encoded) = 0;
  virtual std::vector<std::int64_t> count_better(const hot::PeriodKeys& keys,
                                                 const std::vector<std::int64_t>& encoded) = 0;
  virtual std::vector<ScoredMember> slice(const hot::PeriodKeys& keys, std::int64_t start,
                                          std::int64_t count) = 0;

  // The board's registry of live periods.
  virtual std::vector<hot::LivePeriod> live_periods(const hot::BoardKeys& board) = 0;
  // The boards Redis holds under `prefix` (hot::known_boards), in no particular order.
  virtual std::vector<std::string> known_boards(const std::string& prefix) = 0;
  // A league period's cohorts (hot/league.h): the member's (nullopt: no seat), one by number,
  // whether a member waits for the period's cohorts to open. Only a Redis tier has them.
  virtual std::optional<hot::CohortRead> cohort_of(const hot::LeaguePeriod& p,
                                                   const std::string& member, std::int64_t size);
  virtual hot::CohortRead cohort(const hot::LeaguePeriod& p, std::int64_t division,
                                 std::int64_t number, std::int64_t size);
  virtual bool waiting(const hot::LeaguePeriod& p, const std::string& member);

  // The profile hashes (hot/profiles.h).
  virtual hot::StoredProfiles read_profiles(const hot::BoardKeys& board,
                                            const std::vector<std::string>& members) = 0;
  virtual std::map<std::string, std::string> write_profiles(
      const std::map<std::string, hot::ProfileWrites>& boards) = 0;
};

// One consistent snapshot of a period's cold rows (cold::ColdReader documents each read).
class ColdSnapshot {
 public:
  virtual ~ColdSnapshot() = default;
  virtual std::int64_t count(const cold::PeriodKey& period) = 0;
  virtual std::int64_t count_better(const cold::PeriodKey& period, std::int64_t encoded) = 0;
  virtual std::vector<std::int64_t> count_better(const cold::PeriodKey& period,
                                                 const std::vector<std::int64_t>& encoded) = 0;
  virtual std::int64_t count_before(const cold::PeriodKey& period, std::int64_t encoded,
                                    const std::string& member) = 0;
  virtual std::vector<cold::ColdHit> slice(const cold::PeriodKey& period, std::int64_t offset,
                                           std::int64_t limit) = 0;
  virtual std::optional<std::pair<std::int64_t, std::string>> key_at(const cold::PeriodKey& period,
                                                                     std::int64_t position) = 0;
  virtual std::vector<cold::ColdHit> from(const cold::PeriodKey& period, std::int64_t encoded,
                                          const std::string& member, std::int64_t limit) = 0;
  virtual std::vector<cold::ColdHit> after(const cold::PeriodKey& period, std::int64_t encoded,
                                           const std::string& member, std::int64_t limit) = 0;
  virtual std::vector<cold::ColdHit> before(const cold::PeriodKey& period, std::int64_t encoded,
                                            const std::string& member, std::int64_t limit) = 0;
  virtual std::vector<cold::ColdHit> rows_for(const cold::PeriodKey& period,
                                              const std::vector<std::string>& members) = 0;
};

// PostgreSQL, as reads and profiles use it. Each call may throw UnavailableError (backend
// postgres) when it cannot be reached.
class ColdTier {
 public:
  virtual ~ColdTier() = default;
  // false: the service runs without a cold tier (boards that never spill).
  virtual bool present() const = 0;
  virtual std::unique_ptr<ColdSnapshot> snapshot() = 0;
  // The profiles PostgreSQL keeps of these members (those that have one).
  virtual std::vector<cold::Profile> profiles(const std::string& board,
                                              const std::vector<std::string>& members) = 0;
};

}  // namespace bk::service
