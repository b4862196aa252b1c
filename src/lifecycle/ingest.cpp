// The ingest loop: one turn reads entries of every stream (this consumer's own pending ones
// when a retry is due, else abandoned ones of other consumers, else new ones) and processes
// them as one batch; every second or so it looks at the streams' bounds and trims them; a
// failure of Redis or PostgreSQL is waited out with backoff, never fatal. Reading, applying
// and acknowledging are parts in lifecycle/consumer/; this file composes them.
#include "lifecycle/ingest.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include "cold/call_deadline.h"
#include "lifecycle/consumer/acknowledger.h"
#include "lifecycle/consumer/applier.h"
#include "lifecycle/consumer/failing_boards.h"
#include "lifecycle/consumer/reader.h"

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

using consumer::Batch;
using consumer::Entry;
using consumer::Steady;
using consumer::Verdict;

// A turn's PostgreSQL calls (rehydration look-ups, bans, profiles) end within this: a hung
// server (frozen, a stalled disk, a partition without refusals) is then waited out with
// backoff like one that refuses, and a stop is not held up by it. A turn's calls take
// milliseconds when the server answers.
constexpr std::chrono::seconds kTurnDeadline{10};

const char* name_of(Backend backend) {
  return backend == Backend::redis ? "redis" : backend == Backend::postgres ? "postgresql" : "?";
}

// The loop: composes the reader, the applier and the acknowledger, and decides what each turn
// reads (a batch read ahead, a pass over this consumer's pending entries, a take-over, new
// entries), when a pass is due, and how failures of Redis and PostgreSQL are waited out.
class Consumer {
 public:
  Consumer(redis::Connection& redis, service::Leaderboards& boards, const IngestOptions& o,
           const std::atomic<bool>& stop, IngestObserver& observer)
      : redis_(redis),
        boards_(boards),
        o_(o),
        stop_(stop),
        observer_(observer),
        streams_(checked_streams(o)),
        reader_(redis, o, streams_, stats_, observer),
        failing_boards_(o.retry_pending, observer),
        applier_(boards, failing_boards_, streams_.size()),
        acknowledger_(redis, boards, o, streams_, observer) {}

