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
#include <cstdlib>
#include <string_view>

#include "hot/protocol.h"
#include "service/updates.h"

namespace bk::service {
namespace {

// The events of one call being coalesced: what is sent, and per sent event its singles and
// whether its time was forced.
class Coalescer {
 public:
  Coalescer(hot::HotBatch& batch, std::size_t singles)
      : batch_(batch),
        policy_(batch.policy),
        layout_(batch.slots.front().layout),
        may_(!batch.check_inflight && (policy_ == Policy::increment || !batch.want_points)) {
    batch_.events.clear();
    batch_.events.reserve(singles);
    of_.reserve(singles);
    forced_.reserve(singles);
    event_of_.reserve(singles);
  }

  void add(const hot::HotEvent& e, std::size_t p) {
    const bool joinable = may_ && e.event_id.empty();
    const auto it = event_of_.find(e.member);
    if (it != event_of_.end()) {
      if (joinable && joins(batch_.events[it->second], e)) {
        join(it->second, e);
        of_[it->second].push_back(p);
        return;
      }
      // Whatever this event is, the member's later events must not join an earlier one.
      event_of_.erase(it);
    }
    if (joinable && in_range(e.value)) event_of_.emplace(e.member, batch_.events.size());
    batch_.events.push_back(e);
    of_.push_back({p});
    forced_.push_back(false);
  }

  // A coalesced event's order token: the separator (and "!" when forced), then its events'.
  std::vector<std::vector<std::size_t>> finish(const std::vector<hot::HotEvent>& singles) {
    for (std::size_t n = 0; n < batch_.events.size(); ++n) {
      if (of_[n].size() < 2) continue;
      std::string token(1, hot::protocol::kTokenSeparator);
      if (forced_[n]) {
        token += hot::protocol::kForced;
        token += hot::protocol::kTokenSeparator;
      }
      for (const std::size_t p : of_[n]) {
        if (singles[p].order_token.empty()) continue;
        if (token.size() > 1 && token.back() != hot::protocol::kTokenSeparator) {
          token += hot::protocol::kTokenSeparator;
        }
        token += singles[p].order_token;
      }
      batch_.events[n].order_token = std::move(token);
    }
    return std::move(of_);
  }

 private:
  bool in_range(std::int64_t v) const { return v >= layout_.min_points && v <= layout_.max_points; }
  bool better(std::int64_t a, std::int64_t b) const {
    return layout_.order == Order::desc ? a > b : a < b;
  }

  bool joins(const hot::HotEvent& into, const hot::HotEvent& e) const {
    if (into.slots != e.slots || into.order_token.empty() != e.order_token.empty()) return false;
    if (policy_ != Policy::increment) return in_range(e.value);
    return ((into.value >= 0 && e.value >= 0) || (into.value <= 0 && e.value <= 0)) &&
           std::abs(into.value) <= kMaxUpdateValue - std::abs(e.value);
  }

  void join(std::size_t n, const hot::HotEvent& e) {
    hot::HotEvent& into = batch_.events[n];
    if (policy_ == Policy::increment) {
      into.value += e.value;
      if (e.value != 0) into.at = e.at;
    } else if (policy_ == Policy::best) {
      if (better(e.value, into.value)) {
        into.value = e.value;
        into.at = e.at;
      }
    } else if (e.value != into.value) {  // replace: a new trailing run starts here
      into.value = e.value;
      into.at = e.at;
      forced_[n] = true;
    }
  }

  hot::HotBatch& batch_;
  const Policy policy_;
  const ScoreLayout& layout_;
  const bool may_;
  std::vector<std::vector<std::size_t>> of_;
  std::vector<bool> forced_;
  std::unordered_map<std::string_view, std::size_t> event_of_;  // member -> its coalesced event
};

}  // namespace

std::vector<std::vector<std::size_t>> coalesce(hot::HotBatch& batch,
                                               const std::vector<hot::HotEvent>& singles) {
  Coalescer c(batch, singles.size());
  for (std::size_t p = 0; p < singles.size(); ++p) c.add(singles[p], p);
  return c.finish(singles);
}

}  // namespace bk::service
