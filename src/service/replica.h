// Reads on a streaming replica of PostgreSQL (postgres.read_url) that never give a stale
// answer (docs/operations.md "Read replicas"): a read first asks the primary where its WAL is
// (cold/replication.h), then goes to the replica only if it has replayed that far, else to
// the primary. A replica that fails or does not answer in time is left alone for kRestFor.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>

namespace bk::cold {
class ColdStore;
}

namespace bk::service {

// How reads went, shared by every session of a process (metrics), and the replica's rest.
struct ReplicaReads {
  static constexpr std::chrono::seconds kRestFor{5};
  std::atomic<std::int64_t> replica{0};     // reads the replica answered
  std::atomic<std::int64_t> behind{0};      // sent to the primary: the replica had not replayed
  std::atomic<std::int64_t> failed{0};      // sent to the primary: the replica failed or hung
  std::atomic<std::int64_t> rest_until{0};  // steady_clock ticks: not asked before
};

// The replica store for a read that begins now, or nullptr: the read goes to the primary.
// Asks `primary` its WAL position (a failure there propagates: the read needs the primary
// either way), then `replica()` (which may connect) whether it replayed that far, within half
// of what is left of the thread's CallDeadline so that the primary still has time to answer.
cold::ColdStore* fresh_replica(cold::ColdStore& primary,
                               const std::function<cold::ColdStore&()>& replica,
                               ReplicaReads& reads);

// A read on the replica failed with `e`: counted, logged, and the replica rests for kRestFor.
void replica_failed(ReplicaReads& reads, const std::exception& e);

}  // namespace bk::service
