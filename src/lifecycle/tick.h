// One lifecycle pass over every live board period found through the registries (never by
// scanning keys) and through the cold tier (which survives whatever Redis forgets):
// re-assert missing TTLs, spill what is ranked past hot_keep, archive the periods past
// end + grace (each with its close notice), publish the close notices, create history
// partitions ahead, and remove history past its retention.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "config/config.h"
#include "hot/board_scripts.h"
#include "lifecycle/archive.h"
#include "lifecycle/backend.h"
#include "lifecycle/closes.h"
#include "lifecycle/profiles.h"
#include "lifecycle/spill.h"
#include "redis/connection.h"

namespace bk::lifecycle {

using Seconds = std::chrono::duration<double>;

struct TickOptions {
  bool dry_run = false;
  std::int64_t chunk = kDefaultChunk;    // members per cold-tier transaction
  ArchiveProgressFn archive_progress{};  // optional: progress of each period's archive
};

// What became of a period in a tick, beyond its counts (src/cli/tick.cpp words it).
enum class PeriodOutcome {
  spilled,           // spilled what was ranked past hot_keep (perhaps nothing)
  not_in_config,     // its registry entry matches no period of the board's config: left alone
  archived,          // written to history by this tick
  would_archive,     // dry run: would be archived
  already_archived,  // archived before; its hot keys freed now
  busy_archiving,    // skipped: another tick is archiving it
  busy_spilling,     // skipped: another tick is spilling or archiving it
  lost,              // its hot key vanished before the archive, no cold rows (recorded)
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
  std::int64_t archived_hot = 0;   // of archived_rows: taken from Redis
  std::int64_t archived_cold = 0;  // of archived_rows: taken from the cold tier
  // archived: members per tier of the board's tiers (empty without tiers)
  std::vector<cold::TierCount> archived_tiers{};
  bool hot_lost = false;         // archived, but Redis had lost the period's data
  bool lost = false;             // its hot key vanished before it could be archived, no cold rows
  bool busy = false;             // skipped: another tick was spilling or archiving it
  std::int64_t busy_streak = 0;  // busy: ticks in a row that found it so, this one included
  PeriodOutcome outcome = PeriodOutcome::spilled;
  // would_archive: the rows the archive would take from each tier.
  std::int64_t would_archive_hot = 0;
  std::int64_t would_archive_cold = 0;
};

struct BoardReport {
  std::string board;
  std::vector<PeriodReport> periods;
  std::string error;  // set when this board failed; the others were still processed
  Backend error_backend = Backend::none;  // the server whose error failed it, if any
  std::int64_t recovered = 0;  // periods with cold rows that Redis had forgotten (re-marked)
  ProfileStats profiles{};     // member profiles written to PostgreSQL / moved out of Redis
};

// Where the time of a tick went, summed over its board periods.
struct TickTimings {
  Seconds partitions{0};  // creating history partitions ahead
  Seconds ttl{0};         // re-asserting TTLs
  Seconds spill{0};       // spilling beyond hot_keep (including taking the period lock)
  Seconds archive{0};     // archiving closed periods
  Seconds retention{0};   // removing history past its retention
  Seconds closes{0};      // publishing close notices
};

// History retention (history.retention): what this tick removed (would remove, in a dry run).
struct HistoryReport {
  std::int64_t periods = 0;     // archived periods whose rows were removed
  std::int64_t rows = 0;        // history rows removed
  std::int64_t partitions = 0;  // month partitions dropped whole
  bool busy = false;            // another tick was pruning: left to it
  std::string error;            // set when pruning failed (the boards were still processed)
  Backend error_backend = Backend::none;
};

struct TickReport {
  std::vector<BoardReport> boards;
  HistoryReport history;
  ClosesReport closes;  // close notices published after the archives
  TickTimings timings;
  bool any_failed() const;
};

class Tick {
 public:
  Tick(const Config& config, redis::Connection& redis, cold::ColdStore& cold,
       cold::History& archive, Clock clock);

  // Throws UnavailableError when Redis or PostgreSQL cannot be reached (nothing is removed
  // from Redis that is not committed to PostgreSQL); other failures are per board.
  TickReport run(const TickOptions& options);
  // The same, filling `report` as it goes: after a throw it holds what was done until then.
  void run(const TickOptions& options, TickReport& report);

 private:
  const Config& config_;
  redis::Connection& redis_;
  cold::ColdStore& cold_;
  cold::History& archive_;
  Clock clock_;
  hot::BoardScripts hot_;

  struct BoardPass;  // one board's run (tick.cpp)
  void run_board(const std::string& board, const std::vector<cold::PeriodKey>& with_rows,
                 const TickOptions& options, BoardReport& report, TickTimings& timings);
  void find_periods(BoardPass& pass, const std::vector<cold::PeriodKey>& with_rows);
  std::vector<std::string> live_keys(const hot::BoardKeys& keys);
  void profiles_before_archive(BoardPass& pass);
  void profiles_after(BoardPass& pass);
  void run_period(BoardPass& pass, const std::string& name);
  void archive_into(BoardPass& pass, const PeriodJob& job, const std::string& name,
                    PeriodReport& pr);
  void spill_into(BoardPass& pass, const PeriodJob& job, PeriodReport& pr);
  void league_period(BoardPass& pass, const PeriodJob& job, const std::string& name,
                     PeriodReport& pr);
  void open_current(BoardPass& pass);
  std::int64_t fix_ttls(const hot::PeriodKeys& keys, Instant expire_at, bool dry_run);
  void prune_history(const TickOptions& options, TickReport& report);
  void publish_closes(const TickOptions& options, TickReport& report);
  void count_busy(const hot::BoardKeys& keys, const std::map<std::string, std::int64_t>& streaks,
                  const std::string& registry_member, PeriodReport& report);
};

}  // namespace bk::lifecycle
