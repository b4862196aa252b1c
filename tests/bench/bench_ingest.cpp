// Rows 2 and 7-9: `boardkeeper ingest --drain` end to end against a plain consumer group
// reader, and against the peer (redis-rank) on the same uniform and Zipf-skewed events; the
// flatness of our memory. Every run's boards are checked against the events.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "bench.h"
#include "cold/cold_store.h"
#include "redis/url.h"

namespace bk_bench {
namespace {

// Baseline: a plain consumer group reader doing ZINCRBY x3 and XACK, pipelined per read, of
// the `expected` events in `raw_stream`: events per second.
double plain_consumer_rate(RawRedis& raw, const std::string& raw_stream,
                           const std::vector<std::string>& keys, std::int64_t expected) {
  raw.command({"XGROUP", "CREATE", raw_stream, "g", "0"});
  auto t0 = Clock::now();
  std::int64_t consumed = 0;
  for (;;) {
    const auto reply =
        raw.command({"XREADGROUP", "GROUP", "g", "c", "COUNT", "1000", "STREAMS", raw_stream, ">"});
    if (reply->type == REDIS_REPLY_NIL || reply->elements == 0) break;
    const redisReply* entries = reply->element[0]->element[1];
    if (entries->elements == 0) break;
    std::vector<std::string> ack = {"XACK", raw_stream, "g"};
    std::size_t commands = 1;
    for (std::size_t e = 0; e < entries->elements; ++e) {
      const redisReply* entry = entries->element[e];
      ack.emplace_back(entry->element[0]->str, entry->element[0]->len);
      const redisReply* fields = entry->element[1];
      std::string member, value;
      for (std::size_t j = 0; j + 1 < fields->elements; j += 2) {
        const std::string name(fields->element[j]->str, fields->element[j]->len);
        if (name == "member")
          member.assign(fields->element[j + 1]->str, fields->element[j + 1]->len);
        if (name == "value") value.assign(fields->element[j + 1]->str, fields->element[j + 1]->len);
      }
      for (const auto& k : keys) raw.append({"ZINCRBY", k, value, member});
      commands += 3;
    }
    raw.append(ack);
    for (std::size_t i = 0; i < commands; ++i) raw.read();
    consumed += static_cast<std::int64_t>(entries->elements);
  }
  const double rate = static_cast<double>(consumed) / seconds_since(t0);
  if (consumed != expected) fail("the baseline consumer read " + fmt_int(consumed) + " events");
  return rate;
}

}  // namespace

std::vector<Bench::Event> Bench::uniform_events(std::int64_t n, std::int64_t members) const {
  std::mt19937_64 gen(7);
  std::vector<Event> events;
  events.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    Event e;
    e.member = "s" + std::to_string(gen() % static_cast<std::uint64_t>(members));
    e.value = static_cast<std::int64_t>(1 + gen() % 9);
    e.at_ms = bk::to_epoch_ms(day) + 3'600'000 + i;
    events.push_back(std::move(e));
  }
  return events;
}

// Zipf-skewed members: member k (k = 1..members, named "s<k-1>") with probability
// proportional to 1 / k^s, by inversion of the cumulative weights (seed 11; the uniform
// draws are made from the generator's bits, so the sequence is the same everywhere).
std::vector<Bench::Event> Bench::zipf_events(std::int64_t n, std::int64_t members, double s) const {
  std::vector<double> cumulative(static_cast<std::size_t>(members));
  double total = 0;
  for (std::int64_t k = 1; k <= members; ++k) {
    total += std::pow(static_cast<double>(k), -s);
    cumulative[static_cast<std::size_t>(k - 1)] = total;
  }
  std::mt19937_64 gen(11);
  std::vector<Event> events;
  events.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(gen() >> 11) * 0x1.0p-53 * total;
    const auto k = std::min<std::size_t>(
        static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                                 cumulative.begin()),
        cumulative.size() - 1);
    Event e;
    e.member = "s" + std::to_string(k);
    e.value = static_cast<std::int64_t>(1 + gen() % 9);
    e.at_ms = bk::to_epoch_ms(day) + 3'600'000 + i;
    events.push_back(std::move(e));
  }
  return events;
}

std::int64_t Bench::distinct_members(const std::vector<Event>& events) {
  std::unordered_set<std::string> seen;
  for (const auto& e : events) seen.insert(e.member);
  return static_cast<std::int64_t>(seen.size());
}

void Bench::fill_stream(RawRedis& raw, const std::string& stream,
                        const std::vector<Event>& events) {
  constexpr std::size_t kBatch = 1000;
  for (std::size_t start = 0; start < events.size(); start += kBatch) {
    const std::size_t end = std::min(events.size(), start + kBatch);
    for (std::size_t i = start; i < end; ++i) {
      raw.append({"XADD", stream, "*", "board", "stream", "member", events[i].member, "value",
                  std::to_string(events[i].value), "at", std::to_string(events[i].at_ms)});
    }
    for (std::size_t i = start; i < end; ++i) raw.read();
  }
}