  IngestStats run() {
    // A batch already read ahead is processed before a stop (it is pending at this consumer).
    while (!stop_.load() || next_) {
      observer_.loop_turn();
      if (drain_stuck()) {
        give_up();
        break;
      }
      try {
        const cold::CallDeadline bounded(Steady::now() + kTurnDeadline);
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
  service::Leaderboards& boards_;
  const IngestOptions& o_;
  const std::atomic<bool>& stop_;
  IngestObserver& observer_;
  IngestStats stats_;
  std::mt19937_64 rng_{std::random_device{}()};
  bool reconnect_ = false;  // a transient reply (LOADING, READONLY...): use a new connection
  const std::vector<consumer::StreamNames> streams_;
  consumer::StreamReader reader_;
  consumer::FailingBoards failing_boards_;
  consumer::Applier applier_;
  consumer::Acknowledger acknowledger_;

  // Re-reads of this consumer's own pending entries: a pass reads them oldest first (stream
  // order, which keeps each member's events in order) and runs before any new entry.
  struct OwnPending {
    bool scheduled = false;  // a pass starts at `at`
    Steady::time_point at;
    bool running = false;     // a pass is under way (the reader's cursors tell where)
    bool left = false;        // the running pass left entries pending again
    std::int64_t passes = 0;  // passes in a row that left entries pending
  } own_;

  struct Failing {
    std::int64_t in_a_row = 0;
    Steady::time_point since;
  } redis_failing_, postgres_failing_;
  std::string redis_error_;  // the last Redis failure, while it fails

  // The last time something moved (an entry applied, dead-lettered or acknowledged): a drain
  // gives up after max_wait without.
  Steady::time_point last_progress_ = Steady::now();

  // Read ahead: the next batch of new entries, read (on the reader's second connection) and
  // planned while the current batch's script calls run at the server, so that the client's
  // work overlaps Redis's. Its entries are pending at this consumer from the moment they are
  // read, so a batch read ahead is always the next one processed: before a pass over the
  // pending list (which would meet them too) and before a stop. A failure to read ahead
  // leaves them pending for such a pass, scheduled at once.
  std::unique_ptr<Batch> next_;  // read and planned, not processed yet

  static std::vector<consumer::StreamNames> checked_streams(const IngestOptions& o) {
    if (o.streams.empty()) throw Error("ingest: no stream to consume");
    return consumer::stream_names(o.streams);
  }

  Batch parsed(std::vector<Entry> entries, std::int64_t reclaimed, bool redelivered) const {
    return consumer::parse_batch(std::move(entries), streams_, reclaimed, redelivered);
  }

  // One read and its batch; false when draining found nothing left.
  bool turn() {
    if (reconnect_ || !redis_.connected()) {
      redis_.reconnect();
      reconnect_ = false;
    }
    if (next_) return process_read_ahead();
    if (own_pass_due() && process_own_pending()) return true;
    std::vector<Entry> entries;
    std::int64_t reclaimed = 0;
    if (reader_.claim_due()) {
      entries = reader_.reclaim();
      reclaimed = static_cast<std::int64_t>(entries.size());
    }
    const bool fresh = entries.empty();  // new entries, not taken over from others
    if (fresh) entries = reader_.read_new();
    if (!entries.empty()) {
      Batch batch = parsed(std::move(entries), reclaimed, reclaimed > 0);
      process(batch, fresh);
      acknowledger_.bound_streams_if_due(false, stats_);
      return true;
    }
    return idle();
  }

  bool process_read_ahead() {
    std::unique_ptr<Batch> next = std::move(next_);
    const bool aged = Steady::now() - next->read_at >= o_.reclaim_idle / 2;
    if (aged) next = still_ours(*next);
    process(*next, !aged);
    acknowledger_.bound_streams_if_due(false, stats_);
    return true;
  }

  bool own_pass_due() const { return own_.running || (own_.scheduled && Steady::now() >= own_.at); }

  // The pass's next batch; false once the pass is over.
  bool process_own_pending() {
    std::vector<Entry> entries = read_own();
    if (entries.empty()) {
      end_own_pass();
      return false;
    }
    Batch batch = parsed(std::move(entries), 0, true);
    process(batch, false, true);
    acknowledger_.bound_streams_if_due(false, stats_);
    return true;
  }

  // Nothing was read; false when draining is done.
  bool idle() {
    acknowledger_.bound_streams_if_due(true, stats_);
    if (o_.drain && !reader_.claim_running() && !own_.scheduled && reader_.nothing_pending()) {
      return false;
    }
    if (o_.drain) {
      // Draining reads do not block: wait here instead of polling Redis in a tight loop
      // while entries pending elsewhere become idle enough to take over.
      pause(std::min<Millis>(o_.block, Millis{100}));
    }
    // Nothing new: a good moment to look for abandoned entries.
    reader_.claim_soon();
    return true;
  }

  std::vector<Entry> read_own() {
    if (!own_.running) {
      own_.running = true;
      own_.scheduled = false;
      own_.left = false;
      reader_.start_own_pass();
      // The failing boards retried in this pass: those whose backoff is over now.
      failing_boards_.start_pass(Steady::now());
    }
    return reader_.read_own();
  }

  void end_own_pass() {
    own_.running = false;
    reader_.end_own_pass();
    // A failing board this pass retried and that did not fail again: whatever became of its
    // events (applied, refused, waiting for PostgreSQL, deleted from the stream, or none
    // pending any more), nothing of it is held for its key: back, so that its next retry
    // does not pull every later pass forward.
    failing_boards_.end_pass();
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
    // No later than a failing board's own retry is due (its backoff decides, not the pass's).
    own_.at =
        failing_boards_.first_retry(now, now + o_.retry_pending.delay(own_.passes + 1, unit()));
  }

  // A pass over the pending entries, from their start, right away (what a failure or a lost
  // read ahead left pending is read again, in order, before anything new).
  void restart_own_pass_now() {
    own_.running = false;
    reader_.end_own_pass();
    own_.scheduled = true;
    own_.at = Steady::now();
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

  // Sends the read of the batch after `current` ahead when that batch will be the next one
  // anyway: new entries (no pass over the pending list or take-over due), one stream, not
  // stopping. Never blocks: with nothing new, the next turn reads (and waits) as usual.
  bool start_read_ahead(bool current_is_fresh) {
    if (!current_is_fresh || streams_.size() != 1 || stop_.load() || own_pass_due() ||
        reader_.claim_due()) {
      return false;
    }
    return reader_.send_read_ahead();
  }

  // While the current batch applies: the read ahead's entries, parsed and planned. Never
  // throws a server's failure (the current batch's replies are still to be read): the
  // entries stay pending, and a pass over them is scheduled now.
  void finish_read_ahead() {
    if (!reader_.reading_ahead()) return;
    try {
      auto next = std::make_unique<Batch>(parsed(reader_.receive_read_ahead(), 0, false));
      if (next->entries.empty()) return;
      applier_.prepare(*next);
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
    std::vector<std::string> ids;
    ids.reserve(b.entries.size());
    for (const Entry& e : b.entries) ids.push_back(e.id);
    const std::set<std::string> kept =
        reader_.still_ours(ids, std::max(Millis{0}, age - o_.reclaim_idle / 2));
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
    reader_.read_ahead_failed();
    next_.reset();
    spdlog::warn(
        "ingest: reading ahead failed: {}; its entries are read again from the pending list", why);
    restart_own_pass_now();
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

    applier_.withhold_failing(b, own_pass, batch);
    std::function<void()> while_applying;
    if (start_read_ahead(fresh)) while_applying = [this] { finish_read_ahead(); };
    const consumer::Applied applied = applier_.apply(b, while_applying, batch);
    note_boards(applied, batch);
    settle(b, batch);

    const service::Leaderboards::Counters& after = boards_.counters();
    batch.rehydrated = after.rehydrated - before.rehydrated;
    note_cold_tier(before, after, applied.cold_reason, batch);
    stats_ += batch;
    observer_.batch_done(batch, Steady::now() - started);
    spdlog::debug("ingest: {} read, {} applied, {} dead so far", stats_.read, stats_.applied,
                  stats_.dead);
  }

  // Boards that failed this batch, and those whose calls went through (back, if failing).
  void note_boards(const consumer::Applied& applied, IngestStats& batch) {
    for (const auto& [board, error] : applied.failed_now) {
      ++batch.board_failures;
      failing_boards_.failed(board, error, unit());
    }
    for (const std::string& board : applied.worked_now) {
      if (applied.failed_now.count(board) == 0) failing_boards_.back(board, "works again");
    }
  }

  // Dead letters written, the rest acknowledged or left pending for a pass.
  void settle(Batch& b, IngestStats& batch) {
    acknowledger_.dead_letter({b.entries, b.verdicts, b.reasons, b.labels}, batch);
    if (acknowledger_.acknowledge(b.entries, b.verdicts) ||
        batch.applied + batch.duplicates + batch.dead > 0) {
      last_progress_ = Steady::now();
    }
    if (std::find(b.verdicts.begin(), b.verdicts.end(), Verdict::hold) != b.verdicts.end()) {
      held_pending();
    }
  }

  // A drain that has not progressed for max_wait.
  bool drain_stuck() const { return o_.drain && Steady::now() - last_progress_ >= o_.max_wait; }

  // A drain gives up: what is left pending, and why, in stats_.stuck (and the log).
  void give_up() {
    std::vector<std::string>& why = stats_.stuck;
    for (const consumer::StreamNames& s : streams_) {
      why.push_back("stream " + s.key + ": " + reader_.pending_count(s) + " pending in group " +
                    o_.group);
    }
    failing_boards_.describe(why);
    for (const auto& [dead, error] : acknowledger_.refusing()) {
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
      acknowledger_.bound_streams(stats_);
      acknowledger_.leave_groups();
    } catch (const Error& e) {
      if (e.backend() == Backend::none) throw;
      spdlog::warn("ingest: could not leave group {} cleanly: {}", o_.group, e.what());
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
    reader_.drop_read_ahead();
    next_.reset();
    restart_own_pass_now();
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
