// The ingest loop: one turn reads entries of every stream (this consumer's own pending ones
// when a retry is due, else abandoned ones of other consumers, else new ones) and processes
// them as one batch; every second or so it looks at the streams' bounds and trims them; a
// failure of Redis or PostgreSQL is waited out with backoff, never fatal.
#include "lifecycle/ingest.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "hot/consumer_group.h"
#include "lifecycle/stream_event.h"
#include "redis/error.h"

namespace bk::lifecycle {

Millis Backoff::delay(std::int64_t in_a_row, double unit) const {
  Millis d = first;
  for (std::int64_t i = 1; i < in_a_row && d < cap; ++i) d *= 2;
  d = std::min(d, cap);
  const double jitter = 0.5 + 0.5 * std::clamp(unit, 0.0, 1.0);
  return std::max(Millis{1}, Millis{std::llround(static_cast<double>(d.count()) * jitter)});
}

IngestStats& IngestStats::operator+=(const IngestStats& other) {
  read += other.read;
  applied += other.applied;
  duplicates += other.duplicates;
  dead += other.dead;
  reclaimed += other.reclaimed;
  unavailable += other.unavailable;
  waiting += other.waiting;
  dead_letter_failures += other.dead_letter_failures;
  board_failed += other.board_failed;
  board_failures += other.board_failures;
  rehydrated += other.rehydrated;
  postgres_errors += other.postgres_errors;
  trimmed += other.trimmed;
  taken_over += other.taken_over;
  for (const auto& [reason, n] : other.dead_by_reason) dead_by_reason[reason] += n;
  for (const auto& [stream, id] : other.acknowledged_below) acknowledged_below[stream] = id;
  return *this;
}

namespace {

using Steady = std::chrono::steady_clock;

struct Entry {
  std::size_t stream = 0;  // index into the consumer's streams
  std::string id;          // stream entry id
  std::vector<std::pair<std::string, std::string>> fields;
  bool deleted = false;  // pending, but gone from the stream (XDEL, trimming): nothing to do
};

// The entries of one stream, as read from it (their strings moved).
std::vector<Entry> entries_of(std::vector<hot::StreamEntry>&& read, std::size_t stream) {
  std::vector<Entry> out;
  out.reserve(read.size());
  for (hot::StreamEntry& e : read) {
    out.push_back({stream, std::move(e.id), std::move(e.fields), e.deleted});
  }
  return out;
}

redis::Options with_role(redis::Options options, const char* role) {
  options.role = role;
  return options;
}

const char* name_of(Backend backend) {
  return backend == Backend::redis ? "redis" : backend == Backend::postgres ? "postgresql" : "?";
}

// What becomes of each entry of a batch.
enum class Verdict {
  acknowledge,  // applied, a duplicate, or gone from the stream
  dead_letter,  // refused or malformed: to <stream>:dead, acknowledged with it
  done,         // its dead letter written and the entry acknowledged (one script)
  hold,         // stays pending at this consumer and is read again (a retry pass)
};

// Dead letters are logged one by one up to this many per batch, then summed up.
constexpr int kLoggedPerBatch = 10;

class Consumer {
 public:
  Consumer(redis::Connection& redis, service::Leaderboards& boards, const IngestOptions& o,
           const std::atomic<bool>& stop, IngestObserver& observer)
      : redis_(redis),
        reader_(with_role(redis.options(), "read-ahead"), redis::Connect::later),
        boards_(boards),
        o_(o),
        stop_(stop),
        observer_(observer) {
    if (o.streams.empty()) throw Error("ingest: no stream to consume");
    for (std::size_t i = 0; i < o.streams.size(); ++i) {
      Stream s;
      s.key = o.streams[i];
      s.dead = s.key + ":dead";
      s.qualifier = i == 0 ? "" : s.key + ":";
      streams_.push_back(std::move(s));
    }
    groups_ = redis_.key_groups(o.streams);
  }

  IngestStats run() {
    // A batch already read ahead is processed before a stop (it is pending at this consumer).
    while (!stop_.load() || next_) {
      observer_.loop_turn();
      if (drain_stuck()) {
        give_up();
        break;
      }
      try {
        const bool more = turn();
        // Back only once a whole turn went through: a failure that recurs after the
        // turn's first commands succeeded must keep counting (and backing off).
        if (redis_failing_.in_a_row > 0) recovered(Backend::redis, "a turn went through");
        if (!more) break;
      } catch (const Error& e) {
        if (e.backend() == Backend::none) throw;  // not a server's failure: a bug or config
        failed(e);
      }
    }
    finish();
    return stats_;
  }

 private:
  redis::Connection& redis_;
  // Reads the next batch of new entries while the current one applies (see next_).
  redis::Connection reader_;
  service::Leaderboards& boards_;
  const IngestOptions& o_;
  const std::atomic<bool>& stop_;
  IngestObserver& observer_;
  IngestStats stats_;
  std::mt19937_64 rng_{std::random_device{}()};
  bool reconnect_ = false;  // a transient reply (LOADING, READONLY...): use a new connection
  hot::StreamKeeper keeper_;

  struct Stream {
    std::string key;
    std::string dead;       // <key>:dead
    std::string qualifier;  // in default event ids and order tokens (see IngestOptions)
    // Entries left pending by consumers that died are looked for at the start, then every
    // half reclaim_idle and whenever the streams have nothing new: a scan of the pending
    // list per batch would cost more than the batch.
    std::string claim_cursor = "0-0";
    Steady::time_point next_claim = Steady::now();
    // The running pass over this consumer's own pending entries: the last id it read here;
    // empty once this stream has nothing more for the pass.
    std::string own_cursor;
    // Every entry below is acknowledged by the group (as last looked at); nullopt while the
    // group does not exist. What in-flight state of entries below it may be forgotten.
    std::optional<hot::StreamId> acknowledged_below;
    // Bounds seen whose writes the replicas of the stream's node may not hold yet (oldest
    // first, see prune_once_replicated), of one replication history and one connection.
    struct Unreplicated {
      hot::StreamId bound;
      std::int64_t offset = 0;  // the node's replication offset once it was seen
    };
    std::deque<Unreplicated> unreplicated;
    std::string replid;
    std::uint64_t generation = 0;
    bool replication_refused = false;  // warned once
  };
  std::vector<Stream> streams_;
  // The streams that one XREADGROUP can read together (indexes into streams_): all of them,
  // but on a cluster those of each hash slot. With several groups each turn reads every
  // group in one round trip (different nodes), and, with nothing new anywhere, waits on one
  // group in turn for at most kSliceWait, so that an entry on another is not kept waiting
  // longer than that.
  std::vector<std::vector<std::size_t>> groups_;
  std::size_t next_wait_ = 0;  // the group waited on next
  static constexpr Millis kSliceWait{100};