std::string Bench::ingest_config(const std::string& key_prefix) const {
  return config_text(key_prefix, board_yaml("stream", "[daily, weekly, monthly]", 100'000'000));
}

Bench::Side Bench::ingest_ours(const std::string& key_prefix, const std::vector<Event>& events) {
  const std::string config_path = write_config(key_prefix, ingest_config(key_prefix));
  RawRedis raw(redis_url);
  RawPg(pg_url).exec("DELETE FROM " + prefix + ".deployment");  // hand the schema over
  const std::string stream = key_prefix + ":events";
  Side side;
  side.events = static_cast<std::int64_t>(events.size());
  const std::int64_t memory0 = used_memory(raw);
  fill_stream(raw, stream, events);
  const double cpu0 = start_server_use(raw);
  const ChildRun run =
      run_binary({"--config", config_path, "--now", at(43'200'000), "ingest", "--drain"},
                 dir + "/ingest-" + key_prefix + ".log");
  side.server = server_use(raw, cpu0);
  side.memory = used_memory(raw) - memory0;
  side.rate = static_cast<double>(events.size()) / run.seconds;
  const auto dead = raw.command({"XLEN", stream + ":dead"});
  if (dead->integer != 0) fail("ingest dead-lettered " + fmt_int(dead->integer) + " events");
  const auto pending = raw.command({"XPENDING", stream, "boardkeeper"});
  if (pending->element[0]->integer != 0) fail("ingest left events pending");
  return side;
}

Bench::Side Bench::run_peer(const std::string& base_key, const std::vector<Event>& events) {
  const std::string file = dir + "/" + base_key + ".events";
  {
    std::ofstream out(file);
    for (const auto& e : events) out << e.member << ' ' << e.value << ' ' << e.at_ms << '\n';
    if (!out) fail("cannot write " + file);
  }
  RawRedis raw(redis_url);
  Side side;
  side.events = static_cast<std::int64_t>(events.size());
  const std::int64_t memory0 = used_memory(raw);
  const double cpu0 = start_server_use(raw);
  const std::string log = dir + "/peer-" + base_key + ".log";
  run_child("node",
            {BK_PEER_SCRIPT, "--modules", opt.peer + "/node_modules", "--redis", redis_url, "--key",
             base_key, "--events", file, "--batch", "500"},
            log, "peer.js", /*utc=*/true);
  side.server = server_use(raw, cpu0);
  side.memory = used_memory(raw) - memory0;
  std::ifstream in(log);
  std::string word, a, b;
  double seconds = 0;
  std::int64_t done = -1;
  while (in >> word) {
    if (word == "events") {
      in >> done;
    } else if (word == "seconds") {
      in >> seconds;
    } else if (word == "key") {
      in >> a >> b;
      side.keys[a] = b;
    }
  }
  if (seconds <= 0 || side.keys.size() != 3) {
    fail("peer.js printed no figures (see its output in " + log + ")");
  }
  if (done != side.events) {
    fail("peer.js applied " + fmt_int(done) + " events of " + fmt_int(side.events));
  }
  side.rate = static_cast<double>(events.size()) / seconds;
  return side;
}

void Bench::check_boards(const std::string& what, const std::string& key_prefix,
                         const std::vector<Event>& events, const Side* peer) {
  std::unordered_map<std::string, std::int64_t> sums;
  for (const auto& e : events) sums[e.member] += e.value;
  std::int64_t best = 0;
  for (const auto& [member, points] : sums) best = std::max(best, points);
  const auto members = static_cast<std::int64_t>(sums.size());

  const bk::Config config = bk::parse_config(ingest_config(key_prefix), "check.yaml", {});
  bk::redis::Connection redis(bk::redis::parse_url(redis_url));
  std::unique_ptr<bk::cold::ColdStore> cold;
  bk::service::Leaderboards boards(
      config, redis, bk::Clock(day + bk::Millis{43'200'000}), [&]() -> bk::cold::ColdStore& {
        if (!cold) {
          cold = std::make_unique<bk::cold::ColdStore>(pg_url, config.postgres.schema);
        }
        return *cold;
      });
  RawRedis raw(redis_url);
  for (const auto& status : boards.reads().periods("stream")) {
    const std::string where = what + ", " + status.period + ": ";
    if (status.current_members != members) {
      fail(where + "boardkeeper has " + fmt_int(status.current_members) + " members, the events " +
           fmt_int(members));
    }
    const auto top =
        boards.reads().top_at({boards.resolve("stream", status.period, std::nullopt)}, 0, 1);
    if (top.empty() || top[0].points != best || sums[top[0].member] != best) {
      fail(where + "boardkeeper's top member does not have the top points of the events (" +
           fmt_int(best) + ")");
    }
    if (peer == nullptr) continue;
    const auto key = peer->keys.find(status.period);
    if (key == peer->keys.end()) fail(where + "the peer has no board");
    const auto card = raw.command({"ZCARD", key->second});
    if (card->integer != members) {
      fail(where + "the peer has " + fmt_int(card->integer) + " members, boardkeeper " +
           fmt_int(members));
    }
    const auto first = raw.command({"ZREVRANGE", key->second, "0", "0", "WITHSCORES"});
    const auto score = raw.command({"ZSCORE", key->second, top[0].member});
    if (first->elements != 2 || score->type != REDIS_REPLY_STRING ||
        std::llround(std::stod(std::string(first->element[1]->str, first->element[1]->len))) !=
            best ||
        std::llround(std::stod(std::string(score->str, score->len))) != top[0].points) {
      fail(where + "the peer's top points differ from boardkeeper's (" + fmt_int(best) + " for " +
           top[0].member + ")");
    }
  }
}

