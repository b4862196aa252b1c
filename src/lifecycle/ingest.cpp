// The ingest loop.
#include "lifecycle/ingest.h"

#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include <charconv>

#include "lifecycle/backend.h"
#include "redis/error.h"

namespace bk::lifecycle {
namespace {

struct Entry {
  std::string id;  // stream entry id
  std::vector<std::pair<std::string, std::string>> fields;
};

std::vector<Entry> entries_of(const redis::Reply& list) {
  std::vector<Entry> out;
  for (const redis::Reply& e : list.elements) {
    if (e.type != redis::Reply::Type::array || e.elements.size() < 2) continue;
    Entry entry{e.at(0).as_string(), {}};
    const redis::Reply& f = e.at(1);
    for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
      entry.fields.emplace_back(f.at(i).as_string(), f.at(i + 1).as_string());
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// An event from an entry, or why it is not one.
std::optional<std::string> parse(const Entry& e, service::Update& u) {
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
  // Without an id of its own, the stream entry id makes redelivery harmless.
  if (u.event_id.empty()) u.event_id = "stream:" + e.id;
  u.order_token = e.id;
  return std::nullopt;
}

}  // namespace

IngestStats& IngestStats::operator+=(const IngestStats& other) {
  read += other.read;
  applied += other.applied;
  duplicates += other.duplicates;
  dead += other.dead;
  reclaimed += other.reclaimed;
  unavailable += other.unavailable;
  rehydrated += other.rehydrated;
  postgres_errors += other.postgres_errors;
  for (const auto& [reason, n] : other.dead_by_reason) dead_by_reason[reason] += n;
  return *this;
}

namespace {

IngestStats consume(redis::Connection& redis, service::Leaderboards& boards, const IngestOptions& o,
                    const std::atomic<bool>& stop, IngestObserver& observer) {
  const std::string dead = o.stream + ":dead";
  const redis::Reply created =
      redis.command({"XGROUP", "CREATE", o.stream, o.group, "0", "MKSTREAM"});
  if (created.is_error() && created.str.rfind("BUSYGROUP", 0) != 0) created.checked();
  observer.redis_round_trip(true);
  IngestStats stats;
  std::string claim_cursor = "0-0";
  // Entries left pending by consumers that died are looked for at the start, then every
  // half reclaim_idle and whenever the stream has nothing new: a scan of the pending list
  // per batch would cost more than the batch.
  using Steady = std::chrono::steady_clock;
  auto next_claim = Steady::now();
  while (!stop.load()) {
    observer.loop_turn();
    IngestStats batch;
    std::vector<Entry> entries;
    if (claim_cursor != "0-0" || Steady::now() >= next_claim) {
      const redis::Reply claimed = redis
                                       .command({"XAUTOCLAIM", o.stream, o.group, o.consumer,
                                                 std::to_string(o.reclaim_idle.count()),
                                                 claim_cursor, "COUNT", std::to_string(o.batch)})
                                       .checked();
      observer.redis_round_trip(true);
      claim_cursor = claimed.at(0).as_string();
      entries = entries_of(claimed.at(1));
      batch.reclaimed = static_cast<std::int64_t>(entries.size());
      if (claim_cursor == "0-0") next_claim = Steady::now() + o.reclaim_idle / 2;
    }
    if (entries.empty()) {
      // With --drain an empty read ends the run, so it does not wait for new entries.
      redis::Args read{"XREADGROUP", "GROUP", o.group,
                       o.consumer,   "COUNT", std::to_string(o.batch)};
      if (!o.drain) {
        read.push_back("BLOCK");
        read.push_back(std::to_string(o.block.count()));
      }
      read.insert(read.end(), {"STREAMS", o.stream, ">"});
      const redis::Reply r = redis.command(read);
      if (!r.is_nil()) {
        for (const redis::Reply& s : r.checked().elements) {
          auto more = entries_of(s.at(1));
          entries.insert(entries.end(), more.begin(), more.end());
        }
      }
      observer.redis_round_trip(true);
    }
    if (entries.empty()) {
      if (o.drain && claim_cursor == "0-0") {
        // Done, unless another consumer (perhaps a dead one) still holds entries: those
        // become ours once idle for reclaim_idle.
        const redis::Reply pending = redis.command({"XPENDING", o.stream, o.group}).checked();
        observer.redis_round_trip(true);
        if (pending.at(0).as_int() == 0) break;
      }
      if (o.drain) {
        // Draining reads do not block: wait here instead of polling Redis in a tight loop
        // while another consumer's entries become idle enough to take over.
        std::this_thread::sleep_for(std::min<Millis>(o.block, Millis{100}));
      }
      next_claim = Steady::now();  // nothing new: a good moment to look for abandoned entries
      continue;
    }
    const auto started = std::chrono::steady_clock::now();
    const service::Leaderboards::Counters before = boards.counters();
    batch.read = static_cast<std::int64_t>(entries.size());

    std::vector<service::Update> updates;
    std::vector<std::size_t> index;  // entry of each update
    std::vector<std::string> reasons(entries.size());
    std::vector<const char*> labels(entries.size(), nullptr);  // why each dead one is dead
    for (std::size_t i = 0; i < entries.size(); ++i) {
      service::Update u;
      if (auto why = parse(entries[i], u)) {
        reasons[i] = "malformed event: " + *why;
        labels[i] = "malformed";
        continue;
      }
      updates.push_back(std::move(u));
      index.push_back(i);
    }
    const auto results = boards.apply(updates);
    std::vector<bool> done(entries.size(), true);
    for (std::size_t k = 0; k < results.size(); ++k) {
      switch (results[k].status) {
        case service::UpdateStatus::applied:
          ++batch.applied;
          break;
        case service::UpdateStatus::duplicate:
          ++batch.duplicates;
          break;
        case service::UpdateStatus::refused:
          reasons[index[k]] = results[k].reason;
          labels[index[k]] = service::refusal_label(results[k].refusal);
          break;
        case service::UpdateStatus::unavailable:
        case service::UpdateStatus::waiting:
          done[index[k]] = false;  // stays pending; read again later
          ++batch.unavailable;
          break;
      }
    }
    // Dead letters first, then the acknowledgements: nothing is acknowledged unrecorded.
    std::vector<redis::Args> commands;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (reasons[i].empty()) continue;
      redis::Args add{"XADD", dead, "*", "reason", reasons[i], "stream_id", entries[i].id};
      for (const auto& [k, v] : entries[i].fields) {
        add.push_back(k);
        add.push_back(v);
      }
      commands.push_back(std::move(add));
      ++batch.dead;
      ++batch.dead_by_reason[labels[i]];
    }
    redis::Args ack{"XACK", o.stream, o.group};
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (done[i]) ack.push_back(entries[i].id);
    }
    if (ack.size() > 3) commands.push_back(std::move(ack));
    for (const auto& r : redis.pipeline(commands)) r.checked();
    observer.redis_round_trip(true);
    const service::Leaderboards::Counters& after = boards.counters();
    batch.rehydrated = after.rehydrated - before.rehydrated;
    batch.postgres_errors = after.cold_errors - before.cold_errors;
    stats += batch;
    observer.batch_done(batch, std::chrono::steady_clock::now() - started);
    spdlog::debug("ingest: {} read, {} applied, {} dead so far", stats.read, stats.applied,
                  stats.dead);
  }
  return stats;
}

}  // namespace

IngestStats ingest(redis::Connection& redis, service::Leaderboards& boards, const IngestOptions& o,
                   const std::atomic<bool>& stop, IngestObserver* observer) {
  IngestObserver none;
  IngestObserver& told = observer != nullptr ? *observer : none;
  try {
    return consume(redis, boards, o, stop, told);
  } catch (const std::exception& e) {
    if (backend_of(e) == Backend::redis) told.redis_round_trip(false);
    throw;
  }
}

}  // namespace bk::lifecycle
