// The stream-event contract: which fields a score event in a Redis stream entry carries, how
// each is read, and why an entry is refused as malformed (the reason its dead letter gives).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/leaderboards.h"

namespace bk::lifecycle {

// A stream entry's fields, in the order the entry holds them.
using StreamFields = std::vector<std::pair<std::string, std::string>>;

// Where an entry was read: its stream, the qualifier of its order token (empty for the first
// stream consumed, "<stream>:" for the others, see IngestOptions::streams) and whether it was
// read again from a pending list (it may have been applied before).
struct EventOrigin {
  std::string_view stream;
  std::string_view qualifier;
  bool redelivered = false;
};

// The fields of an event: board, member and value are required; at, id, name and meta are
// optional; any other field, or a field given twice, makes the entry malformed.
//   value  a whole number (int64, decimal, optional '-')
//   at     epoch milliseconds or RFC 3339
//   name, meta  passed on to the update, which checks them (a bad one refuses it)
// The update, or why the entry is not an event (e.g. "no board field").
struct StreamEvent {
  std::optional<service::Update> update;
  std::string malformed;  // set when update is not
};
StreamEvent parse_stream_event(const StreamFields& fields, std::string_view entry_id,
                               const EventOrigin& origin);

// How a malformed entry's dead letter is labelled (IngestStats::dead_by_reason) and the
// reason it carries.
inline constexpr std::string_view kMalformedLabel = "malformed";
std::string malformed_reason(const std::string& why);

}  // namespace bk::lifecycle