Bench::IngestFigures Bench::bench_ingest() {
  IngestFigures f;
  const auto events = uniform_events(opt.events, opt.ingest_members);

  // Baseline: a plain consumer group reader doing ZINCRBY x3 and XACK, pipelined per read.
  RawRedis raw(redis_url);
  const std::string base_prefix = prefix + "r";
  const std::string raw_stream = base_prefix + ":rawevents";
  fill_stream(raw, raw_stream, events);
  const std::vector<std::string> keys = {base_prefix + ":raw:daily", base_prefix + ":raw:weekly",
                                         base_prefix + ":raw:monthly"};
  f.raw = plain_consumer_rate(raw, raw_stream, keys, opt.events);

  // boardkeeper ingest --drain, the real binary; then the peer on the same events.
  const std::string key_prefix = prefix + "i";
  f.uniform = ingest_ours(key_prefix, events);
  f.ours = f.uniform.rate;
  f.members = distinct_members(events);
  const auto raw_card = raw.command({"ZCARD", keys[0]});
  if (raw_card->integer != f.members) {
    fail("the baseline consumer has " + fmt_int(raw_card->integer) + " members, the events " +
         fmt_int(f.members));
  }
  if (opt.peer.empty()) {
    check_boards("ingest, uniform", key_prefix, events, nullptr);
  } else {
    std::fprintf(stderr, "    the peer (redis-rank), uniform\n");
    f.peer_uniform = run_peer(prefix + "p", events);
    check_boards("ingest vs the peer, uniform", key_prefix, events, &f.peer_uniform);
  }

  ingest_zipf(f);
  // Flatness: our memory for a fixed member count, after --events and after --flat-events
  // uniform events over --flat-members members (few enough that both runs reach them all,
  // so what grows with the events alone shows; over --ingest-members the larger run also
  // reaches more members, and the boards grow with them).
  if (opt.flat_events > 0) ingest_flatness(f);
  return f;
}

// Zipf-skewed members, s = 1.1: ours and the peer.
void Bench::ingest_zipf(IngestFigures& f) {
  std::fprintf(stderr, "    Zipf s = %.1f events\n", kZipfS);
  const auto skewed = zipf_events(opt.events, opt.ingest_members, kZipfS);
  f.zipf = ingest_ours(prefix + "z", skewed);
  f.zipf_members = distinct_members(skewed);
  if (opt.peer.empty()) {
    check_boards("ingest, Zipf", prefix + "z", skewed, nullptr);
  } else {
    f.peer_zipf = run_peer(prefix + "pz", skewed);
    check_boards("ingest vs the peer, Zipf", prefix + "z", skewed, &f.peer_zipf);
  }
}

void Bench::ingest_flatness(IngestFigures& f) {
  std::fprintf(stderr, "    %s and %s uniform events over %s members (memory)\n",
               fmt_int(opt.events).c_str(), fmt_int(opt.flat_events).c_str(),
               fmt_int(opt.flat_members).c_str());
  const auto base = uniform_events(opt.events, opt.flat_members);
  f.flat_base = ingest_ours(prefix + "fb", base);
  f.flat_base_members = distinct_members(base);
  check_boards("ingest, " + fmt_int(opt.events) + " events", prefix + "fb", base, nullptr);
  const auto more = uniform_events(opt.flat_events, opt.flat_members);
  f.flat = ingest_ours(prefix + "f", more);
  f.flat_members = distinct_members(more);
  check_boards("ingest, " + fmt_int(opt.flat_events) + " events", prefix + "f", more, nullptr);
}

}  // namespace bk_bench
