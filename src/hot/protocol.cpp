// Marshalling of HotBatch into the update script's KEYS/ARGV, and parsing of its replies.
#include "hot/protocol.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "hot/stream.h"
#include "redis/error.h"

namespace bk::hot::protocol {
namespace {

// The milliseconds of a stream entry id at the end of one order token ("<qualifier>ms-seq");
// 0 when it holds none (a library caller's own token: its marker goes at the next prune).
std::int64_t entry_ms(std::string_view token) {
  const std::size_t colon = token.rfind(':');
  if (colon != std::string_view::npos) token.remove_prefix(colon + 1);
  const std::size_t dash = token.find('-');
  if (dash == 0 || dash == std::string_view::npos) return 0;
  std::int64_t ms = 0;
  for (std::size_t i = 0; i < dash; ++i) {
    const char c = token[i];
    if (c < '0' || c > '9' || ms > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return 0;
    ms = ms * 10 + (c - '0');
  }
  return ms;
}

// The stream entry id at the end of one order token ("<qualifier><ms>-<seq>", the qualifier
// ending with ':'); nullopt when it ends with none (a library caller's own token).
std::optional<StreamId> entry_id(std::string_view token) {
  const std::size_t colon = token.rfind(':');
  if (colon != std::string_view::npos) token.remove_prefix(colon + 1);
  return StreamId::parse(token);
}

char policy_code(Policy p) {
  switch (p) {
    case Policy::increment:
      return kIncrement;
    case Policy::best:
      return kBest;
    case Policy::replace:
      return kReplace;
  }
  return kIncrement;
}

char tie_code(TieBreak t) {
  switch (t) {
    case TieBreak::earliest:
      return kTieEarliest;
    case TieBreak::latest:
      return kTieLatest;
    case TieBreak::none:
      return kTieNone;
  }
  return kTieNone;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// The common event: every slot of the batch, in order, nothing known of the cold tier.
bool every_slot_unknown(const HotEvent& e, std::size_t nslots) {
  if (e.slots.size() != nslots) return false;
  for (std::size_t i = 0; i < e.slots.size(); ++i) {
    if (e.slots[i] != i) return false;
    if (i < e.cold.size() && e.cold[i].state != ColdValue::State::unknown) return false;
  }
  return true;
}

void push_slots(const HotEvent& e, redis::Args& a) {
  a.push_back(std::to_string(e.slots.size()));
  for (std::size_t i = 0; i < e.slots.size(); ++i) {
    a.push_back(std::to_string(e.slots[i] + 1));  // Lua is 1-based
    const ColdValue cold = i < e.cold.size() ? e.cold[i] : ColdValue{};
    switch (cold.state) {
      case ColdValue::State::unknown:
        a.emplace_back(kColdUnknown);
        break;
      case ColdValue::State::absent:
        a.push_back(kColdAbsent + cold.gen);
        break;
      case ColdValue::State::present:
        a.push_back(kColdPresent + cold.gen + ":" + std::to_string(cold.encoded));
        break;
    }
  }
}

}  // namespace

bool with_standings(const HotBatch& batch) {
  return batch.want_standings && batch.events.size() == 1;
}

IdBuckets id_buckets(Instant now, Millis window) {
  const std::int64_t width = std::max<std::int64_t>(1, window.count() / kBucketsPerWindow);
  const std::int64_t now_ms = to_epoch_ms(now);
  IdBuckets b;
  b.write = floor_div(now_ms, width);
  b.lookup.push_back(b.write);
  b.lookup.push_back(b.write + 1);
  for (std::int64_t k = 1; k <= kBucketsPerWindow; ++k) b.lookup.push_back(b.write - k);
  b.ttl = Millis{(b.write + 1) * width + window.count() - now_ms};
  return b;
}

namespace {

// What the events of a call carry, which decides how the call is spelled.
struct CallShape {
  bool any_id = false;
  bool any_token = false;
  // Every event has a token of one entry (no separator, so not coalesced): they travel
  // joined, as one argument (see kFieldJoinedTokens).
  bool join_tokens = true;
  std::int64_t marker_ms = 0;  // the call's in-flight marker: at least every token's ms
  // The lowest entry id of the call's tokens (see kFloorNone); none once a token is no id.
  std::optional<StreamId> floor;
  bool every_token_an_id = true;
  bool inflight = false;
  bool any_used = false;  // an event that is not "*": every event carries its used slots
  // Values and times packed into one number per event when every event's fit (see
  // kFieldPacked): times within kPackTimeSpan ms of the earliest, values of 32 bits.
  bool pack = false;
  std::int64_t at_base = 0;
};

// The ids and tokens of the events.
void scan_tokens(const HotBatch& batch, CallShape& shape) {
  for (const HotEvent& e : batch.events) {
    shape.any_id = shape.any_id || !e.event_id.empty();
    shape.join_tokens = shape.join_tokens && !e.order_token.empty() &&
                        e.order_token.find(kTokenSeparator) == std::string::npos;
    if (e.order_token.empty()) continue;
    shape.any_token = true;
    std::string_view rest = e.order_token;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(kTokenSeparator);
      const std::string_view token = rest.substr(0, comma);
      shape.marker_ms = std::max(shape.marker_ms, entry_ms(token));
      if (!token.empty() && token != std::string_view(&kForced, 1)) {
        const auto id = entry_id(token);
        shape.every_token_an_id = shape.every_token_an_id && id.has_value();
        if (id && (!shape.floor || *id < *shape.floor)) shape.floor = id;
      }
      rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    }
  }
  shape.inflight = !batch.stream.empty() && shape.any_token;
}

// The slots the events use, and whether their values and times can be packed.
void scan_values(const HotBatch& batch, CallShape& shape) {
  for (const HotEvent& e : batch.events) {
    shape.any_used = shape.any_used || !every_slot_unknown(e, batch.slots.size());
  }
  shape.pack = !batch.events.empty();
  shape.at_base = shape.pack ? to_epoch_ms(batch.events.front().at) : 0;
  for (const HotEvent& e : batch.events) shape.at_base = std::min(shape.at_base, to_epoch_ms(e.at));
  for (const HotEvent& e : batch.events) {
    // at >= at_base: the difference fits in 64 unsigned bits whatever the two are.
    const std::uint64_t offset =
        static_cast<std::uint64_t>(to_epoch_ms(e.at)) - static_cast<std::uint64_t>(shape.at_base);
    shape.pack = shape.pack && offset < static_cast<std::uint64_t>(kPackTimeSpan) &&
                 e.value >= -kPackValueBias && e.value < kPackValueBias;
  }
}

// ARGV's field letters (see kFieldPacked...).
std::string fields_of(const HotBatch& batch, const CallShape& shape) {
  std::string fields;
  if (with_standings(batch)) fields += kFieldStandings;
  if (shape.pack) fields += kFieldPacked;
  if (shape.any_id) fields += kFieldEventId;
  if (shape.join_tokens) {
    fields += kFieldJoinedTokens;
  } else if (shape.any_token) {
    fields += kFieldOrderToken;
  }
  if (shape.any_used) fields += kFieldUsedSlots;
  return fields;
}

// Every event's token, joined (with join_tokens).
std::string joined_tokens(const HotBatch& batch) {
  std::string joined;
  std::size_t size = 0;
  for (const HotEvent& e : batch.events) size += e.order_token.size() + 1;
  joined.reserve(size);
  for (const HotEvent& e : batch.events) {
    if (!joined.empty()) joined += kTokenSeparator;
    joined += e.order_token;
  }
  return joined;
}

redis::Args call_keys(const BoardKeys& keys, const HotBatch& batch, const CallShape& shape,
                      const IdBuckets& buckets) {
  redis::Args k = {keys.registry(), keys.synced(), keys.held(), keys.bans()};
  if (shape.any_id) {
    for (const std::int64_t b : buckets.lookup) k.push_back(keys.ids(b));
  }
  if (shape.inflight) k.push_back(keys.inflight(batch.stream));
  for (const PeriodSlot& s : batch.slots) {
    k.push_back(keys.live(s.period_name, s.period.id));
    k.push_back(keys.meta(s.period_name, s.period.id));
    k.push_back(keys.stale(s.period_name, s.period.id));
  }
  if (batch.league) {  // update_league.lua
    for (const PeriodSlot& s : batch.slots) {
      k.push_back(keys.seats(s.period_name, s.period.id));
      k.push_back(keys.waiting(s.period_name, s.period.id));
    }
    k.push_back(keys.divisions());
  }
  return k;
}

// ARGV's head: the call's settings, before its slots and events.
redis::Args head_args(const HotBatch& batch, bool cold_tier, const CallShape& shape,
                      const IdBuckets& buckets) {
  const ScoreLayout& first = batch.slots.at(0).layout;
  // Checked calls look at every marker anyway (see kFloorNone).
  std::string floor_text =
      shape.inflight && !batch.check_inflight && shape.every_token_an_id && shape.floor
          ? shape.floor->text()
          : std::string(kFloorNone);
  return {std::string(1, policy_code(batch.policy)),
          std::string(1, first.order == Order::desc ? kDesc : kAsc),
          std::string(1, tie_code(first.tie)),
          std::to_string(first.min_points),
          std::to_string(first.max_points),
          std::to_string(batch.slots.size()),
          std::to_string(batch.events.size()),
          batch.hold ? "1" : "0",
          cold_tier ? "1" : "0",
          std::to_string(shape.any_id ? buckets.lookup.size() : 0),
          std::to_string(buckets.ttl.count()),
          std::string(!shape.inflight        ? kInflightOff
                      : batch.check_inflight ? kInflightCheck
                                             : kInflightMark),
          std::to_string(batch.acknowledged_below_ms),
          batch.want_points ? "1" : "0",
          std::to_string(shape.marker_ms),
          fields_of(batch, shape),
          shape.join_tokens ? joined_tokens(batch) : std::string(),
          shape.pack ? std::to_string(shape.at_base) : std::string(),
          std::move(floor_text)};
}

void push_slot_args(const HotBatch& batch, redis::Args& a) {
  for (const PeriodSlot& s : batch.slots) {
    a.push_back(registry_member(s.period_name, s.period.id));
    a.push_back(std::to_string(to_epoch_ms(s.period.start)));
    a.push_back(std::to_string(s.layout.span_units));
    a.push_back(std::to_string(s.layout.resolution.count()));
    a.push_back(std::to_string(to_epoch_ms(s.expire_at)));
    a.push_back(std::to_string(to_epoch_ms(s.period.end)));
  }
}

void push_event_args(const HotBatch& batch, const CallShape& shape, redis::Args& a) {
  for (const HotEvent& e : batch.events) {
    a.push_back(e.member);
    if (shape.pack) {
      a.push_back(std::to_string((to_epoch_ms(e.at) - shape.at_base) * kPackTimeShift + e.value +
                                 kPackValueBias));
    } else {
      a.push_back(std::to_string(e.value));
      a.push_back(std::to_string(to_epoch_ms(e.at)));
    }
    if (shape.any_id) a.push_back(e.event_id);
    if (shape.any_token && !shape.join_tokens) a.push_back(e.order_token);
    if (!shape.any_used) continue;
    if (every_slot_unknown(e, batch.slots.size())) {
      a.emplace_back(kEverySlot);
    } else {
      push_slots(e, a);
    }
  }
}

}  // namespace

Call marshal_update(const std::string& key_prefix, const HotBatch& batch, bool cold_tier) {
  CallShape shape;
  scan_tokens(batch, shape);
  scan_values(batch, shape);
  const IdBuckets buckets = shape.any_id ? id_buckets(batch.now, batch.dedupe_window) : IdBuckets{};
  Call c;
  c.keys = call_keys(BoardKeys(key_prefix, batch.board), batch, shape, buckets);
  c.args = head_args(batch, cold_tier, shape, buckets);
  c.args.reserve(c.args.size() + 6 * batch.slots.size() +
                 (shape.pack ? 2 : 3) * batch.events.size());
  push_slot_args(batch, c.args);
  push_event_args(batch, shape, c.args);
  if (batch.league) c.args.push_back(std::to_string(batch.league->start));
  return c;
}

HotResult parse_update_reply(const redis::Reply& r) {
  HotResult out;
  if (r.type == redis::Reply::Type::integer) {
    // Applied, without points: the rehydrated bit mask alone.
    for (std::int64_t mask = r.as_int(); mask != 0; mask >>= 1) {
      out.rehydrated.push_back((mask & 1) != 0);
    }
    return out;
  }
  if (r.at(0).type == redis::Reply::Type::integer) {
    // Applied: {rehydrated bit mask, points per slot...}.
    const std::int64_t mask = r.at(0).as_int();
    for (std::size_t i = 1; i < r.elements.size(); ++i) {
      out.points.push_back(r.at(i).as_int());
      out.rehydrated.push_back(((mask >> (i - 1)) & 1) != 0);
    }
    return out;
  }
  const std::string& status = r.at(0).as_string();
  if (status == kBlocked) {
    out.outcome = HotOutcome::blocked;
  } else if (status == kWaiting) {
    out.outcome = HotOutcome::waiting;
  } else if (status == kSplit) {
    out.outcome = HotOutcome::split;
  } else if (status == kBanned) {
    out.outcome = HotOutcome::banned;
  } else if (status == kSync) {
    out.outcome = HotOutcome::needs_sync;
  } else if (status == kDup) {
    out.outcome = HotOutcome::duplicate;
  } else if (status == kClosed) {
    out.outcome = HotOutcome::closed;
    out.period = r.at(1).as_string();
  } else if (status == kExpired) {
    out.outcome = HotOutcome::expired;
    out.period = r.at(1).as_string();
  } else if (status == kRange) {
    out.outcome = HotOutcome::out_of_range;
    out.period = r.at(1).as_string();
    out.refused_points = r.at(2).as_int();
  } else if (status == kCold) {
    out.outcome = HotOutcome::needs_cold;
    for (std::size_t i = 1; i + 1 < r.elements.size(); i += 2) {
      out.cold_slots.push_back(static_cast<std::size_t>(r.at(i).as_int() - 1));
      out.cold_gens.push_back(r.at(i + 1).as_string());
    }
  } else if (status == kSpan) {
    throw Error("internal: event time outside period " + r.at(1).as_string());
  } else {
    throw redis::ReplyError("update script: unexpected status '" + status + "'");
  }
  return out;
}

namespace {

std::optional<std::int64_t> score_or_none(const redis::Reply& r) {
  if (r.as_string().empty()) return std::nullopt;
  return r.as_int();
}

}  // namespace

HotStanding parse_standing(const redis::Reply& r) {
  if (r.type != redis::Reply::Type::array || r.elements.size() < 8) {
    throw redis::ReplyError("update script: a standing is not an array of 8 or more");
  }
  HotStanding s;
  s.before = score_or_none(r.at(0));
  s.before_better = r.at(1).as_int();
  s.after = score_or_none(r.at(2));
  s.after_better = r.at(3).as_int();
  s.spilled = r.at(4).as_int() == 1;
  s.cold_bound = score_or_none(r.at(5));
  s.gen = r.at(6).as_string();
  if (r.at(7).as_int() == 1) {
    s.hot_and_stale.emplace();
    for (std::size_t i = 8; i < r.elements.size(); ++i) {
      s.hot_and_stale->push_back(r.at(i).as_string());
    }
  }
  return s;
}

std::vector<HotResult> parse_update_replies(const redis::Reply& reply, std::size_t events,
                                            bool standings) {
  if (standings) {
    if (reply.type != redis::Reply::Type::array || reply.elements.empty() || events != 1) {
      throw redis::ReplyError("update script: a reply with standings is not {reply, ...}");
    }
    std::vector<HotResult> results = parse_update_replies(reply.elements[0], events);
    for (std::size_t j = 1; j < reply.elements.size(); ++j) {
      results.front().standings.push_back(parse_standing(reply.elements[j]));
    }
    return results;
  }
  if (reply.type == redis::Reply::Type::integer) {
    if (reply.as_int() != static_cast<std::int64_t>(events)) {
      throw redis::ReplyError("update script said " + std::to_string(reply.as_int()) +
                              " events applied for " + std::to_string(events) + " events");
    }
    return std::vector<HotResult>(events);
  }
  if (reply.type == redis::Reply::Type::array && !reply.elements.empty() &&
      reply.elements[0].type == redis::Reply::Type::string && reply.elements[0].str == kAllPoints) {
    // Every event applied, none rehydrated (rehydrated stays empty): their points, event by
    // event, slot by slot.
    const std::size_t values = reply.elements.size() - 1;
    if (events == 0 && values == 0) return {};
    if (events == 0 || values == 0 || values % events != 0) {
      throw redis::ReplyError("update script returned " + std::to_string(values) + " points for " +
                              std::to_string(events) + " events");
    }
    const std::size_t slots = values / events;
    std::vector<HotResult> results(events);
    for (std::size_t e = 0; e < events; ++e) {
      results[e].points.reserve(slots);
      for (std::size_t j = 0; j < slots; ++j) {
        results[e].points.push_back(reply.elements[1 + e * slots + j].as_int());
      }
    }
    return results;
  }
  if (reply.type != redis::Reply::Type::array || reply.elements.size() != events) {
    throw redis::ReplyError("update script returned " + std::to_string(reply.elements.size()) +
                            " results for " + std::to_string(events) + " events");
  }
  std::vector<HotResult> results;
  results.reserve(events);
  for (const redis::Reply& e : reply.elements) results.push_back(parse_update_reply(e));
  return results;
}

}  // namespace bk::hot::protocol
