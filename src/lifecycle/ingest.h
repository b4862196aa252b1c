// The stream consumer: reads score events from a Redis stream in a consumer group, applies
// them in batches through the update path, acknowledges only what was applied or moved to
// the dead-letter stream, and reclaims what dead consumers left pending.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "config/config.h"
#include "redis/connection.h"
#include "service/leaderboards.h"

namespace bk::lifecycle {

struct IngestOptions {
  std::string stream;  // default "<prefix>:events"
  std::string group = "boardkeeper";
  std::string consumer;        // default "<host>-<pid>"
  std::int64_t batch = 1000;   // entries per read
  Millis block{1000};          // how long one read waits for new entries
  Millis reclaim_idle{30000};  // pending this long at another consumer: take it over
  bool drain = false;          // stop when nothing is left to read
};

struct IngestStats {
  std::int64_t read = 0;
  std::int64_t applied = 0;
  std::int64_t duplicates = 0;
  std::int64_t dead = 0;             // moved to <stream>:dead with a reason
  std::int64_t reclaimed = 0;        // taken over from other consumers
  std::int64_t unavailable = 0;      // left pending: their cold rows were unreachable
  std::int64_t rehydrated = 0;       // member periods brought back from the cold tier
  std::int64_t postgres_errors = 0;  // batches in which the cold tier was unreachable
  // Of `dead`, by why: "malformed" or a service::refusal_label ("closed", ...).
  std::map<std::string, std::int64_t> dead_by_reason;

  IngestStats& operator+=(const IngestStats& other);
};

// What the consumer tells while it runs, on its own thread (an observer that others read
// makes itself thread-safe). The defaults do nothing.
class IngestObserver {
 public:
  virtual ~IngestObserver() = default;
  // Each turn of the loop, whether it found entries or not: the consumer is alive.
  virtual void loop_turn() {}
  // A Redis round trip of the loop succeeded (true) or failed (false, before the error
  // leaves ingest()).
  virtual void redis_round_trip(bool /*ok*/) {}
  // A batch was applied and acknowledged: its own counts and how long it took.
  virtual void batch_done(const IngestStats& /*batch*/, std::chrono::duration<double> /*took*/) {}
};

// Runs until `stop` becomes true (checked between batches) or, with drain, until the
// stream has nothing more for this group. Throws UnavailableError when Redis goes away;
// entries not yet acknowledged stay pending and are read again (their event ids, or the
// stream entry id when an event has none, make that harmless).
IngestStats ingest(redis::Connection& redis, service::Leaderboards& boards,
                   const IngestOptions& options, const std::atomic<bool>& stop,
                   IngestObserver* observer = nullptr);

}  // namespace bk::lifecycle
