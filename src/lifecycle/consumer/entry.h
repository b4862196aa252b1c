// What the ingest loop's parts share: the names of the streams consumed, the entries read
// from them, and what becomes of each entry of a batch.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "hot/consumer_group.h"

namespace bk::lifecycle::consumer {

using Steady = std::chrono::steady_clock;

// One consumed stream's names.
struct StreamNames {
  std::string key;
  std::string dead;       // <key>:dead
  std::string qualifier;  // in default event ids and order tokens (see IngestOptions)
};

// The names of `streams`, in order: the first one's entries are not qualified.
inline std::vector<StreamNames> stream_names(const std::vector<std::string>& streams) {
  std::vector<StreamNames> out;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    out.push_back({streams[i], streams[i] + ":dead", i == 0 ? "" : streams[i] + ":"});
  }
  return out;
}

struct Entry {
  std::size_t stream = 0;  // index into the consumer's streams
  std::string id;          // stream entry id
  std::vector<std::pair<std::string, std::string>> fields;
  bool deleted = false;  // pending, but gone from the stream (XDEL, trimming): nothing to do
};

// The entries of one stream, as read from it (their strings moved).
inline std::vector<Entry> entries_of(std::vector<hot::StreamEntry>&& read, std::size_t stream) {
  std::vector<Entry> out;
  out.reserve(read.size());
  for (hot::StreamEntry& e : read) {
    out.push_back({stream, std::move(e.id), std::move(e.fields), e.deleted});
  }
  return out;
}

// What becomes of each entry of a batch.
enum class Verdict {
  acknowledge,  // applied, a duplicate, or gone from the stream
  dead_letter,  // refused or malformed: to <stream>:dead, acknowledged with it
  done,         // its dead letter written and the entry acknowledged (one script)
  hold,         // stays pending at this consumer and is read again (a retry pass)
};

}  // namespace bk::lifecycle::consumer
