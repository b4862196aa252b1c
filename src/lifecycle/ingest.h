// The stream consumer: reads score events from a Redis stream in a consumer group, applies
// them in batches through the update path, acknowledges only what was applied or moved to
// the dead-letter stream, and reclaims what dead consumers left pending.
#pragma once
#include <atomic>
#include <cstdint>
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
  std::int64_t dead = 0;       // moved to <stream>:dead with a reason
  std::int64_t reclaimed = 0;  // taken over from other consumers
};

// Runs until `stop` becomes true (checked between batches) or, with drain, until the
// stream has nothing more for this group. Throws UnavailableError when Redis goes away;
// entries not yet acknowledged stay pending and are read again (their event ids, or the
// stream entry id when an event has none, make that harmless).
IngestStats ingest(redis::Connection& redis, service::Leaderboards& boards,
                   const IngestOptions& options, const std::atomic<bool>& stop);

}  // namespace bk::lifecycle
