// One lifecycle pass over every live board period found through the registries (never by
// scanning keys): re-assert missing TTLs, spill what is ranked past hot_keep, archive the
// periods past end + grace, and create history partitions ahead.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cold/archive.h"
#include "cold/cold_store.h"
#include "config/config.h"
#include "hot/hot_board.h"
#include "redis/connection.h"

namespace bk::lifecycle {

struct TickOptions {
  bool dry_run = false;
  std::int64_t chunk = 5000;  // members per cold-tier transaction
};

struct PeriodReport {
  std::string period;
  std::string period_id;
  std::int64_t hot_before = 0;
  std::int64_t spilled = 0;
  std::int64_t kept_in_place = 0;
  std::int64_t ttl_fixed = 0;
  bool archived = false;  // written to history by this tick
  std::int64_t archived_rows = 0;
  bool lost = false;  // its hot key vanished before it could be archived
  std::string note;   // what happened, for people
};

struct BoardReport {
  std::string board;
  std::vector<PeriodReport> periods;
  std::string error;  // set when this board failed; the others were still processed
};

struct TickReport {
  std::vector<BoardReport> boards;
  bool any_failed() const;
};

class Tick {
 public:
  Tick(const Config& config, redis::Connection& redis, cold::ColdStore& cold,
       cold::Archive& archive, Clock clock);

  // Throws UnavailableError when Redis or PostgreSQL cannot be reached (nothing is removed
  // from Redis that is not committed to PostgreSQL); other failures are per board.
  TickReport run(const TickOptions& options);

 private:
  const Config& config_;
  redis::Connection& redis_;
  cold::ColdStore& cold_;
  cold::Archive& archive_;
  Clock clock_;
  hot::HotBoard hot_;

  BoardReport run_board(const std::string& board, const TickOptions& options);
  std::int64_t fix_ttls(const hot::PeriodKeys& keys, Instant expire_at, bool dry_run);
};

}  // namespace bk::lifecycle
