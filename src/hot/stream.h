// An event stream kept bounded: entry ids as numbers, the bounds of a consumer group (what it
// has acknowledged, its lag and pending entries) with the trimming of what every group has
// acknowledged, and a consumer leaving its group without dropping pending entries.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "redis/connection.h"
#include "redis/script.h"

namespace bk::hot {

// A stream entry id "<ms>-<seq>": two 64-bit unsigned integers, ordered as Redis orders them.
struct StreamId {
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;

  // "<ms>-<seq>" in decimal; nullopt for anything else (no "-", a partial id, a sign...).
  static std::optional<StreamId> parse(std::string_view text);
  std::string text() const;

  friend bool operator<(const StreamId& a, const StreamId& b) {
    return a.ms != b.ms ? a.ms < b.ms : a.seq < b.seq;
  }
  friend bool operator==(const StreamId& a, const StreamId& b) {
    return a.ms == b.ms && a.seq == b.seq;
  }
  friend bool operator!=(const StreamId& a, const StreamId& b) { return !(a == b); }
};

// A consumer group of a stream.
struct GroupRef {
  std::string stream;
  std::string group;
};

enum class Trim {
  keep,          // only look
  acknowledged,  // remove the entries every consumer group has acknowledged
};

struct StreamBounds {
  // Every entry of the stream below this id is acknowledged by the group (or was never for
  // it); nullopt when the group (or the stream) does not exist.
  std::optional<StreamId> acknowledged_below;
  // Entries not yet delivered to the group (XINFO GROUPS `lag`); nullopt when Redis cannot
  // tell (entries were deleted with XDEL past the group's position, or no group).
  std::optional<std::int64_t> lag;
  std::int64_t pending = 0;  // delivered to the group and not acknowledged
  std::int64_t length = 0;   // XLEN, after trimming
  std::int64_t trimmed = 0;  // entries removed by this call
};

enum class Departure {
  left,      // the consumer is no longer in the group (removed, or it was not there)
  pending,   // kept: entries are pending at it, and would be lost with it
  no_group,  // the stream or the group does not exist
};

// StreamKeeper::dead_letter's answer for an entry that was no longer pending (the words
// stream_dead_letter.lua returns; tests/hot/stream_id_test.cpp checks they agree).
inline constexpr const char* kAlreadyAcknowledged = "already acknowledged";

// An entry for the dead-letter stream: its id, why it is dead, and its fields.
struct DeadLetter {
  std::string id;
  std::string reason;
  const std::vector<std::pair<std::string, std::string>>* fields = nullptr;
};

// How much of what a stream's node wrote its replicas hold. In-flight markers of entries
// below an acknowledged bound may go only once the replicas hold the writes that made it the
// bound (the acknowledgements and deliveries): a replica promoted without them delivers
// those entries again.
struct Replication {
  std::string replid;  // the node's replication history (INFO's master_replid)
  // The node's replication offset when asked: every write it had done lies at or below it.
  std::int64_t offset = 0;
  // The offset every replica it should have holds (`offset` when it has none); nullopt when
  // one of them is not connected and in sync, or the node is not a master.
  std::optional<std::int64_t> held_by_all;
};

// From INFO replication's text and the number of replicas the node should have (on a
// cluster, what CLUSTER NODES lists; at least those INFO lists, connected or not).
Replication parse_replication(std::string_view info, std::size_t replicas);
// How many replicas CLUSTER NODES, as the node itself answers it, lists for the node
// ("myself"), connected or not; those flagged "fail" (unreachable for longer than the node
// timeout, as the masters agreed) do not count: they come back only through a resync.
std::size_t replicas_of_myself(std::string_view cluster_nodes);
// Both asked of the node that holds `stream` (CLUSTER NODES only on a cluster). Throws
// redis errors (an error reply included).
Replication replication_of(redis::Connection& conn, const std::string& stream);

// The scripts of one connection's user (each caches its SHA1 per server, see redis::Script).
class StreamKeeper {
 public:
  StreamKeeper();

  // One atomic look at every group of the stream; with Trim::acknowledged, also XTRIM MINID
  // (exact) to the first entry any group still needs. Nothing is trimmed when the stream has
  // no groups or `ref.group` does not exist. Throws redis errors.
  StreamBounds bounds(redis::Connection& conn, const GroupRef& ref, Trim trim);

  // XGROUP DELCONSUMER, only when nothing is pending at the consumer (checked in the same
  // script). Throws redis errors.
  Departure leave(redis::Connection& conn, const GroupRef& ref, const std::string& consumer);

  // Writes each letter to `dead` (XADD MAXLEN ~ dead_maxlen, fields "reason", "stream_id"
  // and the entry's) and acknowledges its entry in the group, in one script: a killed
  // consumer never leaves one without the other. Per letter: "" when done;
  // kAlreadyAcknowledged when the entry was no longer pending (another consumer that took it
  // over dead-lettered it first): nothing written; else why Redis refused it: the XADD
  // (nothing written, the entry stays pending) or, the letter written, the XACK (only when
  // the group is gone or the stream key replaced: nothing is pending then either).
  // Throws redis errors.
  std::vector<std::string> dead_letter(redis::Connection& conn, const GroupRef& ref,
                                       const std::string& dead, std::int64_t dead_maxlen,
                                       const std::vector<DeadLetter>& letters);

 private:
  redis::Script bounds_;
  redis::Script leave_;
  redis::Script dead_letter_;
};

}  // namespace bk::hot
