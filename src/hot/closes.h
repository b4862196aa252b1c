// Close notices in Redis: a stream (default <prefix>:closes) whose entry ids are derived from
// the notices' sequence numbers, so that Redis itself refuses a notice added twice.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hot/stream.h"
#include "redis/connection.h"

namespace bk::hot {

// The entry id of notice `seq`: <seq>-1.
StreamId close_entry_id(std::int64_t seq);

// The largest id the stream ever had (its last-generated-id: entries deleted or trimmed since
// still count); nullopt when the stream does not exist.
std::optional<StreamId> stream_top(redis::Connection& redis, const std::string& stream);

enum class CloseAdded {
  added,    // the entry is in the stream now
  already,  // refused: the stream's top is at or above its id (it was added before)
};
using EntryFields = std::vector<std::pair<std::string, std::string>>;
// XADD <stream> <seq>-1 field value ... (the stream made if missing). Any refusal other than
// "the id is not above the top" is thrown (redis/error.h).
CloseAdded add_close_entry(redis::Connection& redis, const std::string& stream, std::int64_t seq,
                           const EntryFields& fields);

}  // namespace bk::hot
