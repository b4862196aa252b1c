// Update planning (validation, period resolution, clock checks) and batching per board; the
// reads and profiles are forwarded to their units (leaderboards_reads.cpp).
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

namespace bk::service {
namespace {

// A call sent again after look-ups in PostgreSQL (a sync, cold rows) or split: time has
// passed since its stream entries were read, and another consumer may have taken some of
// them over (after reclaim_idle) and applied them. So it goes checked: entries already
// marked in flight are duplicates, and a coalesced event with one of them is split (see
// update.lua). Without a stream there is nothing to check.
hot::HotBatch resent(hot::HotBatch batch) {
  if (!batch.stream.empty()) batch.check_inflight = true;
  return batch;
}

// Chunk size of one script call: large enough to amortise the round trip, small enough
// that one call never blocks Redis for long.
constexpr std::size_t kEventsPerCall = 1000;
constexpr std::int64_t kMaxValue = kMaxExactInteger - 1;

std::string describe(const Update& u) {
  return "board '" + u.board + "' member '" + u.member + "'";
}

}  // namespace

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

struct Leaderboards::Planned {
  const BoardConfig* config = nullptr;
  Instant at;
  struct Target {
    const PeriodSpec* spec;
    Period period;
  };
  std::vector<Target> targets;
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
  reads_ = make_reads();
}

Leaderboards::Leaderboards(const Config& config, redis::Connection& redis, Clock clock,
                           std::function<cold::ColdStore&()> cold)
    : Leaderboards(config, redis, clock, nullptr) {
  cold_provider_ = std::move(cold);
  hot_ = hot::HotBoard(config.redis.key_prefix, cold_provider_ != nullptr);
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

std::optional<Leaderboards::Refused> Leaderboards::plan(const Update& u, Planned& out) const {
  if (auto problem = board_name_problem(u.board)) return Refused{Refusal::invalid_board, *problem};
  out.config = config_.board_for(u.board);
  if (out.config == nullptr) {
    return Refused{Refusal::unknown_board,
                   "no board entry in " + config_.path + " matches " + describe(u)};
  }
  if (auto problem = member_problem(u.member)) {
    return Refused{Refusal::invalid_member, *problem + " (board '" + u.board + "')"};
  }
  if (u.event_id.size() > kMaxEventIdBytes) {
    return Refused{Refusal::invalid_event_id,
                   "event id is " + std::to_string(u.event_id.size()) + " bytes, more than " +
                       std::to_string(kMaxEventIdBytes) + " (" + describe(u) + ")"};
  }
  if (u.at && (*u.at < kEarliestEventTime || *u.at > kLatestEventTime)) {
    return Refused{Refusal::invalid_time, "event time " + std::to_string(to_epoch_ms(*u.at)) +
                                              " ms since 1970 is outside 1970-01-01T00:00:00Z .. "
                                              "9999-12-31T23:59:59.999Z (" +
                                              describe(u) + ")"};
  }
  if (u.name) {
    if (auto problem = display_name_problem(*u.name)) {
      return Refused{Refusal::invalid_profile, *problem + " (" + describe(u) + ")"};
    }
  }
  if (u.meta) {
    std::string compact;
    if (auto problem = metadata_problem(*u.meta, compact)) {
      return Refused{Refusal::invalid_profile, *problem + " (" + describe(u) + ")"};
    }
  }
  if (u.value > kMaxValue || u.value < -kMaxValue) {
    return Refused{Refusal::invalid_value,
                   "value " + std::to_string(u.value) + " for " + describe(u) + " is beyond ±2^53"};
  }
  const Instant now = clock_.now();
  out.at = u.at.value_or(now);
  if (out.at > now + out.config->max_clock_skew) {
    return Refused{Refusal::too_early, "event time " + format_rfc3339(out.at) + " for " +
                                           describe(u) + " is more than " + "max_clock_skew (" +
                                           format_duration(out.config->max_clock_skew) +
                                           ") ahead of now (" + format_rfc3339(now) + ")"};
  }
  out.targets.reserve(out.config->periods.size());
  for (const PeriodSpec& spec : out.config->periods) {
    try {
      auto finder = finders_.find(&spec);
      if (finder == finders_.end()) {
        finder = finders_.emplace(&spec, PeriodFinder(spec, *out.config->zone)).first;
      }
      Period p = finder->second.containing(out.at);
      if (p.end + out.config->grace <= now) {
        return Refused{Refusal::closed, "period " + spec.name + ":" + p.id + " of board '" +
                                            u.board + "' is closed for writes since " +
                                            format_rfc3339(p.end + out.config->grace) +
                                            " (end + archive.grace); event time " +
                                            format_rfc3339(out.at) + " is too late"};
      }
      out.targets.push_back({&spec, std::move(p)});
    } catch (const RefusedError& e) {
      return Refused{Refusal::no_period, std::string(e.what()) + " (" + describe(u) + ")"};
    }
  }
  return std::nullopt;
}

void Leaderboards::register_board(const std::string& board) {
  // Before the first write of a board, so a crash can never leave live keys of a board
  // that tick does not know about. Not inside the script: this key has no hash tag.
  if (boards_registered_.count(board) != 0) return;
  hot::add_board(redis_, config_.redis.key_prefix, board);
  boards_registered_.insert(board);
}

// The valid updates of one board (and one stream), in order, with their plans.
struct Leaderboards::Group {
  std::string stream;  // of the updates with order tokens
  std::vector<std::size_t> indexes;
  std::vector<Planned> plans;
};

// The script calls of one apply(): per batch, every update's own event ("singles", in
// order) and what is sent, where one member's events may be coalesced into one.
struct Leaderboards::Batches {
  std::vector<hot::HotBatch> batches;                     // as sent
  std::vector<std::vector<hot::HotEvent>> singles;        // per batch: one per update
  std::vector<std::vector<std::size_t>> indexes;          // per batch: the update of each single
  std::vector<std::vector<std::vector<std::size_t>>> of;  // per batch, per sent event: its singles
};

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
  auto groups = plan_all(updates, p.results_);
  p.batches_ = std::make_unique<Batches>(make_batches(updates, groups, detail == Detail::points));
  return p;
}

std::vector<UpdateResult> Leaderboards::apply(Prepared&& prepared,
                                              const std::function<void()>& while_waiting) {
  if (!prepared.batches_)
    throw Error("internal: apply() of a Prepared that prepare() did not make");
  const std::vector<Update>& updates = *prepared.updates_;
  std::vector<UpdateResult> results = std::move(prepared.results_);
  Batches& b = *prepared.batches_;
  for (const hot::HotBatch& batch : b.batches) register_board(batch.board);
  if (b.batches.empty() && while_waiting) while_waiting();
  if (!b.batches.empty()) {
    const auto hot_results = apply_with_rehydration(b.batches, while_waiting);
    // Coalesced events the script split go again as their events, one by one.
    std::vector<hot::HotBatch> split;
    std::vector<std::size_t> split_from;  // the batch each split batch comes from
    for (std::size_t k = 0; k < b.batches.size(); ++k) {
      hot::HotBatch again = resent(b.batches[k].without_events());
      for (std::size_t n = 0; n < b.batches[k].events.size(); ++n) {
        const hot::HotResult& r = hot_results[k][n];
        const std::vector<std::size_t>& parts = b.of[k][n];
        if (r.outcome == hot::HotOutcome::split) {
          for (const std::size_t p : parts) again.events.push_back(b.singles[k][p]);
          continue;
        }
        report_parts(b.batches[k], b.singles[k], parts, r, b.indexes[k], updates, results);
      }
      if (!again.events.empty()) {
        split.push_back(std::move(again));
        split_from.push_back(k);
      }
    }
    if (!split.empty()) {
      const auto again = apply_with_rehydration(split);
      for (std::size_t s = 0; s < split.size(); ++s) {
        // The split events in the order they were sent: singles of batch split_from[s].
        std::size_t n = 0;
        const std::size_t k = split_from[s];
        for (std::size_t e = 0; e < b.batches[k].events.size(); ++e) {
          if (hot_results[k][e].outcome != hot::HotOutcome::split) continue;
          for (const std::size_t p : b.of[k][e]) {
            const std::size_t i = b.indexes[k][p];
            report(split[s], again[s][n], split[s].events[n], updates[i], results[i]);
            ++n;
          }
        }
      }
    }
  }
  write_profiles(updates, results);
  update_holds(updates, results);
  return results;
}

// The results of the updates a sent event stands for: one by one, each increment's points
// are the final points less the increments after it; a rehydration belongs to the first.
void Leaderboards::report_parts(const hot::HotBatch& batch,
                                const std::vector<hot::HotEvent>& singles,
                                const std::vector<std::size_t>& parts, const hot::HotResult& r,
                                const std::vector<std::size_t>& indexes,
                                const std::vector<Update>& updates,
                                std::vector<UpdateResult>& results) const {
  if (parts.size() == 1 || r.outcome != hot::HotOutcome::applied) {
    for (const std::size_t p : parts) {
      const std::size_t i = indexes[p];
      report(batch, r, singles[p], updates[i], results[i]);
    }
    return;
  }
  std::int64_t after = 0;  // the increments after part k
  for (std::size_t k = parts.size(); k-- > 0;) {
    const std::size_t p = parts[k];
    hot::HotResult own = r;
    for (auto& points : own.points) points -= after;
    if (k > 0) own.rehydrated.assign(own.rehydrated.size(), false);
    const std::size_t i = indexes[p];
    report(batch, own, singles[p], updates[i], results[i]);
    after += singles[p].value;
  }
}

// Step 1: validate and plan every update; refused ones get their result here, the others
// are grouped by board, keeping their order.
std::map<std::string, Leaderboards::Group> Leaderboards::plan_all(
    const std::vector<Update>& updates, std::vector<UpdateResult>& results) const {
  std::map<std::string, Group> groups;
  for (std::size_t i = 0; i < updates.size(); ++i) {
    Planned p;
    if (auto refused = plan(updates[i], p)) {
      results[i].status = UpdateStatus::refused;
      results[i].refusal = refused->refusal;
      results[i].reason = std::move(refused->reason);
      continue;
    }
    Group& g = groups[updates[i].board];
    if (!updates[i].order_token.empty()) {
      if (g.stream.empty()) g.stream = updates[i].stream;
      if (updates[i].stream != g.stream) {
        throw Error("internal: one apply() mixes entries of streams '" + g.stream + "' and '" +
                    updates[i].stream + "'");
      }
    }
    g.indexes.push_back(i);
    g.plans.push_back(std::move(p));
  }
  return groups;
}

// Step 2: one HotBatch (script call) per chunk of a group. Chunks by member (hash), not by
// position: all events of one member go in the same call, which keeps them in order even
// when some wait for the cold tier.
Leaderboards::Batches Leaderboards::make_batches(const std::vector<Update>& updates,
                                                 std::map<std::string, Group>& groups,
                                                 bool want_points) {
  Batches out;
  const Instant now = clock_.now();
  for (auto& [board, g] : groups) {
    const std::string& stream = g.stream;
    const std::size_t nchunks = (g.indexes.size() + kEventsPerCall - 1) / kEventsPerCall;
    std::vector<std::vector<std::size_t>> chunks(nchunks);
    for (std::size_t n = 0; n < g.indexes.size(); ++n) {
      chunks[std::hash<std::string>{}(updates[g.indexes[n]].member) % nchunks].push_back(n);
    }
    const BoardConfig& config = *g.plans.front().config;
    const auto acked = acknowledged_below_.find(stream);
    for (const auto& chunk : chunks) {
      if (chunk.empty()) continue;
      hot::HotBatch batch;
      batch.board = board;
      batch.policy = config.policy;
      batch.dedupe_window = config.dedupe_window;
      batch.now = now;
      batch.stream = stream;
      batch.want_points = want_points;
      batch.acknowledged_below_ms =
          acked == acknowledged_below_.end() || acked->second.generation != redis_.generation()
              ? 0
              : acked->second.ms;
      std::vector<const PeriodSpec*> slot_specs;  // of each slot of the batch (a handful)
      std::vector<std::size_t> idx;
      std::vector<hot::HotEvent> singles;
      idx.reserve(chunk.size());
      singles.reserve(chunk.size());
      for (const std::size_t n : chunk) {
        const Planned& p = g.plans[n];
        const Update& u = updates[g.indexes[n]];
        batch.check_inflight = batch.check_inflight || u.redelivered;
        // No cold values: nothing is known of the cold tier yet (see HotEvent::cold).
        hot::HotEvent e{u.member, u.value, p.at, u.event_id, {}, {}, u.order_token};
        e.slots.reserve(p.targets.size());
        for (const auto& t : p.targets) {
          std::size_t slot = 0;
          while (slot < slot_specs.size() &&
                 (slot_specs[slot] != t.spec || batch.slots[slot].period.id != t.period.id)) {
            ++slot;
          }
          if (slot == slot_specs.size()) {
            slot_specs.push_back(t.spec);
            batch.slots.push_back({t.spec->name, t.period, layout(*t.spec),
                                   t.period.end + p.config->retention_for(*t.spec)});
          }
          e.slots.push_back(slot);
        }
        singles.push_back(std::move(e));
        idx.push_back(g.indexes[n]);
      }
      out.of.push_back(coalesce(batch, singles));
      out.batches.push_back(std::move(batch));
      out.singles.push_back(std::move(singles));
      out.indexes.push_back(std::move(idx));
    }
  }
  return out;
}

// Coalescing: one member's events of a call become one event where applying it is exactly
// what applying them one by one gives. Never for events with ids (each id must be looked up
// and remembered), nor for entries read again from a pending list (each is looked up in
// flight), nor across events that go to other periods; a later event of the member never
// joins an earlier one over another event of the member.
// - increment: all of one sign, the first in range. Every partial sum then lies between two
//   points in range (the current points, or a new member's first value, and the sum), so
//   the range check of the sum covers them all; when the sum leaves the range the script
//   splits the event (as for a held member). The time is that of the last event that
//   changed the points (the first's when none did: it sets a new member's time). Each
//   event's points are the sum's less the increments after it.
// - best and replace, only when the caller does not want points back (each event's points
//   would depend on the current ones): all values in range (so none is refused). best sends
//   the best value with the time of the first event that reached it (a later equal value is
//   not better). replace sends the last value with the time of the start of the trailing run
//   of equal values, and "forced" when that run does not start with the first event (the
//   value changed within the group, so the time moves even if the final value is the
//   current one).
// Returns, per event of `batch` (filled here), the singles it stands for.
std::vector<std::vector<std::size_t>> Leaderboards::coalesce(
    hot::HotBatch& batch, const std::vector<hot::HotEvent>& singles) const {
  std::vector<std::vector<std::size_t>> of;
  std::vector<bool> forced;
  batch.events.clear();
  const Policy policy = batch.policy;
  const bool may = !batch.check_inflight && (policy == Policy::increment || !batch.want_points);
  const ScoreLayout& l = batch.slots.front().layout;
  const auto in_range = [&](std::int64_t v) { return v >= l.min_points && v <= l.max_points; };
  const auto better = [&](std::int64_t a, std::int64_t b) {
    return l.order == Order::desc ? a > b : a < b;
  };
  std::unordered_map<std::string_view, std::size_t> event_of;  // member -> its coalesced event
  batch.events.reserve(singles.size());
  of.reserve(singles.size());
  forced.reserve(singles.size());
  event_of.reserve(singles.size());
  for (std::size_t p = 0; p < singles.size(); ++p) {
    const hot::HotEvent& e = singles[p];
    const bool joinable = may && e.event_id.empty();
    const auto it = event_of.find(e.member);
    if (it != event_of.end()) {
      hot::HotEvent& into = batch.events[it->second];
      bool joins =
          joinable && into.slots == e.slots && into.order_token.empty() == e.order_token.empty();
      if (policy == Policy::increment) {
        joins = joins && ((into.value >= 0 && e.value >= 0) || (into.value <= 0 && e.value <= 0)) &&
                std::abs(into.value) <= kMaxValue - std::abs(e.value);
      } else {
        joins = joins && in_range(e.value);
      }
      if (joins) {
        if (policy == Policy::increment) {
          into.value += e.value;
          if (e.value != 0) into.at = e.at;
        } else if (policy == Policy::best) {
          if (better(e.value, into.value)) {
            into.value = e.value;
            into.at = e.at;
          }
        } else if (e.value != into.value) {  // replace: a new trailing run starts here
          into.value = e.value;
          into.at = e.at;
          forced[it->second] = true;
        }
        of[it->second].push_back(p);
        continue;
      }
      // Whatever this event is, the member's later events must not join an earlier one.
      event_of.erase(it);
    }
    if (joinable && in_range(e.value)) event_of.emplace(e.member, batch.events.size());
    batch.events.push_back(e);
    of.push_back({p});
    forced.push_back(false);
  }
  // A coalesced event's order token: the separator (and "!" when forced), then its events'.
  for (std::size_t n = 0; n < batch.events.size(); ++n) {
    if (of[n].size() < 2) continue;
    std::string token(1, hot::protocol::kTokenSeparator);
    if (forced[n]) {
      token += hot::protocol::kForced;
      token += hot::protocol::kTokenSeparator;
    }
    for (const std::size_t p : of[n]) {
      if (singles[p].order_token.empty()) continue;
      if (token.size() > 1 && token.back() != hot::protocol::kTokenSeparator) {
        token += hot::protocol::kTokenSeparator;
      }
      token += singles[p].order_token;
    }
    batch.events[n].order_token = std::move(token);
  }
  return of;
}

// Step 3: what the script said of one event, as the update's result.
void Leaderboards::report(const hot::HotBatch& batch, const hot::HotResult& r,
                          const hot::HotEvent& e, const Update& u, UpdateResult& out) const {
  switch (r.outcome) {
    case hot::HotOutcome::applied:
      if (!r.points.empty()) out.points.reserve(e.slots.size());
      for (std::size_t k = 0; k < e.slots.size() && !r.points.empty(); ++k) {
        const hot::PeriodSlot& s = batch.slots[e.slots[k]];
        out.points.push_back({s.period_name, s.period.id, r.points.at(k)});
      }
      break;
    case hot::HotOutcome::duplicate:
      out.status = UpdateStatus::duplicate;
      out.reason = u.event_id.empty()
                       ? "stream entry " + u.order_token + " was already applied to " + describe(u)
                       : "event id '" + u.event_id + "' was already applied to " + describe(u);
      break;
    case hot::HotOutcome::closed:
      out.status = UpdateStatus::refused;
      out.refusal = Refusal::closed;
      out.reason =
          "period " + r.period + " of board '" + u.board + "' is closed (frozen for archive)";
      break;
    case hot::HotOutcome::out_of_range:
      out.status = UpdateStatus::refused;
      out.refusal = Refusal::out_of_range;
      out.reason = "update of " + describe(u) + " by " + std::to_string(u.value) +
                   " would make its points " + std::to_string(r.refused_points) + " in " +
                   r.period + ", outside [" + std::to_string(batch.slots[0].layout.min_points) +
                   ", " + std::to_string(batch.slots[0].layout.max_points) + "]";
      break;
    case hot::HotOutcome::expired:
      out.status = UpdateStatus::refused;
      out.refusal = Refusal::expired;
      out.reason = "period " + r.period + " of board '" + u.board +
                   "' would expire in Redis at once: its end + retention is already past on "
                   "the Redis server's clock (replaying old events? use a longer retention)";
      break;
    case hot::HotOutcome::waiting:
      out.status = UpdateStatus::waiting;
      out.reason = "not applied yet: an earlier event of " + describe(u) +
                   " waits for the cold tier (PostgreSQL); this one follows it";
      break;
    case hot::HotOutcome::failed:
      out.status = UpdateStatus::failed;
      // Not the member: the same for every event of the board (logged once per change).
      out.reason = "not applied: Redis refused the update of board '" + u.board + "': " + r.error;
      break;
    case hot::HotOutcome::split:  // sent again one by one: never reported
      throw Error("internal: a split event was reported");
    case hot::HotOutcome::needs_sync:
    case hot::HotOutcome::needs_cold:
    case hot::HotOutcome::blocked:
      // Writing without the cold row would lose the member's cold points.
      out.status = UpdateStatus::refused;
      if (!cold_failure_.empty()) {
        out.status = UpdateStatus::unavailable;
        out.reason = "not applied: " + describe(u) +
                     " needs its cold row and PostgreSQL is unreachable: " + cold_failure_;
        break;
      }
      out.refusal = Refusal::cold_tier;
      out.reason = !has_cold()
                       ? describe(u) + " may be in the cold tier (the period was spilled), " +
                             "and no PostgreSQL connection is attached"
                       : "could not rehydrate " + describe(u) +
                             " while spills kept moving members; try again";
      break;
  }
}

// An update with an order token that could not be applied for want of PostgreSQL, or
// because the board's keys refused it (failed), holds its member (the earliest token of a
// member wins); a refused one releases the hold it may own (one refused before it reached
// the update script could not release it there).
void Leaderboards::update_holds(const std::vector<Update>& updates,
                                const std::vector<UpdateResult>& results) {
  std::map<std::string, hot::HotBoard::Holds> hold, release;
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const Update& u = updates[i];
    if (u.order_token.empty()) continue;
    if (results[i].status == UpdateStatus::unavailable ||
        results[i].status == UpdateStatus::failed) {
      hold[u.board].emplace_back(u.member, u.order_token);
    } else if (results[i].status == UpdateStatus::refused &&
               results[i].refusal != Refusal::invalid_board &&
               results[i].refusal != Refusal::unknown_board) {
      // Conditional on the token, so releasing one the script released already is harmless.
      release[u.board].emplace_back(u.member, u.order_token);
    }
  }
  hold_all(hold);
  for (const auto& [board, holds] : release) {
    try {
      hot_.release_holds(redis_, hot::BoardKeys(config_.redis.key_prefix, board), holds);
    } catch (const redis::ReplyError& e) {
      // A lasting error: the board's held HASH is a broken key. The update script reads it,
      // so the board's other updates fail and wait; a stale hold clears with its event.
      spdlog::debug("could not release holds of board '{}': {}", board, e.what());
    }
  }
}

