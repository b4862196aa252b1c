// A stream's consumer group as the ingest loop uses it: the commands (read, take over, claim,
// count pending, acknowledge, create the group) built here, and their replies typed, so that
// callers above `hot` spell no stream command. Parsing needs no server.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "hot/stream.h"
#include "redis/connection.h"

namespace bk::hot {

// One entry of a stream: its id and fields, or `deleted` when it is pending but gone from the
// stream (XDEL, trimming): nothing to do but acknowledge it.
struct StreamEntry {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;
  bool deleted = false;
};

// The entries a group read delivered from one stream.
struct StreamEntries {
  std::string stream;
  std::vector<StreamEntry> entries;
};

// A read of a consumer in its group: each stream from its own id (">" for new entries, an id
// for this consumer's pending ones after it), at most `count` entries per stream, waiting up
// to `block` for some (nullopt: not waiting).
struct GroupRead {
  std::string group;
  std::string consumer;
  std::int64_t count = 0;
  std::optional<Millis> block;
  std::vector<std::pair<std::string, std::string>> streams;  // (stream, from id)
};
redis::Args read_group(const GroupRead& read);  // XREADGROUP
// [[stream, entries]...] (or nil: nothing); the strings are moved out of the reply.
std::vector<StreamEntries> parse_group_read(redis::Reply&& reply);

// Take-over of entries pending at any consumer of the group for at least `min_idle`, scanning
// the pending list from `cursor` (XAUTOCLAIM ... COUNT count).
struct TakeOver {
  std::string consumer;
  Millis min_idle{0};
  std::string cursor;
  std::int64_t count = 0;
};
redis::Args take_over(const GroupRef& ref, const TakeOver& take);
struct TakenOver {
  std::string cursor;  // where the next scan goes on; "0-0" once the list was scanned through
  std::vector<StreamEntry> entries;
};
TakenOver parse_take_over(redis::Reply&& reply);

// Claims `ids` for `consumer` if idle for at least `min_idle`, answering only the ids claimed
// (XCLAIM ... JUSTID).
redis::Args claim_ids(const GroupRef& ref, const std::string& consumer, Millis min_idle,
                      const std::vector<std::string>& ids);
std::vector<std::string> parse_claimed_ids(const redis::Reply& reply);

// How many entries are pending in the whole group (XPENDING summary).
redis::Args pending_summary(const GroupRef& ref);
std::int64_t parse_pending_count(const redis::Reply& reply);

// Acknowledges `ids` in the group (XACK); nullopt when there is none to acknowledge.
std::optional<redis::Args> acknowledge(const GroupRef& ref, const std::vector<std::string>& ids);

// The reply says the group (or its stream) does not exist (NOGROUP): Redis lost it.
bool is_no_group(const redis::Reply& reply);

enum class GroupCreation { created, existed };
// Creates the group reading the stream from its start, the stream too when missing
// (XGROUP CREATE ... 0 MKSTREAM). Throws redis errors (an error reply included).
GroupCreation create_group(redis::Connection& conn, const GroupRef& ref);

}  // namespace bk::hot
