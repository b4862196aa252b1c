// Publishing close notices (docs/architecture.md, "Close notices, exactly once"): every notice
// the archive wrote and its stream does not hold yet is added to it, stream by stream in seq
// order, as the entry <seq>-1; what Redis refuses as not above the stream's top is in it
// already. After Redis lost a stream (or rolled it back), the notices above its top are added
// again, from PostgreSQL.
#pragma once
#include <cstdint>
#include <string>

#include "cold/closes.h"
#include "cold/history.h"
#include "config/config.h"
#include "hot/closes.h"
#include "lifecycle/backend.h"
#include "redis/connection.h"

namespace bk::lifecycle {

// What a tick did with the close notices.
struct ClosesReport {
  std::int64_t published = 0;  // entries this tick added to their streams
  std::int64_t refed = 0;      // of those: notices published before, added again (Redis lost them)
  std::int64_t found = 0;      // notices found in their stream already, marked published now
  std::int64_t pending = 0;    // notices still to publish after this tick
  std::int64_t published_total = 0;  // notices ever published (a counter)
  bool counted = false;              // pending and published_total were read
  std::string error;                 // the first failure (its stream's later notices wait)
  Backend error_backend = Backend::none;
};

// The most notices one stream gets in one tick (a re-feed after Redis lost a long stream takes
// several ticks).
inline constexpr std::int64_t kMaxPublishedPerTick = 10000;

class ClosesPublisher {
 public:
  ClosesPublisher(const Config& config, redis::Connection& redis, cold::Closes& closes,
                  cold::History& history);

  // Publishes what is pending (with `dry_run`: only counts it). Failures of either server
  // land in the report, never thrown: a stream that fails keeps its later notices back, the
  // other streams go on, and the next tick tries again.
  void run(ClosesReport& report, bool dry_run);

  // The stream a notice of a board with this entry goes to (its closes_stream, else
  // <key_prefix>:closes).
  static std::string stream_for(const BoardConfig& board, const std::string& key_prefix);
  // The entry of a notice: its fields, its top standings from history, the SQL for the rest.
  hot::EntryFields entry_of(const cold::CloseNotice& notice);

 private:
  const Config& config_;
  redis::Connection& redis_;
  cold::Closes& closes_;
  cold::History& history_;

  void publish_stream(const std::string& stream, ClosesReport& report);
  // The last notice the stream holds or held (its top's seq), checked against every notice.
  std::int64_t stream_through(const std::string& stream);
};

}  // namespace bk::lifecycle
