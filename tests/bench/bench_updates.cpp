// Row 1: the update path's throughput (the library's batch form, and its two-step form)
// against a plain client's ZMSCORE + ZADD of the same events, and ZINCRBY x3 for information.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <unordered_map>

#include "bench.h"
#include "cold/cold_store.h"
#include "core/period.h"
#include "core/score_codec.h"
#include "redis/url.h"

namespace bk_bench {
namespace {

using Updates = std::vector<bk::service::Update>;
constexpr std::size_t kBatch = 1000;

// Row 1's baseline: a client doing the script's reads and writes without its atomicity.
// Per batch and period, one ZMSCORE of the batch's members (pipelined over the periods),
// the new scores computed here with the board's own encoding (points plus the value, the
// tie-break time the event's: bk::ScoreCodec, the formula the script computes), then one
// ZADD of them per period (pipelined). No policy, range, closed/spilled or id checks.
class PlainReadWrite {
 public:
  PlainReadWrite(const bk::BoardConfig& board, const std::string& key_prefix,
                 bk::Instant first_event) {
    for (const bk::PeriodSpec& spec : board.periods) {
      const bk::Period period = bk::period_containing(spec, *board.zone, first_event);
      periods_.push_back({key_prefix + ":plain:" + spec.name, period.start, period.end,
                          bk::ScoreCodec(board.layout_for(spec))});
    }
  }

  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& p : periods_) out.push_back(p.key);
    return out;
  }
  const bk::ScoreCodec& codec(std::size_t i) const { return periods_[i].codec; }
  bk::Instant start(std::size_t i) const { return periods_[i].start; }

  void apply(RawRedis& raw, const std::vector<bk::service::Update>& batch) {
    members_.clear();
    index_.clear();
    for (const auto& u : batch) {
      for (const auto& p : periods_) {
        if (*u.at < p.start || *u.at >= p.end) {
          fail("the plain baseline's events must lie in one period of each kind");
        }
      }
      if (index_.emplace(u.member, members_.size()).second) members_.push_back(u.member);
    }
    std::vector<std::string> read;
    for (const auto& p : periods_) {
      read.assign({"ZMSCORE", p.key});
      read.insert(read.end(), members_.begin(), members_.end());
      raw.append(read);
    }
    std::vector<std::vector<std::int64_t>> points(periods_.size());
    for (std::size_t j = 0; j < periods_.size(); ++j) {
      const auto reply = raw.read();
      points[j].resize(members_.size());
      for (std::size_t m = 0; m < members_.size(); ++m) {
        const redisReply* score = reply->element[m];
        points[j][m] =
            score->type == REDIS_REPLY_NIL
                ? 0
                : periods_[j]
                      .codec
                      .decode(static_cast<std::int64_t>(std::strtod(score->str, nullptr)),
                              periods_[j].start)
                      .points;
      }
    }
    // Each member's points after its events of the batch, and the time of its last one.
    std::vector<bk::Instant> last(members_.size());
    std::vector<std::int64_t> added(members_.size(), 0);
    for (const auto& u : batch) {
      const std::size_t m = index_.at(u.member);
      added[m] += u.value;
      last[m] = *u.at;
    }
    std::vector<std::string> write;
    for (std::size_t j = 0; j < periods_.size(); ++j) {
      write.assign({"ZADD", periods_[j].key});
      for (std::size_t m = 0; m < members_.size(); ++m) {
        write.push_back(std::to_string(
            periods_[j].codec.encode(points[j][m] + added[m], last[m], periods_[j].start)));
        write.push_back(members_[m]);
      }
      raw.append(write);
    }
    for (std::size_t j = 0; j < periods_.size(); ++j) raw.read();
  }

 private:
  struct PlainPeriod {
    std::string key;
    bk::Instant start, end;
    bk::ScoreCodec codec;
  };
  std::vector<PlainPeriod> periods_;
  std::vector<std::string> members_;  // of the batch, in order of first appearance
  std::unordered_map<std::string, std::size_t> index_;
};

