// The update path's first steps: validate each update and find its periods (plan), group
// the valid ones by board, and cut each group into script calls (batches) by member.
#include <functional>

#include "core/duration.h"
#include "core/profile.h"
#include "core/validate.h"
#include "service/updates.h"

namespace bk::service {

// The valid updates of one board (and one stream), in order, with their plans.
struct Updates::Group {
  std::string stream;  // of the updates with order tokens
  std::vector<std::size_t> indexes;
  std::vector<Planned> plans;
};

std::string Updates::describe(const Update& u) {
  return "board '" + u.board + "' member '" + u.member + "'";
}

std::optional<Updates::Refused> Updates::plan(const Update& u, Planned& out) const {
  if (auto problem = board_name_problem(u.board)) return Refused{Refusal::invalid_board, *problem};
  out.config = config_.board_for(u.board);
  if (out.config == nullptr) {
    return Refused{Refusal::unknown_board,
                   "no board entry in " + config_.path + " matches " + describe(u)};
  }
  if (auto refused = plan_fields(u)) return refused;
  const Instant now = clock_.now();
  out.at = u.at.value_or(now);
  if (out.at > now + out.config->max_clock_skew) {
    return Refused{Refusal::too_early, "event time " + format_rfc3339(out.at) + " for " +
                                           describe(u) + " is more than " + "max_clock_skew (" +
                                           format_duration(out.config->max_clock_skew) +
                                           ") ahead of now (" + format_rfc3339(now) + ")"};
  }
  return plan_targets(u, now, out);
}

// The update's own fields: member, event id, event time, profile, value.
std::optional<Updates::Refused> Updates::plan_fields(const Update& u) const {
  if (auto problem = member_problem(u.member)) {
    return Refused{Refusal::invalid_member, *problem + " (board '" + u.board + "')"};
  }
  if (!u.event_id.empty()) {  // empty: no id
    if (auto problem = event_id_problem(u.event_id)) {
      return Refused{Refusal::invalid_event_id, *problem + " (" + describe(u) + ")"};
    }
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
  if (u.value > kMaxUpdateValue || u.value < -kMaxUpdateValue) {
    return Refused{Refusal::invalid_value,
                   "value " + std::to_string(u.value) + " for " + describe(u) + " is beyond ±2^53"};
  }
  return std::nullopt;
}

// The period of each of the board's periods that contains the event time, open for writes.
std::optional<Updates::Refused> Updates::plan_targets(const Update& u, Instant now,
                                                      Planned& out) const {
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

// Step 1: validate and plan every update; refused ones get their result here, the others
// are grouped by board, keeping their order.
std::map<std::string, Updates::Group> Updates::plan_all(const std::vector<Update>& updates,
                                                        std::vector<UpdateResult>& results) const {
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

UpdateCalls Updates::prepare(const std::vector<Update>& updates, Detail detail,
                             std::vector<UpdateResult>& results) {
  auto groups = plan_all(updates, results);
  return make_batches(updates, groups, detail);
}

// Step 2: one HotBatch (script call) per chunk of a group. Chunks by member (hash), not by
// position: all events of one member go in the same call, which keeps them in order even
// when some wait for the cold tier.
UpdateCalls Updates::make_batches(const std::vector<Update>& updates,
                                  const std::map<std::string, Group>& groups, Detail detail) const {
  UpdateCalls out;
  const Instant now = clock_.now();
  for (const auto& [board, g] : groups) {
    const std::size_t nchunks = (g.indexes.size() + kEventsPerCall - 1) / kEventsPerCall;
    std::vector<std::vector<std::size_t>> chunks(nchunks);
    for (std::size_t n = 0; n < g.indexes.size(); ++n) {
      chunks[std::hash<std::string>{}(updates[g.indexes[n]].member) % nchunks].push_back(n);
    }
    const BoardConfig& config = *g.plans.front().config;
    hot::HotBatch call;  // everything of the board's calls but their slots and events
    call.board = board;
    call.policy = config.policy;
    call.dedupe_window = config.dedupe_window;
    if (config.league) call.league = hot::HotCall::League{config.league->start};
    call.now = now;
    call.stream = g.stream;
    call.want_points = detail != Detail::status;
    call.want_standings = detail == Detail::standings;  // a call of one event only
    call.acknowledged_below_ms = acknowledged_ms_(g.stream);
    for (const auto& chunk : chunks) {
      if (!chunk.empty()) add_batch(g, chunk, updates, call, out);
    }
  }
  return out;
}

namespace {

// The slot of `batch` for `t` (added when new); `specs` holds each slot's period spec.
std::size_t slot_for(hot::HotBatch& batch, std::vector<const PeriodSpec*>& specs,
                     const Updates::Planned& p, const Updates::Planned::Target& t,
                     const Updates::Layouts& layouts) {
  std::size_t slot = 0;
  while (slot < specs.size() &&
         (specs[slot] != t.spec || batch.slots[slot].period.id != t.period.id)) {
    ++slot;
  }
  if (slot == specs.size()) {
    specs.push_back(t.spec);
    batch.slots.push_back({t.spec->name, t.period, layouts.at(t.spec),
                           t.period.end + p.config->retention_for(*t.spec)});
  }
  return slot;
}

}  // namespace

// One script call: the chunk's updates as events (singles), coalesced into what is sent.
void Updates::add_batch(const Group& g, const std::vector<std::size_t>& chunk,
                        const std::vector<Update>& updates, hot::HotBatch batch,
                        UpdateCalls& out) const {
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
    for (const auto& t : p.targets) e.slots.push_back(slot_for(batch, slot_specs, p, t, layouts_));
    singles.push_back(std::move(e));
    idx.push_back(g.indexes[n]);
  }
  out.of.push_back(coalesce(batch, singles));
  out.batches.push_back(std::move(batch));
  out.singles.push_back(std::move(singles));
  out.indexes.push_back(std::move(idx));
}

}  // namespace bk::service
