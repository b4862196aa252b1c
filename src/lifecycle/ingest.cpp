// The ingest loop: one turn reads entries (this consumer's own pending ones when a retry is
// due, else abandoned ones of other consumers, else new ones) and processes them as one
// batch; a failure of Redis or PostgreSQL is waited out with backoff, never fatal.
#include "lifecycle/ingest.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <random>
#include <thread>

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
  rehydrated += other.rehydrated;
  postgres_errors += other.postgres_errors;
  for (const auto& [reason, n] : other.dead_by_reason) dead_by_reason[reason] += n;
  return *this;
}

namespace {

using Steady = std::chrono::steady_clock;

struct Entry {
  std::string id;  // stream entry id
  std::vector<std::pair<std::string, std::string>> fields;
  bool deleted = false;  // pending, but gone from the stream (XDEL, trimming): nothing to do
};

std::vector<Entry> entries_of(const redis::Reply& list) {
  std::vector<Entry> out;
  for (const redis::Reply& e : list.elements) {
    if (e.type != redis::Reply::Type::array || e.elements.size() < 2) continue;
    Entry entry{e.at(0).as_string(), {}, e.elements[1].is_nil()};
    const redis::Reply& f = e.elements[1];
    for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
      entry.fields.emplace_back(f.at(i).as_string(), f.at(i + 1).as_string());
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// An event from an entry, or why it is not one.
std::optional<std::string> parse(const Entry& e, const std::string& stream, bool redelivered,
                                 service::Update& u) {
  u.stream = stream;
  u.redelivered = redelivered;
  bool has_board = false, has_member = false, has_value = false;
  for (const auto& [k, v] : e.fields) {
    if (k == "board") {
      u.board = v;
      has_board = true;
    } else if (k == "member") {
      u.member = v;
      has_member = true;
    } else if (k == "value") {
      const auto r = std::from_chars(v.data(), v.data() + v.size(), u.value);
      if (v.empty() || r.ec != std::errc{} || r.ptr != v.data() + v.size()) {
        return "value '" + v + "' is not a whole number";
      }
      has_value = true;
    } else if (k == "at") {
      std::int64_t ms = 0;
      const auto r = std::from_chars(v.data(), v.data() + v.size(), ms);
      if (!v.empty() && r.ec == std::errc{} && r.ptr == v.data() + v.size()) {
        u.at = from_epoch_ms(ms);
      } else if (auto t = parse_rfc3339(v)) {
        u.at = t;
      } else {
        return "at '" + v + "' is neither RFC 3339 nor epoch milliseconds";
      }
    } else if (k == "id") {
      u.event_id = v;
    } else {
      return "unknown field '" + k + "'";
    }
  }
  if (!has_board) return std::string("no board field");
  if (!has_member) return std::string("no member field");
  if (!has_value) return std::string("no value field");
  // A later event of the member waits while this one is held: stream order is kept. And
  // the entry leaves an in-flight marker on its board when applied, which makes a
  // redelivery harmless however long the entry stays pending.
  u.order_token = e.id;
  return std::nullopt;
}

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

const char* name_of(Backend backend) {
  return backend == Backend::redis ? "redis" : backend == Backend::postgres ? "postgresql" : "?";
}

// What becomes of each entry of a batch.
enum class Verdict {
  acknowledge,  // applied, a duplicate, gone from the stream, or its dead letter written
  dead_letter,  // refused or malformed: to <stream>:dead first, then acknowledged
  hold,         // stays pending at this consumer and is read again (a retry pass)
};

// Dead letters are logged one by one up to this many per batch, then summed up.
constexpr int kLoggedPerBatch = 10;

class Consumer {
 public:
  Consumer(redis::Connection& redis, service::Leaderboards& boards, const IngestOptions& o,
           const std::atomic<bool>& stop, IngestObserver& observer)
      : redis_(redis),
        boards_(boards),
        o_(o),
        stop_(stop),
        observer_(observer),
        dead_(o.stream + ":dead") {}

  IngestStats run() {
    while (!stop_.load()) {
      observer_.loop_turn();
      try {
        if (!turn()) break;
      } catch (const Error& e) {
        if (e.backend() == Backend::none) throw;  // not a server's failure: a bug or config
        failed(e);
      }
    }
    return stats_;
  }

 private:
  redis::Connection& redis_;
  service::Leaderboards& boards_;
  const IngestOptions& o_;
  const std::atomic<bool>& stop_;
  IngestObserver& observer_;
  const std::string dead_;
  IngestStats stats_;
  std::mt19937_64 rng_{std::random_device{}()};
  bool reconnect_ = false;  // a transient reply (LOADING, READONLY...): use a new connection

  // Entries left pending by consumers that died are looked for at the start, then every
  // half reclaim_idle and whenever the stream has nothing new: a scan of the pending list
  // per batch would cost more than the batch.
  std::string claim_cursor_ = "0-0";
  Steady::time_point next_claim_ = Steady::now();

  // Re-reads of this consumer's own pending entries: a pass reads them oldest first (stream
  // order, which keeps each member's events in order) and runs before any new entry.
  struct OwnPending {
    bool scheduled = false;  // a pass starts at `at`
    Steady::time_point at;
    std::string cursor;       // the last id the running pass read; empty: none running
    bool left = false;        // the running pass left entries pending again
    std::int64_t passes = 0;  // passes in a row that left entries pending
    bool running() const { return !cursor.empty(); }
  } own_;

  struct Failing {
    std::int64_t in_a_row = 0;
    Steady::time_point since;
  } redis_failing_, postgres_failing_;

  // One read and its batch; false when draining found nothing left.
  bool turn() {
    if (reconnect_ || !redis_.connected()) {
      redis_.reconnect();
      reconnect_ = false;
    }
    std::vector<Entry> entries;
    std::int64_t reclaimed = 0;
    if (own_.running() || (own_.scheduled && Steady::now() >= own_.at)) {
      entries = read_own();
      if (!entries.empty()) {
        process(std::move(entries), 0, true);
        return true;
      }
      end_own_pass();
    }
    if (claim_cursor_ != "0-0" || Steady::now() >= next_claim_) {
      entries = reclaim();
      reclaimed = static_cast<std::int64_t>(entries.size());
    }
    if (entries.empty()) entries = read_new();
    if (!entries.empty()) {
      process(std::move(entries), reclaimed, reclaimed > 0);
      return true;
    }
    if (o_.drain && claim_cursor_ == "0-0" && !own_.scheduled && nothing_pending()) return false;
    if (o_.drain) {
      // Draining reads do not block: wait here instead of polling Redis in a tight loop
      // while entries pending elsewhere become idle enough to take over.
      pause(std::min<Millis>(o_.block, Millis{100}));
    }
    next_claim_ = Steady::now();  // nothing new: a good moment to look for abandoned entries
    return true;
  }

  // A command on the group; a group Redis lost (restart without persistence, FLUSHALL) is
  // created again, and the command repeated.
  redis::Reply group_command(const redis::Args& args) {
    redis::Reply r = redis_.command(args);
    if (r.is_error() && starts_with(r.str, "NOGROUP")) {
      create_group();
      r = redis_.command(args);
    }
    r.checked();
    redis_ok();
    return r;
  }

  void create_group() {
    const redis::Reply created =
        redis_.command({"XGROUP", "CREATE", o_.stream, o_.group, "0", "MKSTREAM"});
    if (created.is_error() && !starts_with(created.str, "BUSYGROUP")) created.checked();
    if (stats_.read > 0) {
      spdlog::warn(
          "ingest: consumer group {} of stream {} was gone (Redis lost its data?); created "
          "again, reading the stream from its start",
          o_.group, o_.stream);
    } else {
      spdlog::info("ingest: created consumer group {} of stream {}", o_.group, o_.stream);
    }
  }

  std::vector<Entry> read_own() {
    if (!own_.running()) {
      own_.cursor = "0";
      own_.scheduled = false;
      own_.left = false;
    }
    const redis::Reply r =
        group_command({"XREADGROUP", "GROUP", o_.group, o_.consumer, "COUNT",
                       std::to_string(o_.batch), "STREAMS", o_.stream, own_.cursor});
    std::vector<Entry> entries;
    for (const redis::Reply& s : r.elements) {
      auto more = entries_of(s.at(1));
      entries.insert(entries.end(), more.begin(), more.end());
    }
    if (!entries.empty()) own_.cursor = entries.back().id;
    return entries;
  }

  void end_own_pass() {
    own_.cursor.clear();
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
    own_.at = Steady::now() + o_.retry_pending.delay(own_.passes + 1, unit());
  }

  // Entries of this batch stay pending: a pass reads them again, soon.
  void held_pending() {
    if (own_.running()) {
      own_.left = true;
    } else {
      schedule_own_pass();
    }
  }

  Millis next_pass_in() const {
    if (!own_.scheduled) return Millis{0};
    return std::max(Millis{0}, std::chrono::duration_cast<Millis>(own_.at - Steady::now()));
  }

  std::vector<Entry> reclaim() {
    const redis::Reply claimed = group_command({"XAUTOCLAIM", o_.stream, o_.group, o_.consumer,
                                                std::to_string(o_.reclaim_idle.count()),
                                                claim_cursor_, "COUNT", std::to_string(o_.batch)});
    claim_cursor_ = claimed.at(0).as_string();
    if (claim_cursor_ == "0-0") next_claim_ = Steady::now() + o_.reclaim_idle / 2;
    return entries_of(claimed.at(1));
  }

  std::vector<Entry> read_new() {
    // With --drain an empty read ends the run, so it does not wait for new entries.
    redis::Args read{"XREADGROUP", "GROUP", o_.group,
                     o_.consumer,  "COUNT", std::to_string(o_.batch)};
    if (!o_.drain) {
      read.push_back("BLOCK");
      read.push_back(std::to_string(o_.block.count()));
    }
    read.insert(read.end(), {"STREAMS", o_.stream, ">"});
    const redis::Reply r = group_command(read);
    std::vector<Entry> entries;
    for (const redis::Reply& s : r.elements) {
      auto more = entries_of(s.at(1));
      entries.insert(entries.end(), more.begin(), more.end());
    }
    return entries;
  }

  // No entry pending in the whole group: not here, nor at another (perhaps dead) consumer
  // whose entries become ours once idle for reclaim_idle.
  bool nothing_pending() {
    return group_command({"XPENDING", o_.stream, o_.group}).at(0).as_int() == 0;
  }

  // `redelivered`: the entries were read again from a pending list (this consumer's own, or
  // taken over from another): some may have been applied before.
  void process(std::vector<Entry> entries, std::int64_t reclaimed, bool redelivered) {
    const auto started = Steady::now();
    const service::Leaderboards::Counters before = boards_.counters();
    IngestStats batch;
    batch.read = static_cast<std::int64_t>(entries.size());
    batch.reclaimed = reclaimed;

    std::vector<Verdict> verdicts(entries.size(), Verdict::acknowledge);
    std::vector<std::string> reasons(entries.size());
    std::vector<std::string> labels(entries.size());  // why each dead letter is dead
    std::vector<service::Update> updates;
    std::vector<std::size_t> index;  // entry of each update
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].deleted) continue;  // acknowledged: nothing left to apply
      service::Update u;
      if (auto why = parse(entries[i], o_.stream, redelivered, u)) {
        verdicts[i] = Verdict::dead_letter;
        reasons[i] = "malformed event: " + *why;
        labels[i] = "malformed";
        continue;
      }
      updates.push_back(std::move(u));
      index.push_back(i);
    }
    const auto results = boards_.apply(updates);
    std::string cold_reason;  // why the cold tier failed, as the service said it
    for (std::size_t k = 0; k < results.size(); ++k) {
      const std::size_t i = index[k];
      switch (results[k].status) {
        case service::UpdateStatus::applied:
          ++batch.applied;
          break;
        case service::UpdateStatus::duplicate:
          ++batch.duplicates;
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
          break;
        case service::UpdateStatus::waiting:
          verdicts[i] = Verdict::hold;
          ++batch.waiting;
          break;
      }
    }
    write_dead_letters(entries, verdicts, reasons, labels, batch);
    acknowledge(entries, verdicts);
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

  // Every dead letter is written and its reply checked before anything is acknowledged: an
  // entry whose dead letter Redis refused (OOM at maxmemory, a key of the wrong type...)
  // stays pending, reported, and is retried. A broken connection throws: nothing of the
  // batch is acknowledged then.
  void write_dead_letters(const std::vector<Entry>& entries, std::vector<Verdict>& verdicts,
                          const std::vector<std::string>& reasons,
                          const std::vector<std::string>& labels, IngestStats& batch) {
    std::vector<redis::Args> adds;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (verdicts[i] != Verdict::dead_letter) continue;
      redis::Args add{"XADD", dead_, "*", "reason", reasons[i], "stream_id", entries[i].id};
      for (const auto& [k, v] : entries[i].fields) {
        add.push_back(k);
        add.push_back(v);
      }
      adds.push_back(std::move(add));
      which.push_back(i);
    }
    if (adds.empty()) return;
    const std::vector<redis::Reply> replies = redis_.pipeline(adds);
    redis_ok();
    std::int64_t refused = 0;
    for (std::size_t j = 0; j < replies.size(); ++j) {
      const std::size_t i = which[j];
      if (!replies[j].is_error()) {
        verdicts[i] = Verdict::acknowledge;
        ++batch.dead;
        ++batch.dead_by_reason[labels[i]];
        continue;
      }
      verdicts[i] = Verdict::hold;
      if (++refused <= kLoggedPerBatch) {
        spdlog::error(
            "ingest: stream entry {} of {} ({}) is left pending: its dead letter could not be "
            "written to {}: {}",
            entries[i].id, o_.stream, labels[i], dead_, replies[j].str);
      }
    }
    if (refused > kLoggedPerBatch) {
      spdlog::error("ingest: {} more entries of this batch are left pending for the same reason",
                    refused - kLoggedPerBatch);
    }
    batch.dead_letter_failures = refused;
  }

  void acknowledge(const std::vector<Entry>& entries, const std::vector<Verdict>& verdicts) {
    redis::Args ack{"XACK", o_.stream, o_.group};
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (verdicts[i] == Verdict::acknowledge) ack.push_back(entries[i].id);
    }
    if (ack.size() == 3) return;
    redis_.command(ack).checked();
    redis_ok();
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

  void redis_ok() {
    observer_.redis_round_trip();
    if (redis_failing_.in_a_row > 0) recovered(Backend::redis, "a command succeeded");
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
    own_.cursor.clear();
    own_.scheduled = true;
    own_.at = Steady::now();
    pause(wait);
  }

  // Sleeps `d`, but returns within ~50 ms of a stop request; the loop counts as turning.
  void pause(Millis d) {
    const auto until = Steady::now() + d;
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
