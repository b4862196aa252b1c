// The update path's sending and reporting: each board's calls go to the hot tier, what the
// script said of each event becomes its update's result, and unapplied stream events hold
// their members.
#include "service/updates.h"

#include <spdlog/spdlog.h>

#include "redis/error.h"

namespace bk::service {

// A call sent again after look-ups in PostgreSQL (a sync, cold rows) or split: time has
// passed since its stream entries were read, and another consumer may have taken some of
// them over (after reclaim_idle) and applied them. So it goes checked: entries already
// marked in flight are duplicates, and a coalesced event with one of them is split (see
// update.lua). Without a stream there is nothing to check.
hot::HotBatch Updates::resent(hot::HotBatch batch) {
  if (!batch.stream.empty()) batch.check_inflight = true;
  return batch;
}

// Coalesced events the script split, to go again as their events one by one: per batch of
// `batches`, the batch of UpdateCalls it comes from.
struct Updates::Split {
  std::vector<hot::HotBatch> batches;
  std::vector<std::size_t> from;
};

Updates::Updates(const Config& config, Clock clock, const Layouts& layouts, HotUpdateTier& hot,
                 ColdUpdateTier* cold, Counters& counters, AcknowledgedMs acknowledged_ms,
                 WriteProfiles write_profiles)
    : config_(config),
      clock_(clock),
      layouts_(layouts),
      hot_(hot),
      cold_(cold),
      counters_(counters),
      acknowledged_ms_(std::move(acknowledged_ms)),
      write_profiles_(std::move(write_profiles)) {}

void Updates::register_board(const std::string& board) {
  // Before the first write of a board, so a crash can never leave live keys of a board
  // that tick does not know about. Not inside the script: this key has no hash tag.
  if (boards_registered_.count(board) != 0) return;
  hot_.register_board(board);
  boards_registered_.insert(board);
}

std::vector<UpdateResult> Updates::apply(const std::vector<Update>& updates, UpdateCalls& calls,
                                         std::vector<UpdateResult> results,
                                         const std::function<void()>& while_waiting) {
  for (const hot::HotBatch& batch : calls.batches) register_board(batch.board);
  if (calls.batches.empty() && while_waiting) while_waiting();
  if (!calls.batches.empty()) apply_calls(updates, calls, results, while_waiting);
  write_profiles_(updates, results);
  update_holds(updates, results);
  return results;
}

void Updates::apply_calls(const std::vector<Update>& updates, UpdateCalls& calls,
                          std::vector<UpdateResult>& results,
                          const std::function<void()>& while_waiting) {
  const HotResults sent = apply_with_rehydration(calls.batches, while_waiting);
  Split split = report_sent(updates, calls, sent, results);
  if (!split.batches.empty()) resend_split(updates, calls, sent, split, results);
}

// The results of every sent event but those the script split, which are collected instead.
Updates::Split Updates::report_sent(const std::vector<Update>& updates, const UpdateCalls& calls,
                                    const HotResults& sent,
                                    std::vector<UpdateResult>& results) const {
  Split split;
  for (std::size_t k = 0; k < calls.batches.size(); ++k) {
    hot::HotBatch again = resent(calls.batches[k].without_events());
    for (std::size_t n = 0; n < calls.batches[k].events.size(); ++n) {
      const hot::HotResult& r = sent[k][n];
      const std::vector<std::size_t>& parts = calls.of[k][n];
      if (r.outcome == hot::HotOutcome::split) {
        for (const std::size_t p : parts) again.events.push_back(calls.singles[k][p]);
        continue;
      }
      report_parts(calls.batches[k], calls.singles[k], parts, r, calls.indexes[k], updates,
                   results);
    }
    if (!again.events.empty()) {
      split.batches.push_back(std::move(again));
      split.from.push_back(k);
    }
  }
  return split;
}

// Coalesced events the script split go again as their events, one by one.
void Updates::resend_split(const std::vector<Update>& updates, const UpdateCalls& calls,
                           const HotResults& sent, Split& split,
                           std::vector<UpdateResult>& results) {
  const auto again = apply_with_rehydration(split.batches);
  for (std::size_t s = 0; s < split.batches.size(); ++s) {
    // The split events in the order they were sent: singles of batch split.from[s].
    std::size_t n = 0;
    const std::size_t k = split.from[s];
    for (std::size_t e = 0; e < calls.batches[k].events.size(); ++e) {
      if (sent[k][e].outcome != hot::HotOutcome::split) continue;
      for (const std::size_t p : calls.of[k][e]) {
        const std::size_t i = calls.indexes[k][p];
        report(split.batches[s], again[s][n], split.batches[s].events[n], updates[i], results[i]);
        ++n;
      }
    }
  }
}

// The results of the updates a sent event stands for: one by one, each increment's points
// are the final points less the increments after it; a rehydration belongs to the first.
void Updates::report_parts(const hot::HotBatch& batch, const std::vector<hot::HotEvent>& singles,
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

namespace {

void refuse(UpdateResult& out, Refusal refusal, std::string reason) {
  out.status = UpdateStatus::refused;
  out.refusal = refusal;
  out.reason = std::move(reason);
}

}  // namespace

// Step 3: what the script said of one event, as the update's result.
void Updates::report(const hot::HotBatch& batch, const hot::HotResult& r, const hot::HotEvent& e,
                     const Update& u, UpdateResult& out) const {
  switch (r.outcome) {
    case hot::HotOutcome::applied:
      if (!r.points.empty()) out.points.reserve(e.slots.size());
      for (std::size_t k = 0; k < e.slots.size() && !r.points.empty(); ++k) {
        const hot::PeriodSlot& s = batch.slots[e.slots[k]];
        out.points.push_back({s.period_name, s.period.id, r.points.at(k)});
      }
      report_standings(batch, r, out);
      break;
    case hot::HotOutcome::duplicate:
      report_standings(batch, r, out);
      out.status = UpdateStatus::duplicate;
      out.reason = u.event_id.empty()
                       ? "stream entry " + u.order_token + " was already applied to " + describe(u)
                       : "event id '" + u.event_id + "' was already applied to " + describe(u);
      break;
    case hot::HotOutcome::banned:
      refuse(out, Refusal::banned,
             "member '" + u.member + "' is banned from board '" + u.board + "'");
      break;
    case hot::HotOutcome::closed:
      refuse(out, Refusal::closed,
             "period " + r.period + " of board '" + u.board + "' is closed (frozen for archive)");
      break;
    case hot::HotOutcome::out_of_range:
      refuse(out, Refusal::out_of_range,
             "update of " + describe(u) + " by " + std::to_string(u.value) +
                 " would make its points " + std::to_string(r.refused_points) + " in " + r.period +
                 ", outside [" + std::to_string(batch.slots[0].layout.min_points) + ", " +
                 std::to_string(batch.slots[0].layout.max_points) + "]");
      break;
    case hot::HotOutcome::expired:
      refuse(out, Refusal::expired,
             "period " + r.period + " of board '" + u.board +
                 "' would expire in Redis at once: its end + retention is already past on "
                 "the Redis server's clock (replaying old events? use a longer retention)");
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
      report_cold(u, out);
      break;
  }
}

// What the script read of the member's standing in each slot (HotCall::want_standings).
void Updates::report_standings(const hot::HotBatch& batch, const hot::HotResult& r,
                               UpdateResult& out) {
  for (std::size_t k = 0; k < r.standings.size() && k < batch.slots.size(); ++k) {
    out.standings.push_back({batch.slots[k].period_name, batch.slots[k].period.id, r.standings[k]});
  }
}

// An event that still needs the cold tier: writing without the cold row would lose the
// member's cold points.
void Updates::report_cold(const Update& u, UpdateResult& out) const {
  if (!cold_failure_.empty()) {
    out.status = UpdateStatus::unavailable;
    out.reason = "not applied: " + describe(u) +
                 " needs its cold row and PostgreSQL is unreachable: " + cold_failure_;
    return;
  }
  refuse(out, Refusal::cold_tier,
         cold_ == nullptr ? describe(u) + " may be in the cold tier (the period was spilled), " +
                                "and no PostgreSQL connection is attached"
                          : "could not rehydrate " + describe(u) +
                                " while spills kept moving members; try again");
}

// An update with an order token that could not be applied for want of PostgreSQL, or
// because the board's keys refused it (failed), holds its member (the earliest token of a
// member wins); a refused one releases the hold it may own (one refused before it reached
// the update script could not release it there).
void Updates::update_holds(const std::vector<Update>& updates,
                           const std::vector<UpdateResult>& results) {
  std::map<std::string, hot::BoardScripts::Holds> hold, release;
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
      hot_.release_holds(board, holds);
    } catch (const redis::ReplyError& e) {
      // A lasting error: the board's held HASH is a broken key. The update script reads it,
      // so the board's other updates fail and wait; a stale hold clears with its event.
      spdlog::debug("could not release holds of board '{}': {}", board, e.what());
    }
  }
}

void Updates::hold(const std::vector<Update>& updates) {
  std::map<std::string, hot::BoardScripts::Holds> holds;
  for (const Update& u : updates) {
    if (!u.order_token.empty()) holds[u.board].emplace_back(u.member, u.order_token);
  }
  hold_all(holds);
}

void Updates::hold_all(const std::map<std::string, hot::BoardScripts::Holds>& hold) {
  for (const auto& [board, holds] : hold) {
    try {
      hot_.hold(board, holds);
    } catch (const redis::ReplyError& e) {
      // A lasting error: the board's held HASH is itself a broken key. Its updates failed
      // anyway (the update script reads it), and the caller keeps them pending in order.
      spdlog::debug("could not hold members of board '{}': {}", board, e.what());
    }
  }
}

}  // namespace bk::service
