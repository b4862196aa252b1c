// Rows 29 and 30 (issue 40, leagues): the same events and the same close on a league board
// and on a plain board, each its own deployment (key prefix and schema), in one run. 29:
// updates through the library (a member's first event takes its seat); 30: `boardkeeper tick`
// closing the period (archive + promotions against the archive alone), with its peak RSS.
#include <algorithm>
#include <memory>
#include <random>

#include "bench.h"
#include "bench_closes.h"
#include "cold/cold_store.h"
#include "config/config.h"
#include "hot/keys.h"
#include "service/leaderboards.h"

namespace bk_bench {
namespace {

constexpr std::size_t kBatch = 1000;
constexpr int kEventsPerMember = 3;

struct Deployment {
  std::string key_prefix;
  std::string config_path;
  bk::Config config;
};

Deployment deployment(const Bench& b, const std::string& suffix, bool league) {
  const std::string key_prefix = b.prefix + suffix;
  std::string board =
      "  - name: lg\n    periods: [daily]\n    timezone: UTC\n    max_points: 1000000\n"
      "    retention: {default: 30d}\n";
  board += league ? "    league:\n      divisions: [bronze, silver, gold, sapphire, ruby]\n"
                    "      cohort_size: 30\n      promote: 7\n      relegate: 5\n"
                  : "    hot_keep: 100000000\n    display: 100\n";
  const std::string text = "redis:\n  url: " + b.redis_url + "\n  key_prefix: " + key_prefix +
                           "\npostgres:\n  url: " + b.pg_url + "\n  schema: " + key_prefix +
                           "\nboards:\n" + board;
  const std::string path = b.write_config(key_prefix, text);
  return {key_prefix, path, bk::parse_config(text, path, {})};
}

// Applies `events` through the library in batches of kBatch; seconds taken.
double apply_seconds(bk::service::Leaderboards& boards,
                     const std::vector<bk::service::Update>& events) {
  const auto t0 = Clock::now();
  std::vector<bk::service::Update> batch;
  for (std::size_t start = 0; start < events.size(); start += kBatch) {
    batch.assign(
        events.begin() + static_cast<std::ptrdiff_t>(start),
        events.begin() + static_cast<std::ptrdiff_t>(std::min(events.size(), start + kBatch)));
    for (const auto& r : boards.apply(batch)) {
      if (r.status != bk::service::UpdateStatus::applied) fail("not applied: " + r.reason);
    }
  }
  return seconds_since(t0);
}

ChildRun tick(const Deployment& d, const std::string& now, const std::string& log) {
  return run_binary({"--config", d.config_path, "--now=" + now, "tick"}, log);
}

// Every member's three events, a third at a time (first events first), members shuffled
// within each third.
std::vector<bk::service::Update> league_events(Bench& b, std::int64_t members) {
  std::vector<bk::service::Update> events;
  events.reserve(static_cast<std::size_t>(members * kEventsPerMember));
  for (int k = 0; k < kEventsPerMember; ++k) {
    for (std::int64_t m = 0; m < members; ++m) {
      events.push_back({"lg", "m" + std::to_string(m), 1 + static_cast<std::int64_t>(b.rng() % 100),
                        b.day + bk::Millis{3'600'000 + k * 3'600'000 + m}, ""});
    }
    const auto from = events.end() - static_cast<std::ptrdiff_t>(members);
    std::shuffle(from, events.end(), b.rng);
  }
  return events;
}

struct Applied {
  double league_s = 0, plain_s = 0;
  std::int64_t league_bytes = 0;  // the league period's live ZSET and seats in Redis
};

// The events on both boards, in turns a third at a time (the machine's mood is shared).
Applied apply_both(Bench& b, const Deployment& league, const Deployment& plain,
                   const std::vector<bk::service::Update>& events, std::int64_t members) {
  bk::redis::Connection redis(bk::redis::parse_url(b.redis_url));
  bk::cold::ColdStore league_cold(b.pg_url, league.key_prefix);
  bk::cold::ColdStore plain_cold(b.pg_url, plain.key_prefix);
  const bk::Clock clock(b.day + bk::Millis{43'200'000});
  bk::service::Leaderboards league_boards(league.config, redis, clock, &league_cold);
  bk::service::Leaderboards plain_boards(plain.config, redis, clock, &plain_cold);
  Applied out;
  for (int k = 0; k < kEventsPerMember; ++k) {
    const std::vector<bk::service::Update> third(
        events.begin() + static_cast<std::ptrdiff_t>(k * members),
        events.begin() + static_cast<std::ptrdiff_t>((k + 1) * members));
    out.plain_s += apply_seconds(plain_boards, third);
    out.league_s += apply_seconds(league_boards, third);
  }
  // What a member costs Redis on a league board: its live entry and its seat (the divisions
  // cache adds one field per member that finished a period).
  const std::string period_id = bk::format_rfc3339(b.day).substr(0, 10);
  const bk::hot::BoardKeys keys(league.key_prefix, "lg");
  for (const std::string& key : {keys.live("daily", period_id), keys.seats("daily", period_id)}) {
    out.league_bytes += redis.command({"MEMORY", "USAGE", key, "SAMPLES", "0"}).checked().as_int();
  }
  return out;
}

}  // namespace

std::vector<TableRow> league_rows(Bench& b) {
  const std::int64_t members = b.opt.league_members;
  const Deployment league = deployment(b, "l", true);
  const Deployment plain = deployment(b, "p", false);
  for (const Deployment* d : {&league, &plain}) {
    run_binary({"--config", d->config_path, "migrate"}, b.dir + "/migrate.log");
  }
  tick(league, b.at(43'200'000), b.dir + "/league_open.log");  // opens the day's cohorts
  const std::vector<bk::service::Update> events = league_events(b, members);
  const Applied a = apply_both(b, league, plain, events, members);
  tick(league, b.at(46'800'000), b.dir + "/league_checkpoint.log");  // as a tick each minute
  const std::string after = b.at(86'400'000 + 900'000);  // past the end and the grace (10m)
  const ChildRun plain_close = tick(plain, after, b.dir + "/plain_close.log");
  const ChildRun league_close = tick(league, after, b.dir + "/league_close.log");
  RawPg pg(b.pg_url);
  if (pg.scalar("SELECT count(*) FROM " + plain.key_prefix + ".history") != members ||
      pg.scalar("SELECT count(*) FROM " + league.key_prefix + ".league_history") != members ||
      pg.scalar("SELECT count(*) FROM " + league.key_prefix + ".league_members") != members) {
    fail("the closes did not archive every member with its league row");
  }
  for (const Deployment* d : {&league, &plain}) {
    pg.exec("DROP SCHEMA IF EXISTS " + d->key_prefix + " CASCADE");  // the keys: Bench's end
  }
  const double n = static_cast<double>(events.size());
  return {
      {"29 league updates, " + fmt_int(members) + " members x3 (events/s)",
       fmt_int(static_cast<std::int64_t>(n / a.league_s)) + "/s",
       "plain board " + fmt_int(static_cast<std::int64_t>(n / a.plain_s)) + "/s",
       fmt("%.2fx", a.plain_s / a.league_s), ">= 0.8x"},
      {"30 league close of " + fmt_int(members) + " members (s)",
       fmt("%.2f s", league_close.seconds), "plain archive " + fmt("%.2f s", plain_close.seconds),
       fmt("%.2fx", league_close.seconds / plain_close.seconds), "<= 1.3x"},
      {"  tick peak RSS, league / plain (MiB)", fmt("%.1f", league_close.peak_rss_mib),
       fmt("%.1f", plain_close.peak_rss_mib), "", "< 64 MiB"},
      {"  info: Redis bytes per league member (live + seat)",
       fmt_int(a.league_bytes / std::max<std::int64_t>(members, 1)), "", "", ""},
  };
}

}  // namespace bk_bench
