// The stream-event contract: an entry's fields read into a service::Update, or the reason the
// entry is malformed. Numbers are read exactly (std::from_chars: no locale, no sign games).
#include "lifecycle/stream_event.h"

#include <charconv>
#include <cstdint>
#include <set>

#include "core/time.h"

namespace bk::lifecycle {
namespace {

// The whole of `text` as a decimal int64; nullopt for an empty, partial or too large one.
std::optional<std::int64_t> whole_number(const std::string& text) {
  std::int64_t n = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || r.ec != std::errc{} || r.ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return n;
}

// Reads one field into `u`; why it cannot be taken, or nullopt.
std::optional<std::string> read_field(const std::string& k, const std::string& v,
                                      service::Update& u) {
  if (k == "board") {
    u.board = v;
  } else if (k == "member") {
    u.member = v;
  } else if (k == "value") {
    const auto n = whole_number(v);
    if (!n) return "value '" + v + "' is not a whole number";
    u.value = *n;
  } else if (k == "at") {
    if (const auto ms = whole_number(v)) {
      u.at = from_epoch_ms(*ms);
    } else if (auto t = parse_rfc3339(v)) {
      u.at = t;
    } else {
      return "at '" + v + "' is neither RFC 3339 nor epoch milliseconds";
    }
  } else if (k == "id") {
    u.event_id = v;
  } else if (k == "name") {
    u.name = v;  // checked with the update: a bad one refuses it, with the reason
  } else if (k == "meta") {
    u.meta = v;
  } else {
    return "unknown field '" + k + "'";
  }
  return std::nullopt;
}

}  // namespace

StreamEvent parse_stream_event(const StreamFields& fields, std::string_view entry_id,
                               const EventOrigin& origin) {
  StreamEvent event;
  service::Update u;
  u.stream = std::string(origin.stream);
  u.redelivered = origin.redelivered;
  std::set<std::string_view> seen;
  for (const auto& [k, v] : fields) {
    // Two of one field: which one was meant is a guess, so none is taken.
    if (!seen.insert(k).second) {
      event.malformed = "field '" + k + "' appears more than once";
      return event;
    }
    if (auto why = read_field(k, v, u)) {
      event.malformed = std::move(*why);
      return event;
    }
  }
  for (const char* required : {"board", "member", "value"}) {
    if (seen.count(required) == 0) {
      event.malformed = std::string("no ") + required + " field";
      return event;
    }
  }
  // A later event of the member waits while this one is held: stream order is kept. And
  // the entry leaves an in-flight marker on its board (one marker set per stream) when
  // applied, which makes a redelivery harmless however long the entry stays pending.
  u.order_token = std::string(origin.qualifier) + std::string(entry_id);
  event.update = std::move(u);
  return event;
}

std::string malformed_reason(const std::string& why) {
  return "malformed event: " + why;
}

}  // namespace bk::lifecycle
