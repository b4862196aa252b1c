// The tick pass: boards from <prefix>:boards, their periods from each board's registry.
#include "lifecycle/tick.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "hot/busy.h"
#include "hot/registry.h"
#include "lifecycle/archive.h"
#include "lifecycle/profiles.h"
#include "lifecycle/spill.h"
#include "service/leaderboards.h"

namespace bk::lifecycle {

bool TickReport::any_failed() const {
  return !history.error.empty() ||
         std::any_of(boards.begin(), boards.end(),
                     [](const BoardReport& b) { return !b.error.empty(); });
}

Tick::Tick(const Config& config, redis::Connection& redis, cold::ColdStore& cold,
           cold::Archive& archive, Clock clock)
    : config_(config),
      redis_(redis),
      cold_(cold),
      archive_(archive),
      clock_(clock),
      hot_(config.redis.key_prefix) {}

namespace {

// Adds the time from its construction to its destruction to `total`.
class Timed {
 public:
  explicit Timed(Seconds& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Timed() { total_ += std::chrono::steady_clock::now() - start_; }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  Seconds& total_;
  std::chrono::steady_clock::time_point start_;
};

// Runs `attempt` for `board`, and once more after a transient server failure: every step
// of a tick is safe to repeat (the spill and archive protocols finish or redo what a broken
// step left). Redis gets a new connection first; PostgreSQL sessions reconnect by
// themselves. A second failure is thrown.
template <class Attempt>
void with_one_retry(const std::string& board, redis::Connection& redis, Attempt&& attempt) {
  try {
    attempt();
  } catch (const Error& e) {
    if (!e.transient() || e.backend() == Backend::none) throw;
    spdlog::warn("tick: board '{}' failed: {}; reconnecting and retrying it once", board, e.what());
    if (e.backend() == Backend::redis) redis.reconnect();
    attempt();
    spdlog::info("tick: board '{}' done on the retry", board);
  }
}

}  // namespace

TickReport Tick::run(const TickOptions& options) {
  TickReport report;
  run(options, report);
  return report;
}

void Tick::run(const TickOptions& options, TickReport& report) {
  if (!options.dry_run) {
    // History partitions for last month to two months ahead, so archives never land in the
    // default partition.
    const Timed timed(report.timings.partitions);
    const Instant now = clock_.now();
    archive_.ensure_partitions(now - std::chrono::hours{24 * 31},
                               now + std::chrono::hours{24 * 62});
  }
  // Work is found in both tiers: the boards Redis knows, and those with cold rows, which
  // Redis may have forgotten (restart without persistence, FLUSHALL, failover).
  std::set<std::string> names;
  for (std::string& b : hot::known_boards(redis_, config_.redis.key_prefix)) {
    names.insert(std::move(b));
  }
  std::map<std::string, std::vector<cold::PeriodKey>> with_rows;
  for (cold::PeriodKey& k : cold_.periods_with_rows()) {
    names.insert(k.board);
    with_rows[k.board].push_back(std::move(k));
  }
  std::int64_t spilled = 0;
  for (const std::string& board : names) {
    report.boards.push_back(BoardReport{board, {}, {}, Backend::none});
    BoardReport& b = report.boards.back();
    try {
      // Periods done before a retry stay done: run_board skips those already in the report.
      with_one_retry(board, redis_,
                     [&] { run_board(board, with_rows[board], options, b, report.timings); });
    } catch (const UnavailableError& e) {
      b.error = e.what();
      b.error_backend = e.backend();
      throw;
    } catch (const Error& e) {
      spdlog::error("tick: board '{}' failed: {}", board, e.what());
      b.error = e.what();
      b.error_backend = e.backend();
    }
    for (const PeriodReport& p : b.periods) spilled += p.spilled;
  }
  // After a big spill the planner's statistics of the cold tier are stale until autovacuum
  // gets to them (a minute or more), and rehydrating look-ups can pick a full scan of the
  // period meanwhile. Once per tick, only when it moved enough to matter.
  constexpr std::int64_t kAnalyzeAfterSpilled = 1000;
  if (!options.dry_run && spilled >= kAnalyzeAfterSpilled) {
    const Timed timed(report.timings.spill);
    cold_.analyze();
  }
  prune_history(options, report);
}

void Tick::prune_history(const TickOptions& options, TickReport& report) {
  std::optional<Millis> shortest;
  for (const auto& [name, r] : config_.history.retention) {
    if (r && (!shortest || *r < *shortest)) shortest = r;
  }
  if (!shortest) return;  // everything is kept forever
  const Timed timed(report.timings.retention);
  const Instant now = clock_.now();
  const auto due = [&](const std::string& period, Instant end) {
    const auto r = config_.history.retention_for(period);
    return r && end + *r < now;
  };
  try {
    const cold::Archive::Pruned p = archive_.prune_history(due, now - *shortest, options.dry_run);
    report.history = {p.periods, p.rows, p.partitions, p.busy, {}, Backend::none};
  } catch (const UnavailableError&) {
    throw;
  } catch (const Error& e) {
    spdlog::error("tick: removing history past its retention failed: {}", e.what());
    report.history.error = e.what();
    report.history.error_backend = e.backend();
  }
}

std::int64_t Tick::fix_ttls(const hot::PeriodKeys& keys, Instant expire_at, bool dry_run) {
  const std::vector<std::string> all{keys.live, keys.meta, keys.stale};
  std::vector<redis::Args> ask;
  ask.reserve(all.size());
  for (const auto& k : all) ask.push_back({"PTTL", k});
  const auto ttls = redis_.pipeline(ask);
  std::vector<redis::Args> fix;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (ttls[i].as_int() == -1) {  // exists without a TTL (-2: does not exist)
      fix.push_back({"PEXPIREAT", all[i], std::to_string(to_epoch_ms(expire_at))});
    }
  }
  if (!dry_run && !fix.empty()) {
    for (const auto& r : redis_.pipeline(fix)) r.checked();
  }
  return static_cast<std::int64_t>(fix.size());
}

void Tick::count_busy(const hot::BoardKeys& keys,
                      const std::map<std::string, std::int64_t>& streaks,
                      const std::string& registry_member, PeriodReport& report) {
  if (report.busy) {
    // A claim that is never released (a tick stuck, or a lock PostgreSQL did not free) shows
    // as a streak that keeps growing, instead of a quiet skip each time.
    report.busy_streak = hot::note_busy(redis_, keys, registry_member);
    if (report.busy_streak > 1) {
      report.note += " (" + std::to_string(report.busy_streak) + " ticks in a row)";
    }
  } else if (streaks.count(registry_member) != 0) {
    hot::end_busy(redis_, keys, registry_member);
  }
}

void Tick::run_board(const std::string& board, const std::vector<cold::PeriodKey>& with_rows,
                     const TickOptions& options, BoardReport& report, TickTimings& timings) {
  const BoardConfig* config = config_.board_for(board);
  if (config == nullptr) {
    report.error = "no board entry in " + config_.path + " matches board '" + board +
                   "'; its periods are left alone";
    return;
  }
  const hot::BoardKeys keys(config_.redis.key_prefix, board);
  if (!options.dry_run) {
    // Every tick tells Redis again which periods have cold rows: after Redis lost data (or
    // rolled back past a spill), updates consult the cold tier there again.
    report.recovered = service::sync_board(config_, redis_, hot_, board, with_rows);
  }
  // The registry's periods (oldest end first), then those only the cold tier knows.
  std::vector<std::string> names;
  std::set<std::string> seen;
  const auto busy_streaks =
      options.dry_run ? std::map<std::string, std::int64_t>{} : hot::busy_streaks(redis_, keys);
  for (const hot::LivePeriod& live : hot::live_periods(redis_, keys)) {
    if (seen.insert(live.member()).second) names.push_back(live.member());
  }
  for (const cold::PeriodKey& k : with_rows) {
    std::string name = hot::registry_member(k.period, k.period_id);
    if (seen.insert(name).second) names.push_back(std::move(name));
  }
  const Instant now = clock_.now();
  // Profiles: Redis's go to PostgreSQL before a period is archived (the history rows take
  // them from there); after spills and archives those of members hot nowhere leave Redis.
  const auto live_keys = [&] {
    std::vector<std::string> live;
    for (const hot::LivePeriod& p : hot::live_periods(redis_, keys)) {
      live.push_back(keys.live(p.period, p.period_id));
    }
    return live;
  };
  if (!options.dry_run) {
    mark_profiles(redis_, cold_, board, config_.redis.key_prefix);
    const bool archiving = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
      const hot::LivePeriod parts = hot::split_registry_member(name);
      const std::string& period = parts.period;
      const std::string& id = parts.period_id;
      const PeriodSpec* spec = config->period(period);
      const auto p = spec == nullptr ? std::nullopt : period_from_id(*spec, *config->zone, id);
      return p && p->end + config->grace <= now;
    });
    if (archiving) {
      const Timed timed(timings.archive);
      report.profiles = sync_profiles(redis_, hot_, cold_, board, live_keys(), true);
    }
  }
  bool moved_members = false;  // some member left a live ZSET: its profile may go
  for (const std::string& name : names) {
    PeriodReport pr;
    hot::LivePeriod parts = hot::split_registry_member(name);
    pr.period = std::move(parts.period);
    pr.period_id = std::move(parts.period_id);
    if (std::any_of(report.periods.begin(), report.periods.end(), [&](const PeriodReport& done) {
          return done.period == pr.period && done.period_id == pr.period_id;
        })) {
      continue;  // done before a retry of the board
    }
    const PeriodSpec* spec = config->period(pr.period);
    const auto period =
        spec == nullptr ? std::nullopt : period_from_id(*spec, *config->zone, pr.period_id);
    if (!period) {
      pr.note = "not a period of the board's config entry; left alone";
      report.error = "registry entry '" + name;
      report.error += "' of board '" + board;
      report.error += "' does not match its config entry (" + config->where + ")";
      report.periods.push_back(std::move(pr));
      continue;
    }
    const hot::PeriodKeys pk(keys, spec->name, period->id);
    {
      const Timed timed(timings.ttl);
      pr.ttl_fixed = fix_ttls(pk, period->end + config->retention_for(*spec), options.dry_run);
    }
    if (period->end + config->grace <= now) {
      const Timed timed(timings.archive);
      const ArchiveStats a =
          archive_period(PeriodJob{redis_, hot_, cold_, BoardPeriod{config, spec, board, *period},
                                   options.chunk, options.dry_run},
                         archive_, options.archive_progress);
      const std::string rows = std::to_string(a.hot + a.cold) + " rows (" + std::to_string(a.hot) +
                               " hot + " + std::to_string(a.cold) + " cold)";
      switch (a.outcome) {
        case ArchiveStats::Outcome::archived:
          moved_members = true;
          pr.archived = true;
          pr.archived_rows = a.hot + a.cold;
          pr.archived_hot = a.hot;
          pr.archived_cold = a.cold;
          pr.hot_lost = a.hot_lost;
          pr.note = "archived " + rows;
          if (a.hot_lost) {
            pr.note +=
                "; HOT PART LOST: Redis had lost this period's data (its points that "
                "lived only in Redis are missing; recorded in periods)";
            spdlog::warn(
                "tick: board '{}' period {}: archived from the cold tier after Redis "
                "lost its data; points that lived only in Redis are missing",
                board, name);
          }
          break;
        case ArchiveStats::Outcome::would_archive:
          pr.note = "would archive " + rows;
          break;
        case ArchiveStats::Outcome::already:
          moved_members = true;
          pr.note = "already archived; hot keys freed";
          break;
        case ArchiveStats::Outcome::busy:
          pr.busy = true;
          pr.note = "being archived by another tick; skipped";
          break;
        case ArchiveStats::Outcome::lost:
          pr.lost = true;
          pr.note = "LOST: its hot key vanished before it was archived (recorded in periods)";
          report.error = "period " + name +
                         " was lost (hot key gone before archive: retention "
                         "too short or tick not run in time)";
          break;
      }
    } else if (const Timed timed(timings.spill);  // times the else branch too
               !options.dry_run && !archive_.try_lock_period({board, spec->name, period->id})) {
      pr.busy = true;
      pr.note = "being spilled or archived by another tick; skipped";
    } else {
      struct Unlock {  // released however the spill ends
        cold::Archive& a;
        cold::PeriodKey k;
        bool held = false;
        ~Unlock() {
          if (!held) return;
          try {
            a.unlock_period(k);
          } catch (...) {
            // A lost connection releases its session locks by itself.
          }
        }
      } unlock{archive_, {board, spec->name, period->id}, !options.dry_run};
      const SpillStats s =
          spill_beyond(PeriodJob{redis_, hot_, cold_, BoardPeriod{config, spec, board, *period},
                                 options.chunk, options.dry_run},
                       config->hot_keep);
      pr.hot_before = s.hot_before;
      pr.spilled = s.spilled;
      pr.kept_in_place = s.kept_in_place;
    }
    if (!options.dry_run) count_busy(keys, busy_streaks, name, pr);
    if (pr.spilled > 0) moved_members = true;
    report.periods.push_back(std::move(pr));
  }
  if (!options.dry_run && moved_members) {
    const Timed timed(timings.spill);
    const ProfileStats p = sync_profiles(redis_, hot_, cold_, board, live_keys(), false);
    report.profiles.copied += p.copied;
    report.profiles.moved += p.moved;
  }
  if (report.profiles.moved > 0) {
    spdlog::info("tick: board '{}': {} profile fields of members hot nowhere moved to PostgreSQL",
                 board, report.profiles.moved);
  }
  // The streak of a period that left the registry meanwhile (another tick archived it) ends.
  for (const auto& streak : busy_streaks) {
    if (seen.count(streak.first) == 0) hot::end_busy(redis_, keys, streak.first);
  }
}

}  // namespace bk::lifecycle
