// Dead letters, acknowledgements, the streams' bounds and leaving the group (see
// acknowledger.h).
#include "lifecycle/consumer/acknowledger.h"

#include <spdlog/spdlog.h>

#include "redis/error.h"

namespace bk::lifecycle::consumer {
namespace {

// Dead letters are logged one by one up to this many per batch, then summed up.
constexpr std::int64_t kLoggedPerBatch = 10;

// Bounds waiting for replicas, per stream: dropping the oldest only prunes later.
constexpr std::size_t kMostUnreplicated = 64;

}  // namespace

Acknowledger::Acknowledger(redis::Connection& redis, service::Leaderboards& boards,
                           const IngestOptions& options, const std::vector<StreamNames>& streams,
                           IngestObserver& observer)
    : redis_(redis),
      boards_(boards),
      o_(options),
      streams_(streams),
      observer_(observer),
      replicas_(streams.size()) {}

// Each dead letter is written and its entry acknowledged in one script per stream (see
// hot::StreamKeeper::dead_letter): an entry whose dead letter Redis refused (OOM at
// maxmemory, a key of the wrong type...) stays pending, reported, and is retried; a
// consumer killed midway leaves no entry both dead-lettered and pending. Each dead-letter
// stream is capped near dead_maxlen (MAXLEN ~ drops whole radix-tree nodes only, which
// costs little).
void Acknowledger::dead_letter(const BatchVerdicts& b, IngestStats& batch) {
  std::int64_t refused = 0;
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    refused = dead_letter_stream(s, b, batch, refused);
  }
  if (refused > kLoggedPerBatch) {
    spdlog::error("ingest: {} more entries of this batch are left pending for the same reason",
                  refused - kLoggedPerBatch);
  }
  batch.dead_letter_failures = refused;
}

// The dead letters of stream `s`; the refusals so far in the batch, these included.
std::int64_t Acknowledger::dead_letter_stream(std::size_t s, const BatchVerdicts& b,
                                              IngestStats& batch, std::int64_t refused) {
  std::vector<hot::DeadLetter> letters;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < b.entries.size(); ++i) {
    if (b.entries[i].stream != s || b.verdicts[i] != Verdict::dead_letter) continue;
    letters.push_back({b.entries[i].id, b.reasons[i], &b.entries[i].fields});
    which.push_back(i);
  }
  if (letters.empty()) return refused;
  const StreamNames& st = streams_[s];
  const std::vector<std::string> errors =
      keeper_.dead_letter(redis_, ref(st), st.dead, o_.dead_maxlen, letters);
  observer_.redis_round_trip();
  acknowledged_since_bounds_ = true;
  for (std::size_t j = 0; j < errors.size(); ++j) {
    const std::size_t i = which[j];
    if (errors[j] == hot::kAlreadyAcknowledged) {  // another consumer dead-lettered it
      b.verdicts[i] = Verdict::done;
      continue;
    }
    if (errors[j].empty()) {
      dead_refused_.erase(st.dead);
      b.verdicts[i] = Verdict::done;
      ++batch.dead;
      ++batch.dead_by_reason[b.labels[i]];
      continue;
    }
    b.verdicts[i] = Verdict::hold;
    dead_refused_[st.dead] = errors[j];
    if (++refused <= kLoggedPerBatch) {
      spdlog::error(
          "ingest: stream entry {} of {} ({}) is left pending: its dead letter could not be "
          "written to {}: {}",
          b.entries[i].id, st.key, b.labels[i], st.dead, errors[j]);
    }
  }
  return refused;
}

// One XACK per stream that has something to acknowledge, in one round trip.
bool Acknowledger::acknowledge(const std::vector<Entry>& entries,
                               const std::vector<Verdict>& verdicts) {
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
  observer_.redis_round_trip();
  acknowledged_since_bounds_ = true;
  return true;
}

void Acknowledger::bound_streams_if_due(bool idle, IngestStats& totals) {
  if (Steady::now() >= next_bounds_ || (idle && acknowledged_since_bounds_)) {
    bound_streams(totals);
  }
}

// Each stream's bounds, looked at (and trimmed) in one script call per stream.
void Acknowledger::bound_streams(IngestStats& totals) {
  const hot::Trim trim = o_.trim ? hot::Trim::acknowledged : hot::Trim::keep;
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    const StreamNames& s = streams_[i];
    const hot::StreamBounds b = keeper_.bounds(redis_, ref(s), trim);
    observer_.redis_round_trip();
    if (b.acknowledged_below) {
      totals.acknowledged_below[s.key] = *b.acknowledged_below;
      prune_once_replicated(i, *b.acknowledged_below);
    } else {
      totals.acknowledged_below.erase(s.key);
    }
    totals.trimmed += b.trimmed;
    observer_.stream_bounds(s.key, b);
    spdlog::debug("ingest: stream {}: {} entries, {} trimmed, lag {}, {} pending", s.key, b.length,
                  b.trimmed, b.lag ? std::to_string(*b.lag) : "unknown", b.pending);
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
void Acknowledger::prune_once_replicated(std::size_t i, hot::StreamId bound) {
  const StreamNames& s = streams_[i];
  Replicas& rs = replicas_[i];
  hot::Replication r;
  try {
    r = hot::replication_of(redis_, s.key);
  } catch (const redis::ReplyError& e) {
    replication_refused(i, bound, e.what());
    return;
  }
  rs.refused = false;
  if (r.replid != rs.replid || redis_.generation() != rs.generation) {
    rs.unreplicated.clear();
    rs.replid = r.replid;
    rs.generation = redis_.generation();
  }
  if (rs.unreplicated.empty() || rs.unreplicated.back().bound != bound) {
    rs.unreplicated.push_back({bound, r.offset});
  }
  if (rs.unreplicated.size() > kMostUnreplicated) rs.unreplicated.pop_front();
  std::optional<hot::StreamId> held;
  while (!rs.unreplicated.empty() && r.held_by_all &&
         rs.unreplicated.front().offset <= *r.held_by_all) {
    held = rs.unreplicated.front().bound;
    rs.unreplicated.pop_front();
  }
  if (held) boards_.acknowledged_below(s.key, static_cast<std::int64_t>(held->ms));
  spdlog::debug("ingest: stream {}: bound {} at offset {}; replicas hold {}; {} bounds wait", s.key,
                bound.text(), r.offset, r.held_by_all ? std::to_string(*r.held_by_all) : "not all",
                rs.unreplicated.size());
}

// A service that refuses INFO or CLUSTER NODES: pruned at once, as before replicas were
// asked (markers cannot grow without end).
void Acknowledger::replication_refused(std::size_t i, hot::StreamId bound, const char* why) {
  const StreamNames& s = streams_[i];
  if (!replicas_[i].refused) {
    spdlog::warn(
        "ingest: stream {}: its node refuses to say what its replicas hold ({}); in-flight "
        "markers go once entries are acknowledged, so a failover to a lagging replica may "
        "count some events twice",
        s.key, why);
  }
  replicas_[i].refused = true;
  boards_.acknowledged_below(s.key, static_cast<std::int64_t>(bound.ms));
}

void Acknowledger::leave_groups() {
  for (const StreamNames& s : streams_) leave(s);
}

void Acknowledger::leave(const StreamNames& s) {
  switch (keeper_.leave(redis_, ref(s), o_.consumer)) {
    case hot::Departure::left:
      spdlog::info("ingest: consumer {} left group {} of stream {}", o_.consumer, o_.group, s.key);
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

}  // namespace bk::lifecycle::consumer