void Leaderboards::hold(const std::vector<Update>& updates) {
  std::map<std::string, hot::HotBoard::Holds> holds;
  for (const Update& u : updates) {
    if (!u.order_token.empty()) holds[u.board].emplace_back(u.member, u.order_token);
  }
  hold_all(holds);
}

void Leaderboards::hold_all(const std::map<std::string, hot::HotBoard::Holds>& hold) {
  for (const auto& [board, holds] : hold) {
    try {
      hot_.hold(redis_, hot::BoardKeys(config_.redis.key_prefix, board), holds);
    } catch (const redis::ReplyError& e) {
      // A lasting error: the board's held HASH is itself a broken key. Its updates failed
      // anyway (the update script reads it), and the caller keeps them pending in order.
      spdlog::debug("could not hold members of board '{}': {}", board, e.what());
    }
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

// Batches that met a board without its sync marker wrote nothing: sync those boards from
// the cold tier (one query each), then apply them again.
void Leaderboards::sync_where_needed(const std::vector<hot::HotBatch>& batches,
                                     std::vector<std::vector<hot::HotResult>>& results) {
  constexpr int kMaxRounds = 3;  // a marker deleted again meanwhile: try once or twice more
  for (int round = 0; round < kMaxRounds; ++round) {
    std::vector<std::size_t> again;
    std::set<std::string> boards;
    for (std::size_t b = 0; b < results.size(); ++b) {
      if (!results[b].empty() && results[b].front().outcome == hot::HotOutcome::needs_sync) {
        again.push_back(b);
        boards.insert(batches[b].board);
      }
    }
    if (again.empty()) return;
    try {
      for (const std::string& board : boards) {
        const auto with_rows = cold_store().periods_with_rows(board);
        // Redis may have lost <prefix>:boards too: register the board again before the
        // batch is written again, so tick finds it.
        boards_registered_.erase(board);
        register_board(board);
        counters_.recovered += sync_board(config_, redis_, hot_, board, with_rows);
        ++counters_.synced;
      }
    } catch (const cold::PostgresUnavailable& e) {  // a Redis failure goes up to the caller
      cold_failure_ = e.what();
      ++counters_.cold_errors;
      return;
    }
    std::vector<hot::HotBatch> subset;
    subset.reserve(again.size());
    for (const std::size_t b : again) subset.push_back(resent(batches[b]));
    auto redone = hot_.apply(redis_, subset);
    for (std::size_t i = 0; i < again.size(); ++i) results[again[i]] = std::move(redone[i]);
  }
}

std::vector<std::vector<hot::HotResult>> Leaderboards::apply_with_rehydration(
    std::vector<hot::HotBatch>& batches, const std::function<void()>& while_waiting) {
  auto results = hot_.apply(redis_, batches, while_waiting);
  cold_failure_.clear();
  if (!has_cold()) return results;
  sync_where_needed(batches, results);
  if (!cold_failure_.empty()) return results;
  // Events that met a spilled period where they are not hot ("needs cold") and the later
  // events of the same members ("blocked") go round again, in order, with their cold rows.
  constexpr int kMaxRounds = 20;
  // The cold rows found so far, per event and slot: kept across rounds (each carries the
  // spill generation it was read under, so an outdated one is simply asked for again).
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::optional<cold::ColdHit>>> found;
  for (int round = 0; round < kMaxRounds; ++round) {
    struct Pending {
      std::size_t batch;
      std::size_t event;
    };
    std::vector<Pending> pending;
    for (std::size_t b = 0; b < results.size(); ++b) {
      for (std::size_t n = 0; n < results[b].size(); ++n) {
        const auto o = results[b][n].outcome;
        if (o == hot::HotOutcome::needs_cold || o == hot::HotOutcome::blocked) {
          pending.push_back({b, n});
        }
      }
    }
    if (pending.empty()) break;
    if (round > 0) ++counters_.retries;

    // One look-up for every (event, slot) that needs its cold row.
    std::vector<cold::MemberKey> keys;
    for (const Pending& p : pending) {
      const hot::HotResult& r = results[p.batch][p.event];
      for (const std::size_t slot : r.cold_slots) {
        const hot::PeriodSlot& s = batches[p.batch].slots[slot];
        keys.push_back({{batches[p.batch].board, s.period_name, s.period.id},
                        batches[p.batch].events[p.event].member});
      }
    }
    std::vector<std::optional<cold::ColdHit>> hits;
    try {
      if (!keys.empty()) hits = cold_store().lookup(keys);
    } catch (const cold::PostgresUnavailable& e) {
      // Events already applied keep their results; the ones still waiting for the cold
      // tier are reported unavailable (not applied).
      cold_failure_ = e.what();
      ++counters_.cold_errors;
      break;
    }
    counters_.cold_lookups += static_cast<std::int64_t>(keys.size());

    // The retry batches: same slots, only the pending events, cold values filled in.
    std::vector<hot::HotBatch> retry;
    std::vector<std::vector<Pending>> origin;
    std::vector<std::vector<std::vector<std::optional<cold::ColdHit>>>> used_hits;
    std::map<std::size_t, std::size_t> retry_of;
    std::size_t next_hit = 0;
    for (const Pending& p : pending) {
      auto [it, inserted] = retry_of.try_emplace(p.batch, retry.size());
      if (inserted) {
        hot::HotBatch b = resent(batches[p.batch].without_events());
        // After two lost races, hold the period's spills while looking up again.
        b.hold = round >= 2;
        retry.push_back(std::move(b));
        origin.emplace_back();
        used_hits.emplace_back();
      }
      hot::HotEvent& e = batches[p.batch].events[p.event];
      e.cold.resize(e.slots.size());
      auto& event_hits = found[{p.batch, p.event}];
      event_hits.resize(e.slots.size());
      const hot::HotResult& r = results[p.batch][p.event];
      for (std::size_t c = 0; c < r.cold_slots.size(); ++c) {
        const auto pos = static_cast<std::size_t>(
            std::find(e.slots.begin(), e.slots.end(), r.cold_slots[c]) - e.slots.begin());
        const auto& hit = hits.at(next_hit++);
        hot::ColdValue& v = e.cold.at(pos);
        v.gen = r.cold_gens[c];
        if (hit) {
          v.state = hot::ColdValue::State::present;
          v.encoded = hit->encoded;
        } else {
          v.state = hot::ColdValue::State::absent;
        }
        event_hits[pos] = hit;
      }
      retry[it->second].events.push_back(e);
      origin[it->second].push_back(p);
      used_hits[it->second].push_back(event_hits);
    }

    const auto again = hot_.apply(redis_, retry);
    for (std::size_t rb = 0; rb < retry.size(); ++rb) {
      for (std::size_t n = 0; n < retry[rb].events.size(); ++n) {
        const hot::HotResult& r = again[rb][n];
        const Pending& p = origin[rb][n];
        results[p.batch][p.event] = r;
        if (r.outcome != hot::HotOutcome::applied) continue;
        const hot::HotEvent& e = retry[rb].events[n];
        for (std::size_t k = 0; k < e.slots.size(); ++k) {
          // The member is hot again with its cold points. Its cold row stays (the :stale set
          // hides it from reads; the next spill of the member or the archive supersedes it):
          // should Redis roll back past this moment, the points are still in PostgreSQL.
          if (k < r.rehydrated.size() && r.rehydrated[k] && used_hits[rb][n][k]) {
            ++counters_.rehydrated;
          }
        }
      }
    }
  }
  return results;
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

}  // namespace bk::service
