// In-memory stand-ins for the update path's two tiers (service/update_tiers.h), for tests
// without servers. FakeHotTier plays the update script's decisions the update path relies
// on (hot points, needs_cold / blocked for spilled members, stale spill generations, holds,
// needs_sync, split of a coalesced event that leaves the range, failed boards); FakeColdTier
// holds cold rows and can be made unreachable. Cold values are plain points here.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cold/error.h"
#include "hot/protocol.h"
#include "service/update_tiers.h"

namespace bk::service::testing {

class FakeHotTier final : public HotUpdateTier {
 public:
  using PeriodOf = std::tuple<std::string, std::string, std::string>;  // board, period, id

  // State.
  std::map<PeriodOf, std::map<std::string, std::int64_t>> points;  // hot members' points
  std::map<PeriodOf, std::string> spilled;                         // spilled periods: their gen
  std::map<std::string, std::map<std::string, std::string>> held;  // board: member -> token
  std::set<std::string> unsynced;                                  // boards lacking the marker
  std::map<std::string, std::string> failing;                      // board -> Redis's error
  // What was asked.
  std::vector<hot::HotBatch> sent;  // every call, in order
  std::vector<std::string> registered, synced;
  std::vector<std::pair<std::string, hot::BoardScripts::Holds>> holds, releases;
  // Runs after each apply() (e.g. a spill that moves a generation on).
  std::function<void()> after_apply;

  std::vector<std::vector<hot::HotResult>> apply(
      const std::vector<hot::HotBatch>& batches,
      const std::function<void()>& while_waiting = {}) override {
    if (while_waiting) while_waiting();
    std::vector<std::vector<hot::HotResult>> out;
    for (const hot::HotBatch& b : batches) {
      sent.push_back(b);
      out.push_back(apply_batch(b));
    }
    if (after_apply) after_apply();
    return out;
  }

  void hold(const std::string& board, const hot::BoardScripts::Holds& hs) override {
    holds.emplace_back(board, hs);
    for (const auto& [member, token] : hs) held[board].emplace(member, token);  // earliest wins
  }
  void release_holds(const std::string& board, const hot::BoardScripts::Holds& hs) override {
    releases.emplace_back(board, hs);
    for (const auto& [member, token] : hs) release(board, member, token);
  }
  std::int64_t sync(const std::string& board,
                    const std::function<ColdBoardState()>& read_cold) override {
    const ColdBoardState state = read_cold();
    synced.push_back(board);
    unsynced.erase(board);
    for (const cold::PeriodKey& k : state.with_rows) {
      spilled.emplace(PeriodOf{k.board, k.period, k.period_id}, "g1");
    }
    return static_cast<std::int64_t>(state.with_rows.size());
  }
  void register_board(const std::string& board) override { registered.push_back(board); }

 private:
  void release(const std::string& board, const std::string& member, const std::string& token) {
    auto it = held[board].find(member);
    if (it != held[board].end() && it->second == token) held[board].erase(it);
  }

  static bool coalesced(const hot::HotEvent& e) {
    return !e.order_token.empty() && e.order_token[0] == hot::protocol::kTokenSeparator;
  }

  std::vector<hot::HotResult> apply_batch(const hot::HotBatch& b) {
    std::vector<hot::HotResult> out(b.events.size());
    if (failing.count(b.board) != 0) {
      for (auto& r : out) {
        r.outcome = hot::HotOutcome::failed;
        r.error = failing[b.board];
      }
      return out;
    }
    if (unsynced.count(b.board) != 0) {
      for (auto& r : out) r.outcome = hot::HotOutcome::needs_sync;
      return out;
    }
    std::set<std::string> blocked;  // members with an earlier event waiting for cold rows
    for (std::size_t n = 0; n < b.events.size(); ++n) {
      out[n] = apply_event(b, b.events[n], blocked);
    }
    return out;
  }

