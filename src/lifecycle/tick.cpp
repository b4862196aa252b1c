// The tick pass: boards from <prefix>:boards, their periods from each board's registry.
#include "lifecycle/tick.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "cold/bans.h"
#include "hot/busy.h"
#include "hot/key_expiry.h"
#include "hot/registry.h"
#include "lifecycle/archive.h"
#include "lifecycle/league.h"
#include "lifecycle/profiles.h"
#include "lifecycle/spill.h"
#include "service/leaderboards.h"

namespace bk::lifecycle {

bool TickReport::any_failed() const {
  return !history.error.empty() || !closes.error.empty() ||
         std::any_of(boards.begin(), boards.end(),
                     [](const BoardReport& b) { return !b.error.empty(); });
}

Tick::Tick(const Config& config, redis::Connection& redis, cold::ColdStore& cold,
           cold::History& archive, Clock clock)
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
  // And the league boards the config names (not by a glob): their cohorts open before
  // anyone plays (open_current).
  for (const BoardConfig& b : config_.boards) {
    if (b.league && b.pattern.find_first_of("*?[]") == std::string::npos) names.insert(b.pattern);
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
  publish_closes(options, report);
  prune_history(options, report);
}

// After the archives, every close notice not yet in its stream goes there (after Redis lost a
// stream, those it lost go again). A failure leaves them pending for the next tick: the
// archives stand.
void Tick::publish_closes(const TickOptions& options, TickReport& report) {
  const Timed timed(report.timings.closes);
  cold::Closes closes(cold_.link());
  ClosesPublisher(config_, redis_, closes, archive_).run(report.closes, options.dry_run);
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
    const cold::History::Pruned p = archive_.prune_history(due, now - *shortest, options.dry_run);
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
  const std::vector<std::string> missing =
      hot::keys_without_expiry(redis_, {keys.live, keys.meta, keys.stale});
  if (!dry_run && !missing.empty()) hot::expire_keys_at(redis_, missing, expire_at);
  return static_cast<std::int64_t>(missing.size());
}

void Tick::count_busy(const hot::BoardKeys& keys,
                      const std::map<std::string, std::int64_t>& streaks,
                      const std::string& registry_member, PeriodReport& report) {
  if (report.busy) {
    // A claim that is never released (a tick stuck, or a lock PostgreSQL did not free) shows
    // as a streak that keeps growing, instead of a quiet skip each time.
    report.busy_streak = hot::note_busy(redis_, keys, registry_member);
  } else if (streaks.count(registry_member) != 0) {
    hot::end_busy(redis_, keys, registry_member);
  }
}

// One board's run within a tick: what every step of it reads and fills.
struct Tick::BoardPass {
  const std::string& board;
  const BoardConfig& config;
  const hot::BoardKeys keys;
  const TickOptions& options;
  BoardReport& report;
  TickTimings& timings;
  Instant now;
  std::map<std::string, std::int64_t> busy_streaks;  // registry member -> ticks found busy
  std::vector<std::string> names;                    // the registry members to look at
  std::set<std::string> seen;                        // of names
  bool moved_members = false;  // some member left a live ZSET: its profile may go
  bool league_waits = false;   // a league board's earlier period is still open (league_period)
};

namespace {

// The period `name` of the board ("<period>:<id>"), or nullopt when its config entry has no
// such period.
std::optional<Period> period_of(const BoardConfig& config, const std::string& name,
                                const PeriodSpec** spec) {
  const hot::LivePeriod parts = hot::split_registry_member(name);
  *spec = config.period(parts.period);
  if (*spec == nullptr) return std::nullopt;
  return period_from_id(**spec, *config.zone, parts.period_id);
}

// The period is closed, its grace over: it is archived now.
bool due_for_archive(const BoardConfig& config, const Period& period, Instant now) {
  return period.end + config.grace <= now;
}

// Unlocks a period's lock however the spill ends (nothing when it was not taken).
struct PeriodUnlock {
  cold::History& archive;
  cold::PeriodKey key;
  bool held = false;
  ~PeriodUnlock() {
    if (!held) return;
    try {
      archive.unlock_period(key);
    } catch (...) {
      // A lost connection releases its session locks by itself.
    }
  }
};

}  // namespace

void Tick::run_board(const std::string& board, const std::vector<cold::PeriodKey>& with_rows,
                     const TickOptions& options, BoardReport& report, TickTimings& timings) {
  const BoardConfig* config = config_.board_for(board);
  if (config == nullptr) {
    report.error = "no board entry in " + config_.path + " matches board '" + board +
                   "'; its periods are left alone";
    return;
  }
  BoardPass pass{board,   *config, hot::BoardKeys(config_.redis.key_prefix, board),
                 options, report,  timings,
                 {},      {},      {},
                 {},      false,   false};
  if (!options.dry_run) {
    // Every tick tells Redis again which periods have cold rows: after Redis lost data (or
    // rolled back past a spill), updates consult the cold tier there again.
    // It rebuilds the board's bans cache too (PostgreSQL's bans table is the truth).
    report.recovered = service::sync_board(config_, redis_, hot_, board, [&] {
      return service::ColdBoardState{with_rows, cold::Bans(cold_.link()).members(board)};
    });
  }
  find_periods(pass, with_rows);
  pass.now = clock_.now();
  if (!options.dry_run) profiles_before_archive(pass);
  for (const std::string& name : pass.names) run_period(pass, name);
  if (config->league && !options.dry_run) open_current(pass);
  profiles_after(pass);
  // The streak of a period that left the registry meanwhile (another tick archived it) ends.
  for (const auto& streak : pass.busy_streaks) {
    if (pass.seen.count(streak.first) == 0) hot::end_busy(redis_, pass.keys, streak.first);
  }
}

// The registry's periods (oldest end first), then those only the cold tier knows.
void Tick::find_periods(BoardPass& pass, const std::vector<cold::PeriodKey>& with_rows) {
  if (!pass.options.dry_run) pass.busy_streaks = hot::busy_streaks(redis_, pass.keys);
  for (const hot::LivePeriod& live : hot::live_periods(redis_, pass.keys)) {
    if (pass.seen.insert(live.member()).second) pass.names.push_back(live.member());
  }
  for (const cold::PeriodKey& k : with_rows) {
    std::string name = hot::registry_member(k.period, k.period_id);
    if (pass.seen.insert(name).second) pass.names.push_back(std::move(name));
  }
}

std::vector<std::string> Tick::live_keys(const hot::BoardKeys& keys) {
  std::vector<std::string> live;
  for (const hot::LivePeriod& p : hot::live_periods(redis_, keys)) {
    live.push_back(keys.live(p.period, p.period_id));
  }
  return live;
}

// Profiles: Redis's go to PostgreSQL before a period is archived (the history rows take them
// from there).
void Tick::profiles_before_archive(BoardPass& pass) {
  mark_profiles(redis_, cold_, pass.board, config_.redis.key_prefix);
  const bool archiving =
      std::any_of(pass.names.begin(), pass.names.end(), [&](const std::string& name) {
        const PeriodSpec* spec = nullptr;
        const auto p = period_of(pass.config, name, &spec);
        return p && due_for_archive(pass.config, *p, pass.now);
      });
  if (archiving) {
    const Timed timed(pass.timings.archive);
    pass.report.profiles =
        sync_profiles(redis_, hot_, cold_, pass.board, live_keys(pass.keys), true);
  }
}

// After spills and archives, the profiles of members hot nowhere leave Redis.
void Tick::profiles_after(BoardPass& pass) {
  BoardReport& report = pass.report;
  if (!pass.options.dry_run && pass.moved_members) {
    const Timed timed(pass.timings.spill);
    const ProfileStats p =
        sync_profiles(redis_, hot_, cold_, pass.board, live_keys(pass.keys), false);
    report.profiles.copied += p.copied;
    report.profiles.moved += p.moved;
  }
  if (report.profiles.moved > 0) {
    spdlog::info("tick: board '{}': {} profile fields of members hot nowhere moved to PostgreSQL",
                 pass.board, report.profiles.moved);
  }
}

// One period of the board: its TTLs re-asserted, then archived when due, else spilled.
void Tick::run_period(BoardPass& pass, const std::string& name) {
  PeriodReport pr;
  hot::LivePeriod parts = hot::split_registry_member(name);
  pr.period = std::move(parts.period);
  pr.period_id = std::move(parts.period_id);
  const auto& done = pass.report.periods;
  if (std::any_of(done.begin(), done.end(), [&](const PeriodReport& d) {
        return d.period == pr.period && d.period_id == pr.period_id;
      })) {
    return;  // done before a retry of the board
  }
  const PeriodSpec* spec = nullptr;
  const auto period = period_of(pass.config, name, &spec);
  if (!period) {
    pr.outcome = PeriodOutcome::not_in_config;
    pass.report.error = "registry entry '" + name;
    pass.report.error += "' of board '" + pass.board;
    pass.report.error += "' does not match its config entry (" + pass.config.where + ")";
    pass.report.periods.push_back(std::move(pr));
    return;
  }
  const hot::PeriodKeys pk(pass.keys, spec->name, period->id);
  {
    const Timed timed(pass.timings.ttl);
    pr.ttl_fixed =
        fix_ttls(pk, period->end + pass.config.retention_for(*spec), pass.options.dry_run);
  }
  const PeriodJob job{redis_,
                      hot_,
                      cold_,
                      BoardPeriod{&pass.config, spec, pass.board, *period},
                      pass.options.chunk,
                      pass.options.dry_run};
  if (pass.config.league) {
    const Timed timed(pass.timings.archive);
    league_period(pass, job, name, pr);
  } else if (due_for_archive(pass.config, *period, pass.now)) {
    const Timed timed(pass.timings.archive);
    archive_into(pass, job, name, pr);
  } else {
    const Timed timed(pass.timings.spill);
    spill_into(pass, job, pr);
  }
  if (!pass.options.dry_run) count_busy(pass.keys, pass.busy_streaks, name, pr);
  if (pr.spilled > 0) pass.moved_members = true;
  pass.report.periods.push_back(std::move(pr));
}

void Tick::archive_into(BoardPass& pass, const PeriodJob& job, const std::string& name,
                        PeriodReport& pr) {
  const ArchiveStats a = archive_period(job, archive_, pass.options.archive_progress);
  switch (a.outcome) {
    case ArchiveStats::Outcome::archived:
      pass.moved_members = true;
      pr.archived = true;
      pr.archived_rows = a.hot + a.cold;
      pr.archived_hot = a.hot;
      pr.archived_cold = a.cold;
      pr.archived_tiers = a.tiers;
      pr.hot_lost = a.hot_lost;
      pr.outcome = PeriodOutcome::archived;
      if (a.hot_lost) {
        spdlog::warn(
            "tick: board '{}' period {}: archived from the cold tier after Redis "
            "lost its data; points that lived only in Redis are missing",
            pass.board, name);
      }
      break;
    case ArchiveStats::Outcome::would_archive:
      pr.outcome = PeriodOutcome::would_archive;
      pr.would_archive_hot = a.hot;
      pr.would_archive_cold = a.cold;
      break;
    case ArchiveStats::Outcome::already:
      pass.moved_members = true;
      pr.outcome = PeriodOutcome::already_archived;
      break;
    case ArchiveStats::Outcome::busy:
      pr.busy = true;
      pr.outcome = PeriodOutcome::busy_archiving;
      break;
    case ArchiveStats::Outcome::lost:
      pr.lost = true;
      pr.outcome = PeriodOutcome::lost;
      pass.report.error = "period " + name +
                          " was lost (hot key gone before archive: retention "
                          "too short or tick not run in time)";
      break;
  }
}

// A league period (lifecycle/league.h): never spilled; its cohorts open once every earlier
// period of the board is closed (the divisions they start from are decided then), so the
// periods close in order and only the oldest open one is opened and checkpointed.
void Tick::league_period(BoardPass& pass, const PeriodJob& job, const std::string& name,
                         PeriodReport& pr) {
  const bool due = due_for_archive(pass.config, job.target.period, pass.now);
  if (pass.league_waits) {
    if (due) {
      pr.busy = true;
      pr.outcome = PeriodOutcome::busy_archiving;
    }
    return;
  }
  if (due) {
    archive_into(pass, job, name, pr);
  } else if (!pass.options.dry_run) {
    open_cohorts(job);
    checkpoint_seats(job);
  }
  const bool closed = pr.outcome == PeriodOutcome::archived ||
                      pr.outcome == PeriodOutcome::already_archived ||
                      pr.outcome == PeriodOutcome::lost;
  if (!closed) pass.league_waits = true;
}

// A league board's current period that nobody played yet: its cohorts open now, so its
// first members are seated as they come rather than at the next tick (unless an earlier
// period still waits for its close).
void Tick::open_current(BoardPass& pass) {
  if (pass.league_waits) return;
  const PeriodSpec& spec = pass.config.periods.front();
  const Period current = period_latest(spec, *pass.config.zone, pass.now);
  if (pass.seen.count(hot::registry_member(spec.name, current.id)) != 0) return;
  open_cohorts({redis_, hot_, cold_, BoardPeriod{&pass.config, &spec, pass.board, current},
                pass.options.chunk, false});
}

// Spills beyond hot_keep under the period's lock (skipped while another tick holds it).
void Tick::spill_into(BoardPass& pass, const PeriodJob& job, PeriodReport& pr) {
  const cold::PeriodKey key{pass.board, job.target.spec->name, job.target.period.id};
  if (!pass.options.dry_run && !archive_.try_lock_period(key)) {
    pr.busy = true;
    pr.outcome = PeriodOutcome::busy_spilling;
    return;
  }
  const PeriodUnlock unlock{archive_, key, !pass.options.dry_run};
  const SpillStats s = spill_beyond(job, pass.config.hot_keep);
  pr.hot_before = s.hot_before;
  pr.spilled = s.spilled;
  pr.kept_in_place = s.kept_in_place;
}

}  // namespace bk::lifecycle
