// The library API's facade: owns the update path and the reads and profiles
// (service/leaderboards_units.h), each over its tiers, and forwards to them.
#include "service/leaderboards.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <spdlog/spdlog.h>

#include "cold/error.h"
#include "core/duration.h"
#include "core/json.h"
#include "core/profile.h"
#include "core/validate.h"
#include "hot/moderation.h"
#include "hot/protocol.h"
#include "hot/registry.h"
#include "redis/error.h"
#include "service/leaderboards_units.h"

namespace bk::service {

const char* refusal_label(Refusal refusal) {
  switch (refusal) {
    case Refusal::none:
      return "none";
    case Refusal::invalid_board:
      return "invalid_board";
    case Refusal::unknown_board:
      return "unknown_board";
    case Refusal::invalid_member:
      return "invalid_member";
    case Refusal::invalid_value:
      return "invalid_value";
    case Refusal::too_early:
      return "too_early";
    case Refusal::no_period:
      return "no_period";
    case Refusal::closed:
      return "closed";
    case Refusal::out_of_range:
      return "out_of_range";
    case Refusal::expired:
      return "expired";
    case Refusal::cold_tier:
      return "cold_tier";
    case Refusal::invalid_profile:
      return "invalid_profile";
    case Refusal::invalid_event_id:
      return "invalid_event_id";
    case Refusal::invalid_time:
      return "invalid_time";
    case Refusal::key_reused:
      return "key_reused";
    case Refusal::banned:
      return "banned";
  }
  return "unknown";
}

namespace {

std::optional<PostgresUpdateTier> cold_tier_of(bool attached,
                                               std::function<cold::ColdStore&()> store) {
  if (!attached) return std::nullopt;
  return PostgresUpdateTier(std::move(store));
}

}  // namespace

Leaderboards::UpdatePath::UpdatePath(Leaderboards& lb)
    : hot(lb.config_, lb.redis_, lb.hot_),
      cold(cold_tier_of(lb.has_cold(), [&lb]() -> cold::ColdStore& { return lb.cold_store(); })),
      updates(
          lb.config_, lb.clock_, lb.layouts_, hot, cold ? &*cold : nullptr, lb.counters_,
          [&lb](const std::string& stream) -> std::int64_t {
            const auto acked = lb.acknowledged_below_.find(stream);
            return acked == lb.acknowledged_below_.end() ||
                           acked->second.generation != lb.redis_.generation()
                       ? 0
                       : acked->second.ms;
          },
          [&lb](const std::vector<Update>& batch, std::vector<UpdateResult>& results) {
            lb.write_profiles(batch, results);  // the facade's: reads and profiles live there
          }),
      idempotency(lb.config_.redis.key_prefix) {}

Leaderboards::~Leaderboards() = default;

Reads& Leaderboards::reads() {
  return reads_->reads;
}

void Leaderboards::write_profiles(const std::vector<Update>& updates,
                                  std::vector<UpdateResult>& results) {
  reads_->profiles.write(updates, results);
}

// The script calls prepare() made, for apply(Prepared).
struct Leaderboards::Batches {
  UpdateCalls calls;
};

Leaderboards::Leaderboards(const Config& config, redis::Connection& redis, Clock clock,
                           cold::ColdStore* cold)
    : Leaderboards(config, redis, clock, cold, nullptr) {}

Leaderboards::Leaderboards(const Config& config, redis::Connection& redis, Clock clock,
                           std::function<cold::ColdStore&()> cold)
    : Leaderboards(config, redis, clock, nullptr, std::move(cold)) {}

// Both tiers are known before any unit is made: each unit is made once, over them.
Leaderboards::Leaderboards(const Config& config, redis::Connection& redis, Clock clock,
                           cold::ColdStore* cold, std::function<cold::ColdStore&()> provider)
    : config_(config),
      redis_(redis),
      clock_(clock),
      cold_(cold),
      cold_provider_(std::move(provider)),
      hot_(config.redis.key_prefix, has_cold()) {
  for (const BoardConfig& b : config_.boards) {
    for (const PeriodSpec& p : b.periods) layouts_.emplace(&p, b.layout_for(p));
  }
  make_update_path();
  reads_ = std::make_unique<ReadUnits>(*this);
  std::function<cold::ColdStore&()> cold_of;
  if (has_cold()) cold_of = [this]() -> cold::ColdStore& { return cold_store(); };
  moderation_ = std::make_unique<Moderation>(config_, redis_, clock_, std::move(cold_of));
}

cold::ColdStore& Leaderboards::cold_store() {
  if (cold_ == nullptr) cold_ = &cold_provider_();
  return *cold_;
}

const BoardConfig& board_entry(const Config& config, const std::string& board) {
  if (auto problem = board_name_problem(board)) throw UsageError(*problem + ": " + quoted(board));
  const BoardConfig* c = config.board_for(board);
  if (c == nullptr) {
    throw NotFoundError("no board entry in " + config.path + " matches board '" + board + "'");
  }
  return *c;
}

void Leaderboards::make_update_path() {
  updates_ = std::make_unique<UpdatePath>(*this);
}

Leaderboards::Prepared::Prepared() = default;
Leaderboards::Prepared::Prepared(Prepared&&) noexcept = default;
Leaderboards::Prepared& Leaderboards::Prepared::operator=(Prepared&&) noexcept = default;
Leaderboards::Prepared::~Prepared() = default;

std::vector<UpdateResult> Leaderboards::apply(const std::vector<Update>& updates, Detail detail) {
  const bool keyed = std::any_of(updates.begin(), updates.end(), [](const Update& u) {
    return !u.fingerprint.empty() && !u.event_id.empty();
  });
  return keyed ? apply_keyed(updates, detail) : apply(prepare(updates, detail));
}

Leaderboards::Prepared Leaderboards::prepare(const std::vector<Update>& updates, Detail detail) {
  Prepared p;
  p.updates_ = &updates;
  p.results_.resize(updates.size());
  p.batches_ =
      std::make_unique<Batches>(Batches{updates_->updates.prepare(updates, detail, p.results_)});
  return p;
}

std::vector<UpdateResult> Leaderboards::apply(Prepared&& prepared,
                                              const std::function<void()>& while_waiting) {
  if (!prepared.batches_)
    throw Error("internal: apply() of a Prepared that prepare() did not make");
  return updates_->updates.apply(*prepared.updates_, prepared.batches_->calls,
                                 std::move(prepared.results_), while_waiting);
}

void Leaderboards::hold(const std::vector<Update>& updates) {
  updates_->updates.hold(updates);
}

namespace {

std::vector<hot::SyncedPeriod> synced_periods(const Config& config, const std::string& board,
                                              const std::vector<cold::PeriodKey>& with_rows) {
  const hot::BoardKeys keys(config.redis.key_prefix, board);
  std::vector<hot::SyncedPeriod> periods;
  if (const BoardConfig* c = config.board_for(board)) {
    for (const cold::PeriodKey& k : with_rows) {
      if (k.board != board) continue;
      const PeriodSpec* spec = c->period(k.period);
      if (spec == nullptr) continue;  // tick reports periods its config does not know
      const auto p = period_from_id(*spec, *c->zone, k.period_id);
      if (!p) continue;
      periods.push_back({keys.meta(spec->name, p->id), p->end + c->retention_for(*spec)});
    }
  }
  return periods;
}

}  // namespace

std::int64_t sync_board(const Config& config, redis::Connection& redis, hot::BoardScripts& hot,
                        const std::string& board,
                        const std::function<ColdBoardState()>& read_cold) {
  const hot::BoardKeys keys(config.redis.key_prefix, board);
  hot::Moderation moderation(config.redis.key_prefix);
  // Each round that answers "again" lost the race to a ban or unban of this board.
  constexpr int kMaxRounds = 8;
  for (int round = 0; round < kMaxRounds; ++round) {
    hot::BoardBans bans{moderation.bans_generation(redis, board), {}};  // S1
    ColdBoardState state = read_cold();                                 // S2
    bans.members = std::move(state.banned);
    const auto recovered =
        hot.sync(redis, keys, synced_periods(config, board, state.with_rows), bans);  // S3
    if (recovered) return *recovered;
  }
  throw UnavailableError("board '" + board + "' could not be synced: its bans changed " +
                         std::to_string(kMaxRounds) + " times while it was read; try again");
}

UpdateResult Leaderboards::apply(const Update& update) {
  return apply(std::vector<Update>{update}).front();
}

const PeriodSpec& period_spec(const BoardConfig& c, const std::string& board,
                              const std::string& period) {
  if (const PeriodSpec* spec = c.period(period)) return *spec;
  std::string known;
  for (const PeriodSpec& p : c.periods) known += (known.empty() ? "" : ", ") + p.name;
  throw NotFoundError("board '" + board + "' has no period " + quoted(period) +
                      "; its periods are: " + known);
}

PeriodRef resolve_period(const Config& config, const std::string& board, const std::string& period,
                         const std::optional<std::string>& period_id, Instant now) {
  const BoardConfig& c = board_entry(config, board);
  const PeriodSpec* spec = &period_spec(c, board, period);
  PeriodRef ref{&c, spec, board, {}};
  if (period_id) {
    auto p = period_from_id(*spec, *c.zone, *period_id);
    if (!p) {
      throw UsageError(quoted(*period_id) + " is not a " + spec->name + " period id of board '" +
                       board + "' (time zone " + c.timezone + ")");
    }
    ref.period = std::move(*p);
  } else {
    try {
      ref.period = period_latest(*spec, *c.zone, now);
    } catch (const RefusedError& e) {
      throw UsageError(e.what());
    }
  }
  return ref;
}

PeriodRef Leaderboards::resolve(const std::string& board, const std::string& period,
                                const std::optional<std::string>& period_id) const {
  return resolve_period(config_, board, period, period_id, clock_.now());
}

}  // namespace bk::service