  // Re-reads of this consumer's own pending entries: a pass reads them oldest first (stream
  // order, which keeps each member's events in order) and runs before any new entry.
  struct OwnPending {
    bool scheduled = false;  // a pass starts at `at`
    Steady::time_point at;
    bool running = false;     // a pass is under way (Stream::own_cursor tells where)
    bool left = false;        // the running pass left entries pending again
    std::int64_t passes = 0;  // passes in a row that left entries pending
  } own_;

  // The streams' bounds are looked at every bounds_every, and sooner when the consumer is
  // idle after acknowledging something (so a drained stream is trimmed at once).
  Steady::time_point next_bounds_ = Steady::now();
  bool acknowledged_since_bounds_ = false;

  struct Failing {
    std::int64_t in_a_row = 0;
    Steady::time_point since;
  } redis_failing_, postgres_failing_;
  std::string redis_error_;  // the last Redis failure, while it fails

  // Boards whose script calls got a lasting error (service::UpdateStatus::failed), by name.
  // Their events stay pending, in stream order: they are sent again only by a pass over this
  // consumer's pending entries that starts once the board's own backoff is over (a pass reads
  // them oldest first; sending one read anew, or one met in the middle of a pass, could apply
  // a member's later event before an earlier one). Every other board goes on.
  struct FailingState {
    std::string error;
    Steady::time_point since;
    std::chrono::system_clock::time_point since_wall;
    std::int64_t attempts = 0;  // failed calls in a row
    Steady::time_point next_retry;
    std::int64_t waited = 0;  // events left pending meanwhile (counted each time)
  };
  std::map<std::string, FailingState> failing_boards_;
  std::set<std::string> retry_in_pass_;  // failing boards the running pass sends again
  // Dead-letter streams that refused a dead letter, and why (until one is written there).
  std::map<std::string, std::string> dead_refused_;
  // The last time something moved (an entry applied, dead-lettered or acknowledged): a drain
  // gives up after max_wait without.
  Steady::time_point last_progress_ = Steady::now();

  // A batch: its entries, and what parsing made of them.
  struct Batch {
    std::vector<Entry> entries;
    std::int64_t reclaimed = 0;  // of them, taken over from other consumers
    std::vector<Verdict> verdicts;
    std::vector<std::string> reasons;
    std::vector<std::string> labels;  // why each dead letter is dead
    std::vector<service::Update> updates;
    std::vector<std::size_t> index;  // entry of each update
    // Planned while the batch before it applied (read ahead), or not yet.
    std::optional<service::Leaderboards::Prepared> prepared;
    Steady::time_point read_at = Steady::now();
  };
  // Read ahead: the next batch of new entries, read (on reader_) and planned while the
  // current batch's script calls run at the server, so that the client's work overlaps
  // Redis's. Its entries are pending at this consumer from the moment they are read, so a
  // batch read ahead is always the next one processed: before a pass over the pending list
  // (which would meet them too) and before a stop. A failure to read ahead leaves them
  // pending for such a pass, scheduled at once.
  std::unique_ptr<Batch> next_;  // read and planned, not processed yet
  bool reading_ahead_ = false;   // a read was sent on reader_, its reply not read yet
  bool reader_broken_ = false;   // reader_ must reconnect before its next read

  // One read and its batch; false when draining found nothing left.
  bool turn() {
    if (reconnect_ || !redis_.connected()) {
      redis_.reconnect();
      reconnect_ = false;
    }
    if (next_) {
      std::unique_ptr<Batch> next = std::move(next_);
      const bool aged = Steady::now() - next->read_at >= o_.reclaim_idle / 2;
      if (aged) next = still_ours(*next);
      process(*next, !aged);
      bound_streams_if_due(false);
      return true;
    }
    std::vector<Entry> entries;
    std::int64_t reclaimed = 0;
    if (own_.running || (own_.scheduled && Steady::now() >= own_.at)) {
      entries = read_own();
      if (!entries.empty()) {
        Batch batch = parsed(std::move(entries), 0, true);
        process(batch, false, true);
        bound_streams_if_due(false);
        return true;
      }
      end_own_pass();
    }
    if (claim_due()) {
      entries = reclaim();
      reclaimed = static_cast<std::int64_t>(entries.size());
    }
    const bool fresh = entries.empty();  // new entries, not taken over from others
    if (fresh) entries = read_new();
    if (!entries.empty()) {
      Batch batch = parsed(std::move(entries), reclaimed, reclaimed > 0);
      process(batch, fresh);
      bound_streams_if_due(false);
      return true;
    }
    bound_streams_if_due(true);
    if (o_.drain && !claim_running() && !own_.scheduled && nothing_pending()) return false;
    if (o_.drain) {
      // Draining reads do not block: wait here instead of polling Redis in a tight loop
      // while entries pending elsewhere become idle enough to take over.
      pause(std::min<Millis>(o_.block, Millis{100}));
    }
    // Nothing new: a good moment to look for abandoned entries (with streams on several
    // slots, once every slot was waited on, not after every short wait).
    if (next_wait_ % groups_.size() == 0) {
      for (Stream& s : streams_) s.next_claim = Steady::now();
    }
    return true;
  }

