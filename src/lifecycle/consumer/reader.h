// Reading the streams in the consumer group: new entries (waiting on one group of streams at
// a time), passes over this consumer's own pending entries, take-overs of entries other
// consumers left pending, and the read ahead on a second connection. A group Redis lost is
// created again on the spot.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lifecycle/consumer/entry.h"
#include "lifecycle/ingest.h"
#include "redis/connection.h"

namespace bk::lifecycle::consumer {

class StreamReader {
 public:
  // `totals`: what the consumer counted so far (a group found gone after entries were read
  // is a warning: Redis lost its data).
  StreamReader(redis::Connection& redis, const IngestOptions& options,
               const std::vector<StreamNames>& streams, const IngestStats& totals,
               IngestObserver& observer);

  // This consumer's own pending entries, oldest first: a pass starts at the start of each
  // stream, reads on after the last entry read, and is over for a stream that has nothing
  // more (read_own() is empty once every stream is done).
  void start_own_pass();
  std::vector<Entry> read_own();
  void end_own_pass();

  // Entries pending at other consumers for reclaim_idle are looked for at the start, then
  // every half reclaim_idle and whenever the streams have nothing new (claim_soon).
  bool claim_running() const;  // a scan of some stream's pending list is under way
  bool claim_due() const;
  std::vector<Entry> reclaim();
  // Nothing new was read: look for abandoned entries next (with streams on several slots,
  // once every slot was waited on, not after every short wait).
  void claim_soon();

  // New entries; with drain, not waiting for them.
  std::vector<Entry> read_new();

  // The read ahead (one stream): sent now on the second connection (false when that fails:
  // nothing was read), its entries received later (throws a server's failure).
  bool send_read_ahead();
  bool reading_ahead() const { return reading_ahead_; }
  std::vector<Entry> receive_read_ahead();
  // A read ahead failed or was abandoned: what it delivered is pending at this consumer.
  void read_ahead_failed();
  void drop_read_ahead();

  // Of `ids` (read ahead from the first stream), those nobody touched for `min_idle`,
  // claimed here again (the others were taken over by another consumer).
  std::set<std::string> still_ours(const std::vector<std::string>& ids, Millis min_idle);

  // No entry pending in the whole group, on any stream.
  bool nothing_pending();
  // "<n>" pending in the group of `stream`, or "unknown (<why>)".
  std::string pending_count(const StreamNames& stream);

 private:
  struct Cursors {
    // Entries left pending by consumers that died are looked for at the start, then every
    // half reclaim_idle and whenever the streams have nothing new: a scan of the pending
    // list per batch would cost more than the batch.
    std::string claim = "0-0";
    Steady::time_point next_claim = Steady::now();
    // The running pass over this consumer's own pending entries: the last id it read here;
    // empty once this stream has nothing more for the pass.
    std::string own;
  };

  redis::Connection& redis_;
  // Reads the next batch of new entries while the current one applies.
  redis::Connection ahead_;
  const IngestOptions& o_;
  const std::vector<StreamNames>& streams_;
  const IngestStats& totals_;
  IngestObserver& observer_;
  std::vector<Cursors> cursors_;
  // The streams that one XREADGROUP can read together (indexes into streams_): all of them,
  // but on a cluster those of each hash slot. With several groups each turn reads every
  // group in one round trip (different nodes), and, with nothing new anywhere, waits on one
  // group in turn for at most kSliceWait, so that an entry on another is not kept waiting
  // longer than that.
  std::vector<std::vector<std::size_t>> groups_;
  std::size_t next_wait_ = 0;  // the group waited on next
  static constexpr Millis kSliceWait{100};
  bool reading_ahead_ = false;  // a read was sent on ahead_, its reply not read yet
  bool ahead_broken_ = false;   // ahead_ must reconnect before its next read

  hot::GroupRef ref(const StreamNames& s) const { return {s.key, o_.group}; }
  redis::Reply group_command(const redis::Args& args);
  std::vector<redis::Reply> group_pipeline(const std::vector<redis::Args>& commands);
  void create_groups();
  std::size_t index_of(const std::string& key) const;
  std::vector<Entry> entries_of_read(redis::Reply r, std::vector<bool>* answered = nullptr);
  std::vector<Entry> entries_of_reads(const std::vector<redis::Args>& reads,
                                      std::vector<bool>* answered = nullptr);
  redis::Args read_new_command(const std::vector<std::size_t>& group,
                               std::optional<Millis> block) const;
};

}  // namespace bk::lifecycle::consumer
