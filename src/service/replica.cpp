// Choosing the replica for a read (service/replica.h).
#include "service/replica.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "cold/call_deadline.h"
#include "cold/cold_store.h"
#include "cold/replication.h"
#include "core/error.h"
#include "core/redact.h"

namespace bk::service {

cold::ColdStore* fresh_replica(cold::ColdStore& primary,
                               const std::function<cold::ColdStore&()>& replica,
                               ReplicaReads& reads) {
  using Clock = std::chrono::steady_clock;
  if (!replica || Clock::now().time_since_epoch().count() < reads.rest_until.load()) {
    return nullptr;
  }
  const std::string position = cold::wal_position(primary);
  const auto now = Clock::now();
  std::optional<cold::CallDeadline> half;
  if (const auto deadline = cold::call_deadline(); deadline && *deadline > now) {
    half.emplace(now + (*deadline - now) / 2);
  }
  try {
    cold::ColdStore& store = replica();
    if (cold::replayed(store, position)) {
      ++reads.replica;
      return &store;
    }
    ++reads.behind;
    return nullptr;
  } catch (const Error& e) {
    // Whatever it is (down, hung, not a standby, a server without the function): the primary
    // can answer.
    replica_failed(reads, e);
    return nullptr;
  }
}

void replica_failed(ReplicaReads& reads, const std::exception& e) {
  using Clock = std::chrono::steady_clock;
  ++reads.failed;
  reads.rest_until.store((Clock::now() + ReplicaReads::kRestFor).time_since_epoch().count());
  spdlog::warn("serve: the PostgreSQL replica is left alone for {} s, reads go to the primary: {}",
               ReplicaReads::kRestFor.count(), redact(e.what()));
}

}  // namespace bk::service