  // A command on the group; a group Redis lost (restart without persistence, FLUSHALL) is
  // created again (on every stream that lacks it), and the command repeated.
  redis::Reply group_command(const redis::Args& args) {
    redis::Reply r = redis_.command(args);
    if (hot::is_no_group(r)) {
      create_groups();
      r = redis_.command(args);
    }
    r.checked();
    redis_ok();
    return r;
  }

  // Several commands on the group in one round trip, as group_command does one: only those
  // that found their group gone are sent again (the others' reads were delivered).
  std::vector<redis::Reply> group_pipeline(const std::vector<redis::Args>& commands) {
    std::vector<redis::Reply> replies = redis_.pipeline(commands);
    bool created = false;
    for (std::size_t i = 0; i < replies.size(); ++i) {
      if (!hot::is_no_group(replies[i])) continue;
      if (!created) create_groups();
      created = true;
      replies[i] = redis_.command(commands[i]);
    }
    for (const redis::Reply& r : replies) r.checked();
    redis_ok();
    return replies;
  }

  // The entries of reads of several groups, in the order of the reads.
  std::vector<Entry> entries_of_reads(const std::vector<redis::Args>& reads,
                                      std::vector<bool>* answered = nullptr) {
    if (reads.size() == 1) return entries_of_read(group_command(reads.front()), answered);
    std::vector<Entry> entries;
    for (redis::Reply& r : group_pipeline(reads)) {
      auto more = entries_of_read(std::move(r), answered);
      entries.insert(entries.end(), std::make_move_iterator(more.begin()),
                     std::make_move_iterator(more.end()));
    }
    return entries;
  }

  void create_groups() {
    for (const Stream& s : streams_) {
      if (hot::create_group(redis_, ref(s)) == hot::GroupCreation::existed) continue;
      if (stats_.read > 0) {
        spdlog::warn(
            "ingest: consumer group {} of stream {} was gone (Redis lost its data?); created "
            "again, reading the stream from its start",
            o_.group, s.key);
      } else {
        spdlog::info("ingest: created consumer group {} of stream {}", o_.group, s.key);
      }
    }
  }

  hot::GroupRef ref(const Stream& s) const { return {s.key, o_.group}; }

