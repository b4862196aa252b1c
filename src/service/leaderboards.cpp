// The library API's facade: owns the update path (service/updates.h) and its tiers, and
// answers reads (decoding what Redis and PostgreSQL hold).
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
#include "hot/protocol.h"
#include "hot/registry.h"
#include "redis/error.h"
#include "service/update_tiers.h"
#include "service/updates.h"

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
  }
  return "unknown";
}

// The update path and the tiers it works over (the cold one only with a cold tier).
struct Leaderboards::UpdatePath {
  explicit UpdatePath(Leaderboards& lb);
  RedisUpdateTier hot;
  std::optional<PostgresUpdateTier> cold;
  Updates updates;
};

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
          }) {}

void Leaderboards::UpdatePathDeleter::operator()(UpdatePath* path) const {
  delete path;
}

// The script calls prepare() made, for apply(Prepared).
struct Leaderboards::Batches {
  UpdateCalls calls;
};

Leaderboards::Leaderboards(const Config& config, redis::Connection& redis, Clock clock,
                           cold::ColdStore* cold)
    : config_(config),
      redis_(redis),
      clock_(clock),
      cold_(cold),
      hot_(config.redis.key_prefix, cold != nullptr) {
  for (const BoardConfig& b : config_.boards) {
    for (const PeriodSpec& p : b.periods) layouts_.emplace(&p, b.layout_for(p));
  }
  make_update_path();
}

Leaderboards::Leaderboards(const Config& config, redis::Connection& redis, Clock clock,
                           std::function<cold::ColdStore&()> cold)
    : Leaderboards(config, redis, clock, nullptr) {
  cold_provider_ = std::move(cold);
  hot_ = hot::HotBoard(config.redis.key_prefix, cold_provider_ != nullptr);
  make_update_path();
}

cold::ColdStore& Leaderboards::cold_store() {
  if (cold_ == nullptr) cold_ = &cold_provider_();
  return *cold_;
}

const ScoreLayout& Leaderboards::layout(const PeriodSpec& spec) const {
  return layouts_.at(&spec);
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
  updates_.reset(new UpdatePath(*this));
}

Leaderboards::Prepared::Prepared() = default;
Leaderboards::Prepared::Prepared(Prepared&&) noexcept = default;
Leaderboards::Prepared& Leaderboards::Prepared::operator=(Prepared&&) noexcept = default;
Leaderboards::Prepared::~Prepared() = default;

std::vector<UpdateResult> Leaderboards::apply(const std::vector<Update>& updates, Detail detail) {
  return apply(prepare(updates, detail));
}

Leaderboards::Prepared Leaderboards::prepare(const std::vector<Update>& updates, Detail detail) {
  Prepared p;
  p.updates_ = &updates;
  p.results_.resize(updates.size());
  p.batches_ = std::make_unique<Batches>(
      Batches{updates_->updates.prepare(updates, detail == Detail::points, p.results_)});
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

// After the scores: a retried update (a duplicate) sets its profile again, as the first
// attempt may have ended between the two. A board whose profile HASH Redis refuses for good
// (a key of the wrong type) fails those updates (their points stand: sent again, they are
// duplicates that set the profile then); the other boards' profiles are written.
void Leaderboards::write_profiles(const std::vector<Update>& updates,
                                  std::vector<UpdateResult>& results) {
  std::map<std::string, std::pair<redis::Args, redis::Args>> by_board;  // HSETs: names, metadata
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const Update& u = updates[i];
    if (!u.name && !u.meta) continue;
    if (results[i].status != UpdateStatus::applied &&
        results[i].status != UpdateStatus::duplicate) {
      continue;
    }
    auto& [names, metas] = by_board[u.board];
    if (u.name) names.insert(names.end(), {u.member, *u.name});
    if (u.meta) {
      std::string compact;
      metadata_problem(*u.meta, compact);  // valid: plan() checked it
      metas.insert(metas.end(), {u.member, std::move(compact)});
    }
  }
  std::vector<redis::Args> commands;
  std::vector<std::string> board_of;  // of each command
  for (auto& [board, hsets] : by_board) {
    const hot::BoardKeys keys(config_.redis.key_prefix, board);
    auto& [names, metas] = hsets;
    if (!names.empty()) {
      names.insert(names.begin(), {"HSET", keys.names()});
      commands.push_back(std::move(names));
      board_of.push_back(board);
    }
    if (!metas.empty()) {
      metas.insert(metas.begin(), {"HSET", keys.metadata()});
      commands.push_back(std::move(metas));
      board_of.push_back(board);
    }
  }
  if (commands.empty()) return;
  const std::vector<redis::Reply> replies = redis_.pipeline(commands);
  std::map<std::string, std::string> refused;  // board -> why
  for (std::size_t c = 0; c < replies.size(); ++c) {
    const redis::Reply& r = replies[c];
    if (!r.is_error() || redis::classify_reply_error(r.str) == redis::ErrorClass::transient) {
      r.checked();  // a transient error goes up: the caller retries the whole call
      continue;
    }
    refused.emplace(board_of[c], "key " + commands[c][1] + ": " + r.str);
  }
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const auto it = refused.find(updates[i].board);
    if (it == refused.end() || (!updates[i].name && !updates[i].meta)) continue;
    if (results[i].status != UpdateStatus::applied &&
        results[i].status != UpdateStatus::duplicate) {
      continue;
    }
    results[i].status = UpdateStatus::failed;
    results[i].reason = "the points were applied, but Redis refused the profile on board '" +
                        it->first + "': " + it->second;
  }
}