  hot::HotResult apply_event(const hot::HotBatch& b, const hot::HotEvent& e,
                             std::set<std::string>& blocked) {
    hot::HotResult r;
    if (blocked.count(e.member) != 0) {
      r.outcome = hot::HotOutcome::blocked;
      return r;
    }
    const auto h = held[b.board].find(e.member);
    if (h != held[b.board].end() && !coalesced(e) && h->second != e.order_token) {
      r.outcome = hot::HotOutcome::waiting;
      return r;
    }
    std::vector<std::int64_t> next(e.slots.size());
    r.rehydrated.assign(e.slots.size(), false);
    for (std::size_t k = 0; k < e.slots.size(); ++k) {
      const hot::PeriodSlot& s = b.slots[e.slots[k]];
      const PeriodOf key{b.board, s.period_name, s.period.id};
      auto& live = points[key];
      const auto cur = live.find(e.member);
      std::int64_t base = 0;
      if (cur != live.end()) {
        base = cur->second;
      } else if (const auto sp = spilled.find(key); sp != spilled.end()) {
        const hot::ColdValue v = k < e.cold.size() ? e.cold[k] : hot::ColdValue{};
        if (v.state == hot::ColdValue::State::unknown || v.gen != sp->second) {
          r.cold_slots.push_back(e.slots[k]);
          r.cold_gens.push_back(sp->second);
          continue;
        }
        if (v.state == hot::ColdValue::State::present) {
          base = v.encoded;
          r.rehydrated[k] = true;
        }
      }
      next[k] = b.policy == Policy::increment ? base + e.value : e.value;
      if (next[k] < s.layout.min_points || next[k] > s.layout.max_points) {
        r.outcome = coalesced(e) ? hot::HotOutcome::split : hot::HotOutcome::out_of_range;
        r.period = s.period_name + ":" + s.period.id;
        r.refused_points = next[k];
        return r;
      }
    }
    if (!r.cold_slots.empty()) {
      r.outcome = hot::HotOutcome::needs_cold;
      r.rehydrated.clear();
      blocked.insert(e.member);
      return r;
    }
    for (std::size_t k = 0; k < e.slots.size(); ++k) {
      const hot::PeriodSlot& s = b.slots[e.slots[k]];
      points[PeriodOf{b.board, s.period_name, s.period.id}][e.member] = next[k];
    }
    if (!e.order_token.empty() && !coalesced(e)) release(b.board, e.member, e.order_token);
    if (b.want_points) r.points = next;
    return r;
  }
};

class FakeColdTier final : public ColdUpdateTier {
 public:
  std::map<FakeHotTier::PeriodOf, std::map<std::string, std::int64_t>> rows;
  bool reachable = true;
  std::int64_t lookups = 0;  // calls of lookup()

  std::vector<std::optional<cold::ColdHit>> lookup(
      const std::vector<cold::MemberKey>& keys) override {
    ++lookups;
    if (!reachable) throw cold::PostgresUnavailable("connection refused (fake)");
    std::vector<std::optional<cold::ColdHit>> out;
    for (const cold::MemberKey& k : keys) {
      const auto period = rows.find({k.period.board, k.period.period, k.period.period_id});
      if (period == rows.end() || period->second.count(k.member) == 0) {
        out.emplace_back();
        continue;
      }
      cold::ColdHit hit;
      hit.member = k.member;
      hit.encoded = hit.points = period->second.at(k.member);
      out.emplace_back(hit);
    }
    return out;
  }
  std::vector<cold::PeriodKey> periods_with_rows(const std::string& board) override {
    if (!reachable) throw cold::PostgresUnavailable("connection refused (fake)");
    std::vector<cold::PeriodKey> out;
    for (const auto& [period, members] : rows) {
      if (std::get<0>(period) == board) {
        out.push_back({std::get<0>(period), std::get<1>(period), std::get<2>(period)});
      }
    }
    return out;
  }
  std::vector<std::string> banned_members(const std::string&) override {
    if (!reachable) throw cold::PostgresUnavailable("connection refused (fake)");
    return {};
  }
};

}  // namespace bk::service::testing