  std::size_t index_of(const std::string& key) const {
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i].key == key) return i;
    }
    throw redis::ReplyError("ingest: Redis answered for stream '" + key + "', which was not read");
  }

  // The entries of an XREADGROUP reply ([[stream, entries]...]); `answered` collects the
  // indexes of the streams that had some.
  std::vector<Entry> entries_of_read(redis::Reply r, std::vector<bool>* answered = nullptr) {
    std::vector<Entry> entries;
    for (hot::StreamEntries& s : hot::parse_group_read(std::move(r))) {
      const std::size_t i = index_of(s.stream);
      auto more = entries_of(std::move(s.entries), i);
      if (answered != nullptr && !more.empty()) (*answered)[i] = true;
      entries.insert(entries.end(), std::make_move_iterator(more.begin()),
                     std::make_move_iterator(more.end()));
    }
    return entries;
  }

  std::vector<Entry> read_own() {
    if (!own_.running) {
      own_.running = true;
      own_.scheduled = false;
      own_.left = false;
      for (Stream& s : streams_) s.own_cursor = "0";
      // The failing boards retried in this pass: those whose backoff is over now.
      retry_in_pass_.clear();
      const auto now = Steady::now();
      for (const auto& [board, f] : failing_boards_) {
        if (now >= f.next_retry) retry_in_pass_.insert(board);
      }
    }
    // One read per group of streams still in the pass.
    std::vector<redis::Args> reads;
    for (const auto& group : groups_) {
      hot::GroupRead read{o_.group, o_.consumer, o_.batch, std::nullopt, {}};
      for (const std::size_t i : group) {
        const Stream& st = streams_[i];
        if (!st.own_cursor.empty()) read.streams.emplace_back(st.key, st.own_cursor);
      }
      if (read.streams.empty()) continue;
      reads.push_back(hot::read_group(read));
    }
    if (reads.empty()) return {};
    std::vector<bool> answered(streams_.size(), false);
    std::vector<Entry> entries = entries_of_reads(reads, &answered);
    // A stream that had nothing more is done for this pass; the others go on after the last
    // entry read.
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (!answered[i]) streams_[i].own_cursor.clear();
    }
    for (const Entry& e : entries) streams_[e.stream].own_cursor = e.id;
    return entries;
  }

  void end_own_pass() {
    own_.running = false;
    for (Stream& s : streams_) s.own_cursor.clear();
    // A failing board this pass retried and that did not fail again: whatever became of its
    // events (applied, refused, waiting for PostgreSQL, deleted from the stream, or none
    // pending any more), nothing of it is held for its key: back, so that its next retry
    // does not pull every later pass forward.
    const std::set<std::string> retried = std::move(retry_in_pass_);
    retry_in_pass_.clear();
    for (const std::string& board : retried) board_back(board, "nothing of it is held any more");
    if (own_.left) {
      ++own_.passes;
      schedule_own_pass();
      return;
    }
    own_.passes = 0;
    if (postgres_failing_.in_a_row > 0) {
      // Nothing of this consumer waits for the cold tier any more: not known to be needed
      // (a look-up tells again).
      recovered(Backend::postgres, "no event waits for it any more");
    }
  }

  void schedule_own_pass() {
    if (own_.scheduled) return;
    own_.scheduled = true;
    const auto now = Steady::now();
    own_.at = now + o_.retry_pending.delay(own_.passes + 1, unit());
    // No later than a failing board's own retry is due (its backoff decides, not the pass's).
    for (const auto& [board, f] : failing_boards_)
      own_.at = std::min(own_.at, std::max(now, f.next_retry));
  }

  // Entries of this batch stay pending: a pass reads them again, soon.
  void held_pending() {
    if (own_.running) {
      own_.left = true;
    } else {
      schedule_own_pass();
    }
  }

  Millis next_pass_in() const {
    if (!own_.scheduled) return Millis{0};
    return std::max(Millis{0}, std::chrono::duration_cast<Millis>(own_.at - Steady::now()));
  }

  // A scan of some stream's pending list is under way (its cursor is not back at the start).
  bool claim_running() const {
    return std::any_of(streams_.begin(), streams_.end(),
                       [](const Stream& s) { return s.claim_cursor != "0-0"; });
  }

  bool claim_due() const {
    const auto now = Steady::now();
    return std::any_of(streams_.begin(), streams_.end(), [now](const Stream& s) {
      return s.claim_cursor != "0-0" || now >= s.next_claim;
    });
  }

  std::vector<Entry> reclaim() {
    std::vector<Entry> entries;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      Stream& s = streams_[i];
      if (s.claim_cursor == "0-0" && Steady::now() < s.next_claim) continue;
      hot::TakenOver claimed = hot::parse_take_over(group_command(
          hot::take_over(ref(s), {o_.consumer, o_.reclaim_idle, s.claim_cursor, o_.batch})));
      s.claim_cursor = std::move(claimed.cursor);
      if (s.claim_cursor == "0-0") s.next_claim = Steady::now() + o_.reclaim_idle / 2;
      auto more = entries_of(std::move(claimed.entries), i);
      entries.insert(entries.end(), std::make_move_iterator(more.begin()),
                     std::make_move_iterator(more.end()));
    }
    return entries;
  }

  // XREADGROUP of new entries of one group of streams; waiting up to `block` for some
  // (none: not waiting).
  redis::Args read_new_command(const std::vector<std::size_t>& group,
                               std::optional<Millis> block) const {
    hot::GroupRead read{o_.group, o_.consumer, o_.batch, block, {}};
    for (const std::size_t i : group) read.streams.emplace_back(streams_[i].key, ">");
    return hot::read_group(read);
  }

  std::vector<Entry> read_new() {
    // With --drain an empty read ends the run, so it does not wait for new entries.
    if (groups_.size() == 1) {
      return entries_of_read(group_command(
          read_new_command(groups_.front(), o_.drain ? std::nullopt : std::optional(o_.block))));
    }
    std::vector<redis::Args> reads;
    for (const auto& group : groups_) reads.push_back(read_new_command(group, std::nullopt));
    std::vector<Entry> entries = entries_of_reads(reads);
    if (!entries.empty() || o_.drain) return entries;
    const auto& group = groups_[next_wait_++ % groups_.size()];
    return entries_of_read(
        group_command(read_new_command(group, std::min<Millis>(o_.block, kSliceWait))));
  }

  // Sends the read of the batch after `current` on reader_ when that batch will be the next
  // one anyway: new entries (no pass over the pending list or take-over due), one stream,
  // not stopping. Never blocks: with nothing new, the next turn reads (and waits) as usual.
  bool start_read_ahead(bool current_is_fresh) {
    if (!current_is_fresh || streams_.size() != 1 || stop_.load() || own_.running ||
        (own_.scheduled && Steady::now() >= own_.at) || claim_due()) {
      return false;
    }
    try {
      if (reader_broken_ || !reader_.connected()) {
        reader_.reconnect();
        reader_broken_ = false;
      }
      reader_.send({read_new_command(groups_.front(), std::nullopt)});
    } catch (const Error& e) {
      if (e.backend() == Backend::none) throw;
      reader_broken_ = true;
      spdlog::debug("ingest: no read ahead: {}", e.what());
      return false;  // nothing was read: the next turn reads as usual
    }
    reading_ahead_ = true;
    return true;
  }

  // While the current batch applies: the read ahead's entries, parsed and planned. Never
  // throws a server's failure (the current batch's replies are still to be read): the
  // entries stay pending, and a pass over them is scheduled now.
  void finish_read_ahead() {
    if (!reading_ahead_) return;
    reading_ahead_ = false;
    try {
      redis::Reply r = reader_.receive();
      r.checked();
      redis_ok();
      auto next = std::make_unique<Batch>(parsed(entries_of_read(std::move(r)), 0, false));
      if (next->entries.empty()) return;
      next->prepared = boards_.prepare(next->updates, kStatusOnly);
      next_ = std::move(next);
    } catch (const Error& e) {
      if (e.backend() == Backend::none) throw;
      read_ahead_failed(e.what());
    }
  }

  // A batch read ahead that waited long enough (half reclaim_idle) for another consumer
  // to have taken its entries over, perhaps applied and acknowledged them (when the batch
  // before was slow): only the entries nobody touched since this consumer read them are
  // kept. XCLAIM ... JUSTID with a minimum idle time of the batch's age less half
  // reclaim_idle returns exactly those (a take-over, at least reclaim_idle after the read,
  // reset the others' idle time; acknowledged ones are gone) and keeps them here. They go
  // as entries read again (looked up in the in-flight markers); the others are left to
  // whoever has them.
  std::unique_ptr<Batch> still_ours(const Batch& b) {
    const auto age = std::chrono::duration_cast<Millis>(Steady::now() - b.read_at);
    const Stream& s = streams_.at(0);  // read ahead: one stream
    std::vector<std::string> ids;
    ids.reserve(b.entries.size());
    for (const Entry& e : b.entries) ids.push_back(e.id);
    const Millis min_idle = std::max(Millis{0}, age - o_.reclaim_idle / 2);
    std::set<std::string> kept;
    for (std::string& id : hot::parse_claimed_ids(
             group_command(hot::claim_ids(ref(s), o_.consumer, min_idle, ids)))) {
      kept.insert(std::move(id));
    }
    std::vector<Entry> entries;
    for (const Entry& e : b.entries) {
      if (kept.count(e.id) != 0) entries.push_back(e);
    }
    const std::size_t dropped = b.entries.size() - entries.size();
    stats_.taken_over += static_cast<std::int64_t>(dropped);
    if (dropped > 0) {
      spdlog::warn(
          "ingest: {} entries read ahead were taken over by another consumer while the batch "
          "before applied (longer than half of reclaim_idle, {} ms): left to it",
          dropped, o_.reclaim_idle.count());
    }
    return std::make_unique<Batch>(parsed(std::move(entries), 0, true));
  }

  // What a read ahead may have delivered is pending at this consumer: a pass reads it.
  void read_ahead_failed(const std::string& why) {
    reading_ahead_ = false;
    reader_broken_ = true;
    next_.reset();
    spdlog::warn(
        "ingest: reading ahead failed: {}; its entries are read again from the pending list", why);
    own_.running = false;
    for (Stream& s : streams_) s.own_cursor.clear();
    own_.scheduled = true;
    own_.at = Steady::now();
  }

  // No entry pending in the whole group, on any stream: not here, nor at another (perhaps
  // dead) consumer whose entries become ours once idle for reclaim_idle.
  bool nothing_pending() {
    return std::all_of(streams_.begin(), streams_.end(), [this](const Stream& s) {
      return hot::parse_pending_count(group_command(hot::pending_summary(ref(s)))) == 0;
    });
  }

  // The events of `entries`; the malformed ones are dead letters. `redelivered`: the entries
  // were read again from a pending list (this consumer's own, or taken over from another):
  // some may have been applied before.
  Batch parsed(std::vector<Entry> entries, std::int64_t reclaimed, bool redelivered) const {
    Batch b;
    b.entries = std::move(entries);
    b.reclaimed = reclaimed;
    const std::size_t n = b.entries.size();
    b.verdicts.assign(n, Verdict::acknowledge);
    b.reasons.resize(n);
    b.labels.resize(n);
    b.updates.reserve(n);
    b.index.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (b.entries[i].deleted) continue;  // acknowledged: nothing left to apply
      const Stream& from = streams_[b.entries[i].stream];
      StreamEvent event = parse_stream_event(b.entries[i].fields, b.entries[i].id,
                                             {from.key, from.qualifier, redelivered});
      if (!event.update) {
        b.verdicts[i] = Verdict::dead_letter;
        b.reasons[i] = malformed_reason(event.malformed);
        b.labels[i] = std::string(kMalformedLabel);
        continue;
      }
      b.updates.push_back(std::move(*event.update));
      b.index.push_back(i);
    }
    return b;
  }

  // Applies the batch, writes its dead letters, acknowledges what is done and leaves the
  // rest pending. `fresh`: new entries (see start_read_ahead); `own_pass`: read by a pass
  // over this consumer's pending entries (which may retry failing boards).
  void process(Batch& b, bool fresh, bool own_pass = false) {
    const auto started = Steady::now();
    const service::Leaderboards::Counters before = boards_.counters();
    IngestStats batch;
    batch.read = static_cast<std::int64_t>(b.entries.size());
    batch.reclaimed = b.reclaimed;
    const std::vector<Entry>& entries = b.entries;
    std::vector<Verdict>& verdicts = b.verdicts;
    std::vector<std::string>& reasons = b.reasons;
    std::vector<std::string>& labels = b.labels;

    withhold_failing(b, own_pass, batch);
    const auto results = apply_batch(b, start_read_ahead(fresh));
    std::string cold_reason;  // why the cold tier failed, as the service said it
    std::map<std::string, std::string> failed_now;  // board -> its error, this batch
    std::set<std::string> worked_now;               // boards whose calls went through
    for (std::size_t k = 0; k < results.size(); ++k) {
      const std::size_t i = b.index[k];
      switch (results[k].status) {
        case service::UpdateStatus::applied:
          ++batch.applied;
          worked_now.insert(b.updates[k].board);
          break;
        case service::UpdateStatus::duplicate:
          ++batch.duplicates;
          worked_now.insert(b.updates[k].board);
          break;
        case service::UpdateStatus::failed:
          verdicts[i] = Verdict::hold;
          ++batch.board_failed;
          failed_now.emplace(b.updates[k].board, results[k].reason);
          break;
        case service::UpdateStatus::refused:
          verdicts[i] = Verdict::dead_letter;
          reasons[i] = results[k].reason;
          labels[i] = service::refusal_label(results[k].refusal);
          break;
        case service::UpdateStatus::unavailable:
          verdicts[i] = Verdict::hold;
          if (cold_reason.empty()) cold_reason = results[k].reason;
          ++batch.unavailable;
          worked_now.insert(b.updates[k].board);  // its keys answered; PostgreSQL did not
          break;
        case service::UpdateStatus::waiting:
          verdicts[i] = Verdict::hold;
          ++batch.waiting;
          worked_now.insert(b.updates[k].board);
          break;
      }
    }
    for (const auto& [board, error] : failed_now) board_failed(board, error, batch);
    for (const std::string& board : worked_now) {
      if (failed_now.count(board) == 0) board_back(board, "works again");
    }
    write_dead_letters(entries, verdicts, reasons, labels, batch);
    if (acknowledge(entries, verdicts) || batch.applied + batch.duplicates + batch.dead > 0) {
      last_progress_ = Steady::now();
    }
    if (std::find(verdicts.begin(), verdicts.end(), Verdict::hold) != verdicts.end()) {
      held_pending();
    }

    const service::Leaderboards::Counters& after = boards_.counters();
    batch.rehydrated = after.rehydrated - before.rehydrated;
    note_cold_tier(before, after, cold_reason, batch);
    stats_ += batch;
    observer_.batch_done(batch, Steady::now() - started);
    spdlog::debug("ingest: {} read, {} applied, {} dead so far", stats_.read, stats_.applied,
                  stats_.dead);
  }

  // Each dead letter is written and its entry acknowledged in one script per stream (see
  // hot::StreamKeeper::dead_letter): an entry whose dead letter Redis refused (OOM at
  // maxmemory, a key of the wrong type...) stays pending, reported, and is retried; a
  // consumer killed midway leaves no entry both dead-lettered and pending. Each dead-letter
  // stream is capped near dead_maxlen (MAXLEN ~ drops whole radix-tree nodes only, which
  // costs little).
  void write_dead_letters(const std::vector<Entry>& entries, std::vector<Verdict>& verdicts,
                          const std::vector<std::string>& reasons,
                          const std::vector<std::string>& labels, IngestStats& batch) {
    std::int64_t refused = 0;
    for (std::size_t s = 0; s < streams_.size(); ++s) {
      std::vector<hot::DeadLetter> letters;
      std::vector<std::size_t> which;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].stream != s || verdicts[i] != Verdict::dead_letter) continue;
        letters.push_back({entries[i].id, reasons[i], &entries[i].fields});
        which.push_back(i);
      }
      if (letters.empty()) continue;
      const Stream& st = streams_[s];
      const std::vector<std::string> errors =
          keeper_.dead_letter(redis_, {st.key, o_.group}, st.dead, o_.dead_maxlen, letters);
      redis_ok();
      acknowledged_since_bounds_ = true;
      for (std::size_t j = 0; j < errors.size(); ++j) {
        const std::size_t i = which[j];
        if (errors[j].empty()) {
          dead_refused_.erase(st.dead);
          verdicts[i] = Verdict::done;
          ++batch.dead;
          ++batch.dead_by_reason[labels[i]];
          continue;
        }
        verdicts[i] = Verdict::hold;
        dead_refused_[st.dead] = errors[j];
        if (++refused <= kLoggedPerBatch) {
          spdlog::error(
              "ingest: stream entry {} of {} ({}) is left pending: its dead letter could not be "
              "written to {}: {}",
              entries[i].id, st.key, labels[i], st.dead, errors[j]);
        }
      }
    }
    if (refused > kLoggedPerBatch) {
      spdlog::error("ingest: {} more entries of this batch are left pending for the same reason",
                    refused - kLoggedPerBatch);
    }
    batch.dead_letter_failures = refused;
  }

  // One XACK per stream that has something to acknowledge, in one round trip; whether there
  // was something.
  bool acknowledge(const std::vector<Entry>& entries, const std::vector<Verdict>& verdicts) {
    std::vector<redis::Args> acks;
    for (std::size_t s = 0; s < streams_.size(); ++s) {
      std::vector<std::string> ids;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].stream == s && verdicts[i] == Verdict::acknowledge) {
          ids.push_back(entries[i].id);
        }
      }
      if (auto ack = hot::acknowledge(ref(streams_[s]), ids)) acks.push_back(std::move(*ack));
    }
    if (acks.empty()) return false;
    for (const redis::Reply& r : redis_.pipeline(acks)) r.checked();
    redis_ok();
    acknowledged_since_bounds_ = true;
    return true;
  }

  // The events of boards that fail and are not retried now stay pending without being sent:
  // taken out of the batch (held), their members held on their boards (so that another
  // consumer's later events of them wait too). A failing board is retried only by the
  // entries of a pass that decided so at its start (see read_own).
  void withhold_failing(Batch& b, bool own_pass, IngestStats& batch) {
    const auto withheld = [&](const service::Update& u) {
      return failing_boards_.count(u.board) != 0 &&
             !(own_pass && retry_in_pass_.count(u.board) != 0);
    };
    if (std::none_of(b.updates.begin(), b.updates.end(), withheld)) return;
    std::vector<service::Update> kept, held;
    std::vector<std::size_t> index;
    for (std::size_t k = 0; k < b.updates.size(); ++k) {
      if (!withheld(b.updates[k])) {
        kept.push_back(std::move(b.updates[k]));
        index.push_back(b.index[k]);
        continue;
      }
      b.verdicts[b.index[k]] = Verdict::hold;
      ++failing_boards_[b.updates[k].board].waited;
      ++batch.board_failed;
      held.push_back(std::move(b.updates[k]));
    }
    b.updates = std::move(kept);
    b.index = std::move(index);
    b.prepared.reset();  // planned with the updates as they were
    boards_.hold(held);
  }

  std::vector<FailingBoard> failing_list() const {
    std::vector<FailingBoard> out;
    out.reserve(failing_boards_.size());
    for (const auto& [board, f] : failing_boards_) {
      out.push_back({board, f.error, f.since_wall, f.attempts});
    }
    return out;
  }

  // A call of `board` failed with a lasting error: failing (logged when it starts, or when
  // its error changes), retried after its own backoff.
  void board_failed(const std::string& board, const std::string& error, IngestStats& batch) {
    ++batch.board_failures;
    retry_in_pass_.erase(board);  // the rest of its events in this pass stay pending
    auto [it, started] = failing_boards_.try_emplace(board);
    FailingState& f = it->second;
    const auto now = Steady::now();
    ++f.attempts;
    f.next_retry = now + o_.retry_pending.delay(f.attempts, unit());
    if (started) {
      f.since = now;
      f.since_wall = std::chrono::system_clock::now();
      spdlog::error(
          "ingest: board '{}' fails: {}; its events stay pending, in order, and are retried "
          "with backoff; the other boards go on",
          board, error);
    } else if (error != f.error) {
      spdlog::error("ingest: board '{}' still fails, now: {}", board, error);
    }
    const bool changed = started || error != f.error;
    f.error = error;
    if (changed) observer_.failing_boards(failing_list());
  }

  // A call of `board` went through: no longer failing, if it was.
  void board_back(const std::string& board, const char* how) {
    const auto it = failing_boards_.find(board);
    if (it == failing_boards_.end()) return;
    const std::chrono::duration<double> took = Steady::now() - it->second.since;
    spdlog::info(
        "ingest: board '{}' {} after {:.1f} s ({} failed calls; its events were left pending "
        "{} times meanwhile)",
        board, how, took.count(), it->second.attempts, it->second.waited);
    failing_boards_.erase(it);
    retry_in_pass_.erase(board);
    observer_.failing_boards(failing_list());
  }

  // A drain that has not progressed for max_wait.
  bool drain_stuck() const { return o_.drain && Steady::now() - last_progress_ >= o_.max_wait; }

  // A drain gives up: what is left pending, and why, in stats_.stuck (and the log).
  void give_up() {
    std::vector<std::string>& why = stats_.stuck;
    for (const Stream& s : streams_) {
      std::string count;
      try {
        const redis::Reply r = redis_.command(hot::pending_summary(ref(s)));
        count =
            r.is_error() ? "unknown (" + r.str + ")" : std::to_string(hot::parse_pending_count(r));
      } catch (const Error& e) {
        if (e.backend() == Backend::none) throw;
        count = "unknown (" + std::string(e.what()) + ")";
      }
      why.push_back("stream " + s.key + ": " + count + " pending in group " + o_.group);
    }
    for (const auto& [board, f] : failing_boards_) {
      why.push_back("board '" + board + "' fails (" + std::to_string(f.attempts) +
                    " calls in a row): " + f.error);
    }
    for (const auto& [dead, error] : dead_refused_) {
      why.push_back("dead-letter stream " + dead + " refuses dead letters: " + error);
    }
    if (redis_failing_.in_a_row > 0) {
      why.push_back("redis is failing (" + std::to_string(redis_failing_.in_a_row) +
                    " in a row): " + redis_error_);
    }
    if (postgres_failing_.in_a_row > 0) {
      why.push_back("postgresql is failing (" + std::to_string(postgres_failing_.in_a_row) +
                    " in a row): events that need cold rows wait for it");
    }
    spdlog::error("ingest: drain gives up: nothing progressed for {} ms; left pending: {}",
                  o_.max_wait.count(), fmt::join(why, "; "));
  }

  // Points are not used here.
  static constexpr auto kStatusOnly = service::Leaderboards::Detail::status;

  // The batch's updates; `read_ahead`: a read was sent on reader_, finished while the
  // batch's script calls run (one stream only).
  std::vector<service::UpdateResult> apply_batch(Batch& b, bool read_ahead) {
    if (!read_ahead && !b.prepared) return apply_per_stream(b.updates);
    if (!b.prepared) b.prepared = boards_.prepare(b.updates, kStatusOnly);
    service::Leaderboards::Prepared prepared = std::move(*b.prepared);
    b.prepared.reset();
    if (!read_ahead) return boards_.apply(std::move(prepared));
    auto results = boards_.apply(std::move(prepared), [this] { finish_read_ahead(); });
    finish_read_ahead();  // a no-op: the service ran it (kept so a reply is never left unread)
    return results;
  }

  // The updates of each stream in one call (the service takes one stream's entries per
  // board and call; the order between streams is not kept anyway), results in order.
  std::vector<service::UpdateResult> apply_per_stream(const std::vector<service::Update>& updates) {
    if (streams_.size() == 1) return boards_.apply(updates, kStatusOnly);
    std::map<std::string, std::vector<std::size_t>> of_stream;
    for (std::size_t k = 0; k < updates.size(); ++k) of_stream[updates[k].stream].push_back(k);
    std::vector<service::UpdateResult> results(updates.size());
    for (const auto& [stream, ks] : of_stream) {
      std::vector<service::Update> part;
      part.reserve(ks.size());
      for (const std::size_t k : ks) part.push_back(updates[k]);
      auto got = boards_.apply(part, kStatusOnly);
      for (std::size_t j = 0; j < ks.size(); ++j) results[ks[j]] = std::move(got[j]);
    }
    return results;
  }

  void bound_streams_if_due(bool idle) {
    if (Steady::now() >= next_bounds_ || (idle && acknowledged_since_bounds_)) bound_streams();
  }

  // Each stream's bounds, looked at (and trimmed) in one script call per stream.
  void bound_streams() {
    const hot::Trim trim = o_.trim ? hot::Trim::acknowledged : hot::Trim::keep;
    for (Stream& s : streams_) {
      const hot::StreamBounds b = keeper_.bounds(redis_, {s.key, o_.group}, trim);
      redis_ok();
      s.acknowledged_below = b.acknowledged_below;
      if (b.acknowledged_below) {
        stats_.acknowledged_below[s.key] = *b.acknowledged_below;
        prune_once_replicated(s, *b.acknowledged_below);
      } else {
        stats_.acknowledged_below.erase(s.key);
      }
      stats_.trimmed += b.trimmed;
      observer_.stream_bounds(s.key, b);
      spdlog::debug("ingest: stream {}: {} entries, {} trimmed, lag {}, {} pending", s.key,
                    b.length, b.trimmed, b.lag ? std::to_string(*b.lag) : "unknown", b.pending);
    }
    acknowledged_since_bounds_ = false;
    next_bounds_ = Steady::now() + o_.bounds_every;
  }

  // In-flight markers of entries below `bound` may go (see service::Update::order_token) once
  // every replica of the stream's node holds the writes that made it the bound (the
  // acknowledgements, the deliveries, whoever made them): a replica promoted without them
  // would deliver those entries again, and without their markers they would count twice.
  // The node's replication offset read now (after the bounds) covers those writes; the
  // bound is passed on once the replicas' offsets reach it, typically at the next look
  // (replicas report theirs every second), at once without replicas. Not while a replica is
  // cut off or down (markers are kept longer). A new replication history (a failover) or
  // connection (the server restarted, perhaps from an older file) starts over.
  void prune_once_replicated(Stream& s, hot::StreamId bound) {
    hot::Replication r;
    try {
      r = hot::replication_of(redis_, s.key);
    } catch (const redis::ReplyError& e) {
      // A service that refuses INFO or CLUSTER NODES: pruned at once, as before replicas
      // were asked (markers cannot grow without end).
      if (!s.replication_refused) {
        spdlog::warn(
            "ingest: stream {}: its node refuses to say what its replicas hold ({}); in-flight "
            "markers go once entries are acknowledged, so a failover to a lagging replica may "
            "count some events twice",
            s.key, e.what());
      }
      s.replication_refused = true;
      boards_.acknowledged_below(s.key, static_cast<std::int64_t>(bound.ms));
      return;
    }
    s.replication_refused = false;
    if (r.replid != s.replid || redis_.generation() != s.generation) {
      s.unreplicated.clear();
      s.replid = r.replid;
      s.generation = redis_.generation();
    }
    if (s.unreplicated.empty() || s.unreplicated.back().bound != bound) {
      s.unreplicated.push_back({bound, r.offset});
    }
    // Bounded: dropping the oldest only prunes later.
    constexpr std::size_t kMostUnreplicated = 64;
    if (s.unreplicated.size() > kMostUnreplicated) s.unreplicated.pop_front();
    std::optional<hot::StreamId> held;
    while (!s.unreplicated.empty() && r.held_by_all &&
           s.unreplicated.front().offset <= *r.held_by_all) {
      held = s.unreplicated.front().bound;
      s.unreplicated.pop_front();
    }
    if (held) boards_.acknowledged_below(s.key, static_cast<std::int64_t>(held->ms));
    spdlog::debug("ingest: stream {}: bound {} at offset {}; replicas hold {}; {} bounds wait",
                  s.key, bound.text(), r.offset,
                  r.held_by_all ? std::to_string(*r.held_by_all) : "not all",
                  s.unreplicated.size());
  }

  // A clean stop: the streams' bounds once more (a drained stream ends trimmed), then leave
  // each group where nothing is pending at this consumer, so stopped consumers do not pile
  // up in the group. Skipped while Redis fails: a stop must not wait for it.
  void finish() {
    if (redis_failing_.in_a_row > 0 || reconnect_ || !redis_.connected()) {
      spdlog::info("ingest: redis is failing; consumer {} stays in group {}", o_.consumer,
                   o_.group);
      return;
    }
    try {
      bound_streams();
      for (const Stream& s : streams_) leave(s);
    } catch (const Error& e) {
      if (e.backend() == Backend::none) throw;
      spdlog::warn("ingest: could not leave group {} cleanly: {}", o_.group, e.what());
    }
  }

  void leave(const Stream& s) {
    switch (keeper_.leave(redis_, {s.key, o_.group}, o_.consumer)) {
      case hot::Departure::left:
        spdlog::info("ingest: consumer {} left group {} of stream {}", o_.consumer, o_.group,
                     s.key);
        break;
      case hot::Departure::pending:
        spdlog::warn(
            "ingest: consumer {} stays in group {} of stream {}: entries are pending at it (a "
            "consumer takes them over after reclaim_idle)",
            o_.consumer, o_.group, s.key);
        break;
      case hot::Departure::no_group:
        break;
    }
  }

  // A PostgreSQL failure seen by this batch's rehydrations counts until a later look-up
  // succeeds (or nothing waits for one any more).
  void note_cold_tier(const service::Leaderboards::Counters& before,
                      const service::Leaderboards::Counters& after, const std::string& reason,
                      IngestStats& batch) {
    if (after.cold_errors > before.cold_errors) {
      batch.postgres_errors = after.cold_errors - before.cold_errors;
      const std::int64_t n = failure(Backend::postgres);
      spdlog::warn(
          "ingest: postgresql failed ({} in a row): {}; {} events left pending, retried in {} ms",
          n, reason, batch.unavailable, next_pass_in().count());
    } else if (after.cold_lookups > before.cold_lookups && postgres_failing_.in_a_row > 0) {
      recovered(Backend::postgres, "a look-up succeeded");
    }
  }

  Failing& failing(Backend backend) {
    return backend == Backend::redis ? redis_failing_ : postgres_failing_;
  }

  std::int64_t failure(Backend backend) {
    Failing& f = failing(backend);
    if (f.in_a_row++ == 0) f.since = Steady::now();
    observer_.backend_failures(backend, f.in_a_row);
    return f.in_a_row;
  }

  void recovered(Backend backend, const char* how) {
    Failing& f = failing(backend);
    const std::chrono::duration<double> took = Steady::now() - f.since;
    spdlog::info("ingest: {} is back ({}) after {} failures in a row over {:.1f} s",
                 name_of(backend), how, f.in_a_row, took.count());
    f.in_a_row = 0;
    observer_.backend_failures(backend, 0);
  }

  void redis_ok() { observer_.redis_round_trip(); }

  // A server failed this turn: whatever was read and not acknowledged is still pending at
  // this consumer (or, when Redis lost it, gone with everything else), so a pass reads it
  // again, in order, before anything new. Then wait, and (Redis) reconnect.
  void failed(const Error& e) {
    const Backend backend = e.backend();
    const std::int64_t n = failure(backend);
    const Millis wait = o_.reconnect.delay(n, unit());
    spdlog::warn("ingest: {} failed ({} in a row): {}; retrying in {} ms", name_of(backend), n,
                 e.what(), wait.count());
    if (backend == Backend::redis && e.transient()) reconnect_ = true;
    if (backend == Backend::redis) redis_error_ = e.what();
    // A read ahead sent and not read (the failure came first), or read: its entries are
    // pending, for the pass below.
    if (reading_ahead_) reader_broken_ = true;
    reading_ahead_ = false;
    next_.reset();
    own_.running = false;
    for (Stream& s : streams_) s.own_cursor.clear();
    own_.scheduled = true;
    own_.at = Steady::now();
    pause(wait);
  }

  // Sleeps `d`, but returns within ~50 ms of a stop request; the loop counts as turning.
  void pause(Millis d) {
    auto until = Steady::now() + d;
    if (o_.drain) until = std::min(until, last_progress_ + o_.max_wait);
    while (!stop_.load()) {
      observer_.loop_turn();
      const auto now = Steady::now();
      if (now >= until) break;
      std::this_thread::sleep_for(std::min<Steady::duration>(Millis{50}, until - now));
    }
  }

  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
};

}  // namespace

IngestStats ingest(redis::Connection& redis, service::Leaderboards& boards, const IngestOptions& o,
                   const std::atomic<bool>& stop, IngestObserver* observer) {
  IngestObserver none;
  Consumer consumer(redis, boards, o, stop, observer != nullptr ? *observer : none);
  return consumer.run();
}

}  // namespace bk::lifecycle
