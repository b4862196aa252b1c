// The update path's rounds with the cold tier: boards whose Redis data was lost are synced
// from PostgreSQL, and events of members that spilled go again with their cold rows.
#include <algorithm>

#include "cold/error.h"
#include "service/updates.h"

namespace bk::service {

// An event of the batches that waits for its cold rows.
struct Updates::Pending {
  std::size_t batch;
  std::size_t event;
};

// The retry batches of one round: same slots, only the pending events, cold values filled in;
// per retry event, the event it stands for and the cold rows it carries.
struct Updates::Retry {
  std::vector<hot::HotBatch> batches;
  std::vector<std::vector<Pending>> origin;
  std::vector<std::vector<ColdHits>> used_hits;
};

Updates::HotResults Updates::apply_with_rehydration(std::vector<hot::HotBatch>& batches,
                                                    const std::function<void()>& while_waiting) {
  auto results = hot_.apply(batches, while_waiting);
  cold_failure_.clear();
  if (cold_ == nullptr) return results;
  sync_where_needed(batches, results);
  if (!cold_failure_.empty()) return results;
  // Events that met a spilled period where they are not hot ("needs cold") and the later
  // events of the same members ("blocked") go round again, in order, with their cold rows.
  constexpr int kMaxRounds = 20;
  // The cold rows found so far, per event and slot: kept across rounds (each carries the
  // spill generation it was read under, so an outdated one is simply asked for again).
  Found found;
  for (int round = 0; round < kMaxRounds; ++round) {
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
    const std::optional<ColdHits> hits = look_up_cold(batches, results, pending);
    if (!hits) break;
    apply_retry(retry_batches(batches, results, pending, *hits, found, round), results);
  }
  return results;
}

// One look-up for every (event, slot) that needs its cold row; nullopt when the cold tier
// cannot be reached (the events still waiting for it are then reported unavailable; those
// already applied keep their results).
std::optional<Updates::ColdHits> Updates::look_up_cold(const std::vector<hot::HotBatch>& batches,
                                                       const HotResults& results,
                                                       const std::vector<Pending>& pending) {
  std::vector<cold::MemberKey> keys;
  for (const Pending& p : pending) {
    const hot::HotResult& r = results[p.batch][p.event];
    for (const std::size_t slot : r.cold_slots) {
      const hot::PeriodSlot& s = batches[p.batch].slots[slot];
      keys.push_back({{batches[p.batch].board, s.period_name, s.period.id},
                      batches[p.batch].events[p.event].member});
    }
  }
  ColdHits hits;
  try {
    if (!keys.empty()) hits = cold_->lookup(keys);
  } catch (const cold::PostgresUnavailable& e) {
    cold_failure_ = e.what();
    ++counters_.cold_errors;
    return std::nullopt;
  }
  counters_.cold_lookups += static_cast<std::int64_t>(keys.size());
  return hits;
}

namespace {

// Fills the cold values of `e` from the look-up's hits for result `r`'s cold slots (hits
// from `next` on); records them per slot in `event_hits`.
void fill_cold(hot::HotEvent& e, const hot::HotResult& r,
               const std::vector<std::optional<cold::ColdHit>>& hits, std::size_t& next,
               std::vector<std::optional<cold::ColdHit>>& event_hits) {
  e.cold.resize(e.slots.size());
  event_hits.resize(e.slots.size());
  for (std::size_t c = 0; c < r.cold_slots.size(); ++c) {
    const auto pos = static_cast<std::size_t>(
        std::find(e.slots.begin(), e.slots.end(), r.cold_slots[c]) - e.slots.begin());
    const auto& hit = hits.at(next++);
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
}

}  // namespace

Updates::Retry Updates::retry_batches(std::vector<hot::HotBatch>& batches,
                                      const HotResults& results,
                                      const std::vector<Pending>& pending, const ColdHits& hits,
                                      Found& found, int round) const {
  Retry retry;
  std::map<std::size_t, std::size_t> retry_of;
  std::size_t next_hit = 0;
  for (const Pending& p : pending) {
    auto [it, inserted] = retry_of.try_emplace(p.batch, retry.batches.size());
    if (inserted) {
      hot::HotBatch b = resent(batches[p.batch].without_events());
      // After two lost races, hold the period's spills while looking up again.
      b.hold = round >= 2;
      retry.batches.push_back(std::move(b));
      retry.origin.emplace_back();
      retry.used_hits.emplace_back();
    }
    hot::HotEvent& e = batches[p.batch].events[p.event];
    auto& event_hits = found[{p.batch, p.event}];
    fill_cold(e, results[p.batch][p.event], hits, next_hit, event_hits);
    retry.batches[it->second].events.push_back(e);
    retry.origin[it->second].push_back(p);
    retry.used_hits[it->second].push_back(event_hits);
  }
  return retry;
}

void Updates::apply_retry(const Retry& retry, HotResults& results) {
  const auto again = hot_.apply(retry.batches);
  for (std::size_t rb = 0; rb < retry.batches.size(); ++rb) {
    for (std::size_t n = 0; n < retry.batches[rb].events.size(); ++n) {
      const hot::HotResult& r = again[rb][n];
      const Pending& p = retry.origin[rb][n];
      results[p.batch][p.event] = r;
      if (r.outcome != hot::HotOutcome::applied) continue;
      const hot::HotEvent& e = retry.batches[rb].events[n];
      for (std::size_t k = 0; k < e.slots.size(); ++k) {
        // The member is hot again with its cold points. Its cold row stays (the :stale set
        // hides it from reads; the next spill of the member or the archive supersedes it):
        // should Redis roll back past this moment, the points are still in PostgreSQL.
        if (k < r.rehydrated.size() && r.rehydrated[k] && retry.used_hits[rb][n][k]) {
          ++counters_.rehydrated;
        }
      }
    }
  }
}

// Batches that met a board without its sync marker wrote nothing: sync those boards from
// the cold tier (one query each), then apply them again.
void Updates::sync_where_needed(const std::vector<hot::HotBatch>& batches, HotResults& results) {
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
    if (again.empty() || !sync_boards(boards)) return;
    std::vector<hot::HotBatch> subset;
    subset.reserve(again.size());
    for (const std::size_t b : again) subset.push_back(resent(batches[b]));
    auto redone = hot_.apply(subset);
    for (std::size_t i = 0; i < again.size(); ++i) results[again[i]] = std::move(redone[i]);
  }
}

// Syncs `boards` from the cold tier; false when it cannot be reached (a Redis failure goes
// up to the caller).
bool Updates::sync_boards(const std::set<std::string>& boards) {
  try {
    for (const std::string& board : boards) {
      // Redis may have lost <prefix>:boards too: register the board again before the
      // batch is written again, so tick finds it.
      boards_registered_.erase(board);
      register_board(board);
      counters_.recovered += hot_.sync(board, [&] {
        return ColdBoardState{cold_->periods_with_rows(board), cold_->banned_members(board)};
      });
      ++counters_.synced;
    }
  } catch (const cold::PostgresUnavailable& e) {
    cold_failure_ = e.what();
    ++counters_.cold_errors;
    return false;
  }
  return true;
}

}  // namespace bk::service