// `events` in batches of kBatch, in order.
std::vector<Updates> batches_of(const Updates& events) {
  std::vector<Updates> batches;
  for (std::size_t start = 0; start < events.size(); start += kBatch) {
    const std::size_t end = std::min(events.size(), start + kBatch);
    batches.emplace_back(events.begin() + static_cast<std::ptrdiff_t>(start),
                         events.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return batches;
}

// Row 1's baseline: the same reads and writes without atomicity, 1000 events a batch.
double plain_rate(PlainReadWrite& plain, RawRedis& raw, const Updates& events) {
  const auto t0 = Clock::now();
  std::vector<bk::service::Update> plain_batch;
  for (std::size_t start = 0; start < events.size(); start += kBatch) {
    const std::size_t end = std::min(events.size(), start + kBatch);
    plain_batch.assign(events.begin() + static_cast<std::ptrdiff_t>(start),
                       events.begin() + static_cast<std::ptrdiff_t>(end));
    plain.apply(raw, plain_batch);
  }
  return static_cast<double>(events.size()) / seconds_since(t0);
}

// For information: the same events as ZINCRBY into three plain keys, 1000 events a
// pipeline (reads nothing, no tie-break time).
double zincrby_rate(RawRedis& raw, const std::vector<std::string>& raw_keys,
                    const Updates& events) {
  const auto t0 = Clock::now();
  for (std::size_t start = 0; start < events.size(); start += kBatch) {
    const std::size_t end = std::min(events.size(), start + kBatch);
    for (std::size_t i = start; i < end; ++i) {
      const std::string v = std::to_string(events[i].value);
      for (const auto& k : raw_keys) raw.append({"ZINCRBY", k, v, events[i].member});
    }
    for (std::size_t i = start; i < end; ++i) {
      for (int k = 0; k < 3; ++k) raw.read();
    }
  }
  return static_cast<double>(events.size()) / seconds_since(t0);
}

// boardkeeper: the library's batch form, 1000 events a call.
double batch_rate(bk::service::Leaderboards& boards, const Updates& events) {
  const auto t0 = Clock::now();
  std::vector<bk::service::Update> batch;
  for (std::size_t start = 0; start < events.size(); start += kBatch) {
    const std::size_t end = std::min(events.size(), start + kBatch);
    batch.assign(events.begin() + static_cast<std::ptrdiff_t>(start),
                 events.begin() + static_cast<std::ptrdiff_t>(end));
    for (const auto& r : boards.apply(batch)) {
      if (r.status != bk::service::UpdateStatus::applied)
        fail("an update was not applied: " + r.reason);
    }
  }
  return static_cast<double>(events.size()) / seconds_since(t0);
}

// The same events on a second board through the two-step form (docs/library.md): batch
// k+1 is prepared while batch k's script calls run at the server.
double two_step_rate(bk::service::Leaderboards& boards, const Updates& events) {
  std::vector<Updates> batches = batches_of(events);
  for (auto& b : batches) {
    for (auto& u : b) u.board = "speed2";
  }
  const auto t0 = Clock::now();
  auto next = boards.prepare(batches[0]);
  for (std::size_t k = 0; k < batches.size(); ++k) {
    auto current = std::move(next);
    const auto results = boards.apply(std::move(current), [&] {
      if (k + 1 < batches.size()) next = boards.prepare(batches[k + 1]);
    });
    for (const auto& r : results) {
      if (r.status != bk::service::UpdateStatus::applied)
        fail("an update was not applied (two-step): " + r.reason);
    }
  }
  return static_cast<double>(events.size()) / seconds_since(t0);
}

// Check: both sides summed the same points per member in every period.
void check_against_zincrby(bk::service::Leaderboards& boards, RawRedis& raw,
                           const std::vector<std::string>& raw_keys) {
  for (const auto& k : raw_keys) {
    const auto raw_total = raw.command({"ZCARD", k});
    const auto top = boards.reads().top_at(
        {boards.resolve("speed", k.substr(k.rfind(':') + 1), std::nullopt)}, 0, 1);
    if (top.empty() || raw_total->integer == 0) fail("update phase wrote nothing to " + k);
    const auto raw_score = raw.command({"ZSCORE", k, top[0].member});
    if (std::stoll(std::string(raw_score->str, raw_score->len)) != top[0].points) {
      fail("update phase: points of " + top[0].member + " differ from the ZINCRBY baseline");
    }
    const std::string period = k.substr(k.rfind(':') + 1);
    const auto member =
        boards.reads().member({boards.resolve("speed2", period, std::nullopt)}, top[0].member);
    if (!member || member->points != top[0].points) {
      fail("update phase: points of " + top[0].member + " differ between the two forms");
    }
  }
}

// The plain baseline holds the same points and tie-break times as the board.
void check_against_plain(const bk::Config& config, bk::service::Leaderboards& boards, RawRedis& raw,
                         const PlainReadWrite& plain) {
  const auto plain_keys = plain.keys();
  for (std::size_t j = 0; j < plain_keys.size(); ++j) {
    const std::string period = config.board_for("speed")->periods[j].name;
    const auto top = boards.reads().top_at({boards.resolve("speed", period, std::nullopt)}, 0, 1);
    const auto score = raw.command({"ZSCORE", plain_keys[j], top.at(0).member});
    if (score->type != REDIS_REPLY_STRING) fail("the plain baseline lacks " + top[0].member);
    const bk::Decoded d = plain.codec(j).decode(
        static_cast<std::int64_t>(std::strtod(score->str, nullptr)), plain.start(j));
    if (d.points != top[0].points || d.achieved_at != top[0].achieved_at) {
      fail("update phase: " + top[0].member + " differs between the board and the plain " +
           "baseline in " + period);
    }
  }
}

}  // namespace

std::vector<bk::service::Update> Bench::update_events(const std::string& board, std::int64_t n) {
  std::vector<bk::service::Update> events;
  events.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    bk::service::Update u;
    u.board = board;
    u.member = "u" + std::to_string(rng() % static_cast<std::uint64_t>(opt.distinct));
    u.value = static_cast<std::int64_t>(1 + rng() % 9);
    u.at = day + bk::Millis{3'600'000 + i};
    events.push_back(std::move(u));
  }
  return events;
}