std::int64_t sync_board(const Config& config, redis::Connection& redis, hot::HotBoard& hot,
                        const std::string& board, const std::vector<cold::PeriodKey>& with_rows) {
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
  return hot.sync(redis, keys, periods);
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
      ref.period = period_containing(*spec, *c.zone, now);
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

Standing Leaderboards::decode(const PeriodRef& ref, const hot::Listed& l) const {
  const Decoded d = ScoreCodec(layout(*ref.spec)).decode(l.encoded, ref.period.start);
  return Standing{l.rank, l.member, d.points, d.achieved_at};
}

std::vector<Standing> Leaderboards::decode_all(const PeriodRef& ref,
                                               const std::vector<hot::Listed>& listed) const {
  std::vector<Standing> out;
  out.reserve(listed.size());
  for (const hot::Listed& l : listed) out.push_back(decode(ref, l));
  return out;
}

hot::PeriodKeys Leaderboards::period_keys(const PeriodRef& ref) const {
  return {hot::BoardKeys(config_.redis.key_prefix, ref.board), ref.spec->name, ref.period.id};
}

// Each hot read says, atomically with what it read, whether the period has spilled; then
// the answer comes from both tiers.
void check_bound(const PeriodRef& ref, const char* what, std::int64_t value, std::int64_t max) {
  if (value >= 0 && value <= max) return;
  throw UsageError("a read of " + ref.board + " " + ref.spec->name + " " + ref.period.id + ": " +
                   what + " " + std::to_string(value) + " is outside [0, " + std::to_string(max) +
                   "]");
}

std::vector<Standing> Leaderboards::top(const PeriodRef& ref, std::int64_t offset,
                                        std::int64_t count) {
  auto rows = top_rows(ref, offset, count);
  attach_profiles(ref.board, rows);
  return rows;
}

std::vector<Standing> Leaderboards::top_rows(const PeriodRef& ref, std::int64_t offset,
                                             std::int64_t count) {
  check_bound(ref, "count", count, kMaxReadRows);
  check_bound(ref, "offset", offset, kMaxReadOffset);
  if (count == 0) return {};
  auto hot = hot_.range(redis_, period_keys(ref), offset, count);
  if (hot.spilled) return merged_top(ref, offset, count);
  return decode_all(ref, hot.value);
}

std::optional<Standing> Leaderboards::rank(const PeriodRef& ref, const std::string& member) {
  auto hot = hot_.member(redis_, period_keys(ref), member);
  std::vector<Standing> found;
  if (hot.spilled) {
    if (auto s = merged_rank(ref, member)) found.push_back(std::move(*s));
  } else if (hot.value) {
    found.push_back(decode(ref, *hot.value));
  }
  if (found.empty()) return std::nullopt;
  attach_profiles(ref.board, found);
  return std::move(found.front());
}

std::vector<Standing> Leaderboards::around(const PeriodRef& ref, const std::string& member,
                                           std::int64_t k) {
  check_bound(ref, "k", k, kMaxReadRows / 2);
  auto hot = hot_.around(redis_, period_keys(ref), member, k);
  auto rows = hot.spilled ? merged_around(ref, member, k) : decode_all(ref, hot.value);
  attach_profiles(ref.board, rows);
  return rows;
}

// Redis first (unless `known` covers every row); PostgreSQL only for a field a member lacks
// in Redis, and only when that field's hash marker says some moved there. Scores matter more
// than names: when PostgreSQL cannot be reached the read goes on without those profiles, and
// each row says which of its fields are unavailable.
void Leaderboards::attach_profiles(const std::string& board, std::vector<Standing>& rows,
                                   const KnownProfiles* known) {
  if (rows.empty()) return;
  KnownProfiles read;
  if (known == nullptr || !std::all_of(rows.begin(), rows.end(), [&](const Standing& s) {
        return known->by_member.count(s.member) != 0;
      })) {
    read = read_profiles(board, rows);
    known = &read;
  }
  std::vector<std::string> lacking;
  for (Standing& s : rows) {
    if (const auto it = known->by_member.find(s.member); it != known->by_member.end()) {
      std::tie(s.name, s.metadata) = it->second;
    }
    if (!fields_elsewhere(s, *known).empty()) lacking.push_back(s.member);
  }
  profiles_from_cold(board, rows, lacking, *known);
}

std::vector<std::string> Leaderboards::fields_elsewhere(const Standing& s,
                                                        const KnownProfiles& known) {
  std::vector<std::string> out;
  if (!s.name && known.names_moved) out.emplace_back("name");
  if (!s.metadata && known.metadata_moved) out.emplace_back("metadata");
  return out;
}

Leaderboards::KnownProfiles Leaderboards::read_profiles(const std::string& board,
                                                        const std::vector<Standing>& rows) {
  const hot::BoardKeys keys(config_.redis.key_prefix, board);
  // Per chunk of members an HMGET of each hash (commands stay small); the markers first.
  constexpr std::size_t kChunk = 2000;
  std::vector<redis::Args> commands{{"HEXISTS", keys.names(), ""},
                                    {"HEXISTS", keys.metadata(), ""}};
  for (std::size_t from = 0; from < rows.size(); from += kChunk) {
    redis::Args names{"HMGET", keys.names()};
    redis::Args metas{"HMGET", keys.metadata()};
    for (std::size_t i = from; i < std::min(rows.size(), from + kChunk); ++i) {
      names.push_back(rows[i].member);
      metas.push_back(rows[i].member);
    }
    commands.push_back(std::move(names));
    commands.push_back(std::move(metas));
  }
  const auto replies = redis_.pipeline(commands);
  KnownProfiles out;
  out.names_moved = replies.at(0).checked().as_int() == 1;
  out.metadata_moved = replies.at(1).checked().as_int() == 1;
  const auto text = [](const redis::Reply& r) {
    return r.is_nil() ? std::nullopt : std::optional<std::string>(r.as_string());
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t c = 2 + 2 * (i / kChunk);
    out.by_member.emplace(rows[i].member,
                          std::pair{text(replies.at(c).checked().at(i % kChunk)),
                                    text(replies.at(c + 1).checked().at(i % kChunk))});
  }
  return out;
}

void Leaderboards::profiles_from_cold(const std::string& board, std::vector<Standing>& rows,
                                      const std::vector<std::string>& lacking,
                                      const KnownProfiles& known) {
  if (lacking.empty() || !has_cold()) return;
  std::vector<cold::Profile> found;
  try {
    found = cold_store().profiles(board, lacking);
  } catch (const UnavailableError& e) {
    if (e.backend() != Backend::postgres) throw;
    spdlog::warn("profiles of {} members of board '{}' left out: {}", lacking.size(), board,
                 e.what());
    for (Standing& s : rows) s.unavailable = fields_elsewhere(s, known);
    return;
  }
  std::unordered_map<std::string, const cold::Profile*> by_member;
  for (const cold::Profile& p : found) by_member.emplace(p.member, &p);
  for (Standing& s : rows) {
    const auto it = by_member.find(s.member);
    if (it == by_member.end()) continue;
    if (!s.name) s.name = it->second->name;
    if (!s.metadata) s.metadata = it->second->metadata;
  }
}

std::vector<PeriodStatus> Leaderboards::periods(const std::string& board) {
  const BoardConfig& c = board_entry(config_, board);
  const hot::BoardKeys keys(config_.redis.key_prefix, board);
  const Instant now = clock_.now();
  const std::vector<hot::LivePeriod> registry = hot::live_periods(redis_, keys);
  std::vector<PeriodStatus> out;
  for (const PeriodSpec& spec : c.periods) {
    PeriodStatus s;
    s.period = spec.name;
    try {
      s.current = period_containing(spec, *c.zone, now);
      const PeriodRef ref{&c, &spec, board, s.current};
      // Cold rows of members that are hot again are stale: counted once, as hot.
      s.current_members = count(ref);
      s.hot_members = hot_.size(redis_, period_keys(ref).live);
      s.cold_members = std::max<std::int64_t>(0, s.current_members - s.hot_members);
    } catch (const RefusedError&) {
      // alltime before 2020 or a cron that never fires: no current period.
    }
    for (const hot::LivePeriod& live : registry) {
      if (live.period != spec.name) continue;
      ++s.live;
      if (live.end + c.grace <= now) ++s.due;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace bk::service
