// What ends an entry's time in the group, and keeps the streams bounded: dead letters written
// with their acknowledgement, acknowledgements of what was done, the streams' bounds looked
// at and trimmed, in-flight markers let go once replicas hold the bound, and leaving the
// group on a clean stop.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hot/stream.h"
#include "lifecycle/consumer/entry.h"
#include "lifecycle/ingest.h"
#include "redis/connection.h"
#include "service/leaderboards.h"

namespace bk::lifecycle::consumer {

// The dead letters of one batch: each entry's verdict, and for a dead letter why it is dead
// (the reason it carries and its label in IngestStats::dead_by_reason).
struct BatchVerdicts {
  const std::vector<Entry>& entries;
  std::vector<Verdict>& verdicts;
  const std::vector<std::string>& reasons;
  const std::vector<std::string>& labels;
};

class Acknowledger {
 public:
  Acknowledger(redis::Connection& redis, service::Leaderboards& boards,
               const IngestOptions& options, const std::vector<StreamNames>& streams,
               IngestObserver& observer);

  // Writes the batch's dead letters (verdict dead_letter), each with its acknowledgement:
  // done when written, hold when Redis refused it (counted in batch).
  void dead_letter(const BatchVerdicts& b, IngestStats& batch);
  // Acknowledges the entries whose verdict is acknowledge; whether there was one.
  bool acknowledge(const std::vector<Entry>& entries, const std::vector<Verdict>& verdicts);

  // The streams' bounds every bounds_every, and sooner when `idle` after acknowledging.
  void bound_streams_if_due(bool idle, IngestStats& totals);
  void bound_streams(IngestStats& totals);
  // Leaves each stream's group where nothing is pending at this consumer.
  void leave_groups();

  // Dead-letter streams that refused a dead letter, and why (until one is written there).
  const std::map<std::string, std::string>& refusing() const { return dead_refused_; }

 private:
  // Bounds seen whose writes the replicas of the stream's node may not hold yet (oldest
  // first, see prune_once_replicated), of one replication history and one connection.
  struct Unreplicated {
    hot::StreamId bound;
    std::int64_t offset = 0;  // the node's replication offset once it was seen
  };
  struct Replicas {
    std::deque<Unreplicated> unreplicated;
    std::string replid;
    std::uint64_t generation = 0;
    bool refused = false;  // warned once
  };

  redis::Connection& redis_;
  service::Leaderboards& boards_;
  const IngestOptions& o_;
  const std::vector<StreamNames>& streams_;
  IngestObserver& observer_;
  hot::StreamKeeper keeper_;
  std::vector<Replicas> replicas_;  // per stream
  std::map<std::string, std::string> dead_refused_;
  // The streams' bounds are looked at every bounds_every, and sooner when the consumer is
  // idle after acknowledging something (so a drained stream is trimmed at once).
  Steady::time_point next_bounds_ = Steady::now();
  bool acknowledged_since_bounds_ = false;

  hot::GroupRef ref(const StreamNames& s) const { return {s.key, o_.group}; }
  std::int64_t dead_letter_stream(std::size_t s, const BatchVerdicts& b, IngestStats& batch,
                                  std::int64_t refused_before);
  void prune_once_replicated(std::size_t s, hot::StreamId bound);
  void replication_refused(std::size_t s, hot::StreamId bound, const char* why);
  void leave(const StreamNames& s);
};

}  // namespace bk::lifecycle::consumer