Bench::UpdateFigures Bench::bench_updates() {
  const std::string key_prefix = prefix + "u";
  const bk::Config config = bk::parse_config(
      config_text(key_prefix, board_yaml("speed", "[daily, weekly, monthly]", 100'000'000) +
                                  board_yaml("speed2", "[daily, weekly, monthly]", 100'000'000)),
      "bench.yaml", {});
  bk::redis::Connection redis(bk::redis::parse_url(redis_url));
  // As the CLI and ingest run it: with a cold tier, connected on first need (the board's
  // sync with the cold tier, once), so the safety-net checks are part of what is timed.
  std::unique_ptr<bk::cold::ColdStore> cold;
  bk::service::Leaderboards boards(
      config, redis, bk::Clock(day + bk::Millis{43'200'000}), [&]() -> bk::cold::ColdStore& {
        if (!cold) {
          cold = std::make_unique<bk::cold::ColdStore>(pg_url, config.postgres.schema);
          cold->migrate();
        }
        return *cold;
      });
  RawRedis raw(redis_url);
  const std::vector<std::string> raw_keys = {key_prefix + ":raw:daily", key_prefix + ":raw:weekly",
                                             key_prefix + ":raw:monthly"};
  PlainReadWrite plain(*config.board_for("speed"), key_prefix, day + bk::Millis{3'600'000});
  std::vector<double> ours, plain_rates, base, two_step;
  for (int round = 0; round < opt.rounds; ++round) {
    const auto events = update_events("speed", opt.events);
    plain_rates.push_back(plain_rate(plain, raw, events));
    base.push_back(zincrby_rate(raw, raw_keys, events));
    ours.push_back(batch_rate(boards, events));
    two_step.push_back(two_step_rate(boards, events));
  }
  check_against_zincrby(boards, raw, raw_keys);
  check_against_plain(config, boards, raw, plain);
  return {median(ours), median(plain_rates), median(base), median(two_step)};
}

}  // namespace bk_bench
