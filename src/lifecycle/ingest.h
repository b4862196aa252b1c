// The stream consumer: reads score events from one or more Redis streams in a consumer group,
// applies them in batches through the update path, acknowledges only what was applied or is
// confirmed in the dead-letter stream, re-reads its own pending entries in stream order,
// reclaims what dead consumers left pending, keeps the streams bounded (trims what every
// group acknowledged, caps the dead letters), leaves its group when it stops cleanly, and
// rides out Redis and PostgreSQL outages.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/error.h"
#include "hot/stream.h"
#include "redis/connection.h"
#include "service/leaderboards.h"

namespace bk::lifecycle {

// Capped exponential backoff: the n-th delay in a row is first * 2^(n-1), at most cap,
// times a jitter factor in [0.5, 1] so that many consumers do not retry in step.
struct Backoff {
  Millis first{100};
  Millis cap{10000};

  // `in_a_row` >= 1; `unit` in [0, 1] picks the jitter (a random number in use).
  Millis delay(std::int64_t in_a_row, double unit) const;
};

struct IngestOptions {
  // Read together in the group: at least one, none twice (see stream_list_problem). Each
  // stream's dead letters go to "<stream>:dead". An entry's order token (and in-flight
  // marker) is "<entry id>" in the first stream, "<stream>:<entry id>" in the others (so
  // equal entry ids of two streams are two events, and adding streams to a list never
  // renames the first one's entries); each stream has its own markers anyway.
  std::vector<std::string> streams;
  std::string group = "boardkeeper";
  std::string consumer;               // default "<host>-<pid>"
  std::int64_t batch = 1000;          // entries per read, per stream
  Millis block{1000};                 // how long one read waits for new entries
  Millis reclaim_idle{30000};         // pending this long at another consumer: take it over
  bool drain = false;                 // stop when nothing is left to read
  bool trim = true;                   // trim what every group of a stream has acknowledged
  std::int64_t dead_maxlen = 100000;  // each <stream>:dead is capped near this (MAXLEN ~)
  // How often the streams' bounds are looked at (and trimmed), also when idle after
  // acknowledging, and once more when the consumer stops.
  Millis bounds_every{1000};
  // Between attempts while Redis (or PostgreSQL, when it fails a batch) fails.
  Backoff reconnect{Millis{100}, Millis{10000}};
  // Between re-reads of this consumer's own pending entries (left pending because the cold
  // tier was unreachable, an earlier event of the member is held, or a dead letter could
  // not be written).
  Backoff retry_pending{Millis{1000}, Millis{10000}};
  // With drain: stop when nothing progressed (no entry applied, dead-lettered or
  // acknowledged) for this long, leaving the rest pending (IngestStats::stuck says why).
  Millis max_wait{60000};
};

// A board whose script calls get a lasting error reply (service::UpdateStatus::failed): its
// events stay pending, in order, while the other boards' go on.
struct FailingBoard {
  std::string board;
  std::string error;  // the last one, as the service said it (board, Redis's error, keys)
  std::chrono::system_clock::time_point since;
  std::int64_t attempts = 0;  // failed calls in a row
};

struct IngestStats {
  std::int64_t read = 0;
  std::int64_t applied = 0;
  std::int64_t duplicates = 0;
  std::int64_t dead = 0;         // confirmed in <stream>:dead with a reason, then acknowledged
  std::int64_t reclaimed = 0;    // taken over from other consumers
  std::int64_t unavailable = 0;  // left pending: their cold rows were unreachable
  std::int64_t waiting = 0;      // left pending: an earlier event of the member is held
  std::int64_t dead_letter_failures = 0;  // left pending: their dead letter was refused
  std::int64_t board_failed = 0;          // left pending: their board's keys refused it (lasting)
  std::int64_t board_failures = 0;        // script calls of a board failed with a lasting error
  std::int64_t rehydrated = 0;            // member periods brought back from the cold tier
  std::int64_t postgres_errors = 0;       // batches in which the cold tier was unreachable
  std::int64_t trimmed = 0;               // stream entries trimmed (acknowledged by every group)
  // Read ahead, then taken over by another consumer before they applied here (the batch
  // before took longer than half of reclaim_idle): left to that consumer.
  std::int64_t taken_over = 0;
  // Of `dead`, by why: "malformed" or a service::refusal_label ("closed", ...).
  std::map<std::string, std::int64_t> dead_by_reason;
  // Per stream, as its bounds were last looked at: every entry below this id is acknowledged
  // by the group (so nothing below it is in flight). Absent while the group does not exist.
  // operator+= takes the other's (later) values.
  std::map<std::string, hot::StreamId> acknowledged_below;
  // A drain that gave up (IngestOptions::max_wait without progress): what is left pending
  // and why, one line each (per stream, per failing board, per dead-letter stream that
  // refuses writes, Redis failing). Empty otherwise.
  std::vector<std::string> stuck;

  IngestStats& operator+=(const IngestStats& other);
};

// What the consumer tells while it runs, on its own thread (an observer that others read
// makes itself thread-safe). The defaults do nothing.
class IngestObserver {
 public:
  virtual ~IngestObserver() = default;
  // Each turn of the loop and every slice of a backoff sleep: the consumer is alive.
  virtual void loop_turn() {}
  // A Redis round trip of the loop succeeded.
  virtual void redis_round_trip() {}
  // `backend` failed `in_a_row` times in a row (the loop backs off, then tries again; for
  // Redis, with a new connection), or works again (in_a_row 0). Once per failure.
  virtual void backend_failures(Backend /*backend*/, std::int64_t /*in_a_row*/) {}
  // A batch was done (applied, dead-lettered, acknowledged or left pending): its own
  // counts and how long it took.
  virtual void batch_done(const IngestStats& /*batch*/, std::chrono::duration<double> /*took*/) {}
  // A stream's bounds were looked at (every IngestOptions::bounds_every, and at the end).
  virtual void stream_bounds(const std::string& /*stream*/, const hot::StreamBounds& /*bounds*/) {}
  // The boards failing now (by name), whenever one starts or stops failing or its error
  // changes.
  virtual void failing_boards(const std::vector<FailingBoard>& /*boards*/) {}
};

// Runs until `stop` becomes true (checked between batches and during every wait) or, with
// drain, until the streams have nothing more for this group, or nothing progressed for
// max_wait (IngestStats::stuck). Stopping so (not while Redis
// fails), it looks at the streams' bounds once more and leaves the group of each stream
// where nothing is pending at it. `redis` may be unconnected
// (Connect::later): it is connected, and reconnected after every failure, with backoff.
// Redis and PostgreSQL failures never end the run; entries not yet acknowledged stay
// pending and are read again (their event ids, or the stream entry id when an event has
// none, make that harmless). Throws only what is not a server's failure (a bug, a config
// mismatch).
IngestStats ingest(redis::Connection& redis, service::Leaderboards& boards,
                   const IngestOptions& options, const std::atomic<bool>& stop,
                   IngestObserver* observer = nullptr);

}  // namespace bk::lifecycle
