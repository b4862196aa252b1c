// Rows 27 and 28 (see bench_closes.h). Two boards get the same members, points and times in
// every round: `ct<round>` with three tiers (by rank, by percent, by points) and its close
// notices (the 10 best inline) to a stream of its own, and `cu<round>` without tiers. Close
// notices cannot be turned off (every archive writes one and tick publishes it), so row 27's
// baseline is the untiered tick less its `closes` phase, which publishes its notice; the notice
// row it writes in the archive's transaction stays in the baseline.
#include "bench_closes.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <utility>

#include "cold/cold_store.h"
#include "config/config.h"
#include "pg_round_trips.h"
#include "redis/connection.h"
#include "redis/url.h"
#include "service/leaderboards.h"
#include "service/reads.h"

namespace bk_bench {

namespace {

constexpr std::int64_t kIdsPerRequest = 100;  // row 14's members?ids= size
constexpr int kFreshReaders = 3;              // first requests counted on new connections
constexpr std::int64_t kHour = 3'600'000;     // ms

// The day's offsets `--now` and the readers' clocks use: the period is open until 24:00.
constexpr std::int64_t kSpillAt = 13 * kHour, kReadAt = 14 * kHour, kArchiveAt = 25 * kHour;

// libpq for the checks and the hand-overs (the statements are the bench's own).
class Sql {
 public:
  explicit Sql(const std::string& url) : conn_(PQconnectdb(url.c_str()), PQfinish) {
    if (PQstatus(conn_.get()) != CONNECTION_OK) fail("cannot connect to PostgreSQL");
    PQsetNoticeProcessor(
        conn_.get(), [](void*, const char*) {}, nullptr);  // DROP SCHEMA ... CASCADE's notes
  }
  // The first column of every row.
  std::vector<std::string> column(const std::string& sql) {
    const std::unique_ptr<PGresult, void (*)(PGresult*)> r(PQexec(conn_.get(), sql.c_str()),
                                                           PQclear);
    const auto status = PQresultStatus(r.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
      fail("SQL failed: " + std::string(PQresultErrorMessage(r.get())) + "in: " + sql);
    std::vector<std::string> out;
    for (int i = 0; i < PQntuples(r.get()); ++i) out.emplace_back(PQgetvalue(r.get(), i, 0));
    return out;
  }
  std::int64_t number(const std::string& sql) {
    const auto values = column(sql);
    if (values.empty()) fail("no value from: " + sql);
    return std::stoll(values.front());
  }

 private:
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn_;
};

// One side of the comparison: a deployment of its own (key prefix and schema).
struct Side {
  bool tiered = false;
  std::string key_prefix, schema, stream, config_path;
  bk::Config config;

  std::string board(int round) const { return (tiered ? "ct" : "cu") + std::to_string(round); }
};

std::string board_yaml(const Side& side, std::int64_t keep) {
  std::string yaml = std::string("  - name: \"") + (side.tiered ? "ct" : "cu") +
                     "*\"\n    periods: [daily]\n    timezone: UTC\n    order: desc\n"
                     "    tie_break: earliest\n    update: increment\n    time_resolution: ms\n"
                     "    min_points: 0\n    max_points: 1000000\n    hot_keep: " +
                     std::to_string(keep) +
                     "\n    display: 10\n    max_clock_skew: 1h\n    archive: {grace: 1m}\n"
                     "    retention: {default: 3650d}\n";
  if (side.tiered) {
    yaml +=
        "    tiers:\n      - {name: champion, top: 1}\n      - {name: gold, top: \"1%\"}\n"
        "      - {name: silver, min_points: 500000}\n    closes_stream: " +
        side.stream + "\n    notice_top: 10\n";
  }
  return yaml;
}

Side make_side(const ClosesSetup& s, bool tiered) {
  Side side;
  side.tiered = tiered;
  side.key_prefix = s.key_prefix + (tiered ? "t" : "u");
  side.schema = side.key_prefix;
  // The untiered board's notices go to the default stream.
  side.stream = side.key_prefix + (tiered ? ":tier_closes" : ":closes");
  const std::string text = "redis:\n  url: " + s.redis_url + "\n  key_prefix: " + side.key_prefix +
                           "\npostgres:\n  url: " + s.pg_url + "\n  schema: " + side.schema +
                           "\nboards:\n" + board_yaml(side, s.keep);
  side.config_path = s.dir + "/closes_" + (tiered ? "tiered" : "plain") + ".yaml";
  std::ofstream(side.config_path) << text;
  side.config = bk::parse_config(text, side.config_path, {});
  return side;
}

// A reader of one side's board as a library user has it: its own cold store connection.
class Reader {
 public:
  Reader(const ClosesSetup& s, const Side& side, bk::redis::Connection& redis,
         const std::string& pg_url, std::string board)
      : cold_(pg_url, side.schema),
        boards_(side.config, redis, bk::Clock(s.day + bk::Millis{kReadAt}), &cold_),
        board_(std::move(board)) {}

  // `boardkeeper rank BOARD daily MEMBER`'s read.
  void rank(const std::string& member) {
    auto& reads = boards_.reads();
    if (!reads.member(reads.locate(board_, "daily", std::nullopt), member))
      fail("rank: " + member + " is not on " + board_);
  }
  // GET .../members?ids=...'s read.
  void ids(const std::vector<std::string>& members) {
    auto& reads = boards_.reads();
    const auto found = reads.members(reads.locate(board_, "daily", std::nullopt), members);
    if (found.size() != members.size()) fail("ids=: members missing on " + board_);
  }

 private:
  bk::cold::ColdStore cold_;
  bk::service::Leaderboards boards_;
  std::string board_;
};

using Request = std::function<void(Reader&, std::int64_t)>;

struct TickFigures {
  double seconds = 0, archive = 0, closes = 0;
};

class ClosesRun {
 public:
  explicit ClosesRun(const ClosesSetup& s)
      : s_(s),
        tiered_(make_side(s, true)),
        plain_(make_side(s, false)),
        sql_(s.pg_url),
        redis_(bk::redis::parse_url(s.redis_url)) {
    if (s.members <= s.keep) {
      fail("rows 27 and 28 need more members (" + fmt_int(s.members) + ") than hot_keep (" +
           fmt_int(s.keep) + "): nothing would spill");
    }
    for (const Side* side : {&tiered_, &plain_}) {
      s_.boardkeeper({"--config", side->config_path, "migrate"},
                     s_.dir + "/migrate_" + side->schema + ".log");
    }
  }
  ClosesRun(const ClosesRun&) = delete;
  ClosesRun& operator=(const ClosesRun&) = delete;
  ~ClosesRun() {
    for (const Side* side : {&tiered_, &plain_}) {
      try {
        sql_.column("DROP SCHEMA IF EXISTS " + side->schema + " CASCADE");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "could not drop schema %s: %s\n", side->schema.c_str(), e.what());
      }
    }
  }

  ClosesFigures run() {
    for (int round = 0; round < s_.rounds; ++round) {
      std::fprintf(stderr, "closes round %d of %d: fill, spill%s, archive\n", round + 1, s_.rounds,
                   round == 0 ? ", reads" : "");
      fill(round);
      spill(round);
      if (round == 0) read(round);
      archive(round);
    }
    f_.archived = s_.members;
    return f_;
  }

 private:
  const ClosesSetup& s_;
  Side tiered_, plain_;
  Sql sql_;
  bk::redis::Connection redis_;
  ClosesFigures f_;
  std::mt19937_64 rng_{20261128};

  std::string at(std::int64_t offset_ms) const {
    return bk::format_rfc3339(s_.day + bk::Millis{offset_ms});
  }
  // "<schema>.<table> WHERE board = <the round's board>"
  static std::string in(const Side& side, const std::string& table, int round) {
    return side.schema + "." + table + " WHERE board = '" + side.board(round) + "'";
  }

  // Both boards get the same members, points and times, through the update path.
  void fill(int round) {
    const bk::Clock clock(s_.day + bk::Millis{12 * kHour});
    bk::service::Leaderboards t(tiered_.config, redis_, clock), u(plain_.config, redis_, clock);
    const auto apply = [](bk::service::Leaderboards& boards,
                          const std::vector<bk::service::Update>& batch) {
      for (const auto& r : boards.apply(batch)) {
        if (r.status != bk::service::UpdateStatus::applied) fail("closes fill: " + r.reason);
      }
    };
    std::vector<bk::service::Update> ts, us;
    for (std::int64_t start = 0; start < s_.members; start += 1000) {
      ts.clear();
      us.clear();
      for (std::int64_t i = start; i < std::min(s_.members, start + 1000); ++i) {
        bk::service::Update e;
        e.member = "player-" + std::to_string(i);
        e.value = static_cast<std::int64_t>(rng_() % 1'000'000);
        e.at = s_.day + bk::Millis{kHour + static_cast<std::int64_t>(rng_() % (8 * kHour))};
        e.board = tiered_.board(round);
        ts.push_back(e);
        e.board = plain_.board(round);
        us.push_back(std::move(e));
      }
      apply(t, ts);
      apply(u, us);
    }
  }

  // `boardkeeper tick` of one side at `now`.
  TickFigures tick(const Side& side, std::int64_t now, const std::string& name) {
    const std::string metrics = s_.dir + "/" + name + ".prom";
    TickFigures t;
    t.seconds = s_.boardkeeper(
        {"--config", side.config_path, "--now", at(now), "tick", "--metrics-file", metrics},
        s_.dir + "/" + name + ".log");
    t.archive = phase_seconds(metrics, "archive");
    t.closes = phase_seconds(metrics, "closes");
    return t;
  }

  static double phase_seconds(const std::string& metrics_path, const std::string& phase) {
    const std::string key = "boardkeeper_tick_phase_duration_seconds{phase=\"" + phase + "\"} ";
    std::ifstream in(metrics_path);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size()));
    }
    fail("no " + phase + " phase in " + metrics_path);
  }

  void spill(int round) {
    for (const Side* side : {&tiered_, &plain_}) {
      tick(*side, kSpillAt, std::string("spill_") + (side->tiered ? "t" : "u"));
      const std::int64_t spilled =
          sql_.number("SELECT count(*) FROM " + in(*side, "cold_members", round));
      if (spilled != s_.members - s_.keep) {
        fail("closes spill moved " + fmt_int(spilled) + " members of " + side->board(round) +
             ", expected " + fmt_int(s_.members - s_.keep));
      }
    }
  }

  // 27: each board archived in turns (the tiered one first in even rounds).
  void archive(int round) {
    const bool tiered_first = round % 2 == 0;
    for (int i = 0; i < 2; ++i) {
      const Side& side = (i == 0) == tiered_first ? tiered_ : plain_;
      const TickFigures t =
          tick(side, kArchiveAt, std::string("archive_") + (side.tiered ? "t" : "u"));
      if (side.tiered) {
        f_.tiered_s.push_back(t.seconds);
        f_.tiered_archive_s.push_back(t.archive);
      } else {
        f_.plain_s.push_back(t.seconds);
        f_.plain_archive_s.push_back(t.archive);
        f_.plain_publish_s.push_back(t.closes);
      }
      check_archive(side, round);
    }
  }

  // The period's history rows, its tiers and its one notice, published.
  void check_archive(const Side& side, int round) {
    const std::string history = in(side, "history", round);
    const std::int64_t rows = sql_.number("SELECT count(*) FROM " + history);
    const std::int64_t tiered_rows =
        sql_.number("SELECT count(*) FROM " + history + " AND tier IS NOT NULL");
    const std::int64_t gold = sql_.number("SELECT count(*) FROM " + history + " AND tier = 'gold'");
    if (rows != s_.members || (side.tiered ? gold == 0 || tiered_rows <= gold : tiered_rows != 0)) {
      fail("closes archive of " + side.board(round) + ": " + fmt_int(rows) + " rows, " +
           fmt_int(tiered_rows) + " with a tier, " + fmt_int(gold) + " gold");
    }
    const auto seq = sql_.column("SELECT seq FROM " + in(side, "period_closes", round));
    if (seq.size() != 1) fail("closes archive of " + side.board(round) + ": no single notice");
    const auto entry = redis_.command({"XRANGE", side.stream, seq[0] + "-1", seq[0] + "-1"});
    if (entry.elements.size() != 1) {
      fail("close notice " + seq[0] + " of " + side.board(round) + " is not in " + side.stream);
    }
  }

  // 28: latencies, tiered and untiered in turns, then the round trips.
  void read(int round) {
    const auto sample = sql_.column(
        "SELECT member FROM " + in(plain_, "cold_members", round) + " ORDER BY md5(member) LIMIT " +
        std::to_string(std::max<std::int64_t>(s_.samples, kIdsPerRequest)));
    const Request rank = [&sample](Reader& r, std::int64_t i) {
      r.rank(sample[static_cast<std::size_t>(i) % sample.size()]);
    };
    const Request ids = [&sample](Reader& r, std::int64_t i) {
      std::vector<std::string> some;
      for (std::int64_t k = 0; k < kIdsPerRequest; ++k)
        some.push_back(sample[static_cast<std::size_t>(i * kIdsPerRequest + k) % sample.size()]);
      r.ids(some);
    };
    const std::int64_t id_requests = std::max<std::int64_t>(5, s_.samples / 20);
    time_requests(round, rank, s_.samples, f_.rank_tiered_ms, f_.rank_plain_ms);
    time_requests(round, ids, id_requests, f_.ids_tiered_ms, f_.ids_plain_ms);
    PgRoundTrips relay(s_.pg_url);
    f_.rank = round_trips(relay, round, rank, std::min<std::int64_t>(s_.samples, 200));
    f_.ids = round_trips(relay, round, ids, id_requests);
  }

  void time_requests(int round, const Request& request, std::int64_t n, std::vector<double>& t_ms,
                     std::vector<double>& u_ms) {
    Reader t(s_, tiered_, redis_, s_.pg_url, tiered_.board(round));
    Reader u(s_, plain_, redis_, s_.pg_url, plain_.board(round));
    request(t, 0);  // each reader's first request (connections, statements) is not timed
    request(u, 0);
    for (std::int64_t i = 1; i <= n; ++i) {
      for (int k = 0; k < 2; ++k) {
        const bool tiered = (k == 0) == (i % 2 == 0);
        const auto t0 = Clock::now();
        request(tiered ? t : u, i);
        (tiered ? t_ms : u_ms).push_back(seconds_since(t0) * 1000);
      }
    }
  }

  RoundTrips round_trips(PgRoundTrips& relay, int round, const Request& request, std::int64_t n) {
    RoundTrips out;
    out.tiered = steady_trips(relay, tiered_, round, request, n);
    out.plain = steady_trips(relay, plain_, round, request, n);
    out.first_tiered = first_trips(relay, tiered_, round, request);
    out.first_plain = first_trips(relay, plain_, round, request);
    return out;
  }

  // Round trips per request of a reader that has read before (n requests after one).
  double steady_trips(PgRoundTrips& relay, const Side& side, int round, const Request& request,
                      std::int64_t n) {
    Reader reader(s_, side, redis_, relay.url(), side.board(round));
    request(reader, 0);
    const std::int64_t before = relay.count();
    for (std::int64_t i = 1; i <= n; ++i) request(reader, i);
    return static_cast<double>(relay.count() - before) / static_cast<double>(n);
  }

  // Round trips of the first request on a new connection (as a `boardkeeper rank` process
  // makes), the median of kFreshReaders.
  double first_trips(PgRoundTrips& relay, const Side& side, int round, const Request& request) {
    std::vector<double> trips;
    for (int i = 0; i < kFreshReaders; ++i) {
      Reader reader(s_, side, redis_, relay.url(), side.board(round));
      const std::int64_t before = relay.count();
      request(reader, i);
      trips.push_back(static_cast<double>(relay.count() - before));
    }
    return median(trips);
  }
};

std::vector<double> minus(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) out.push_back(a[i] - b[i]);
  return out;
}

std::string p50_p99(const std::vector<double>& ms) {
  return fmt("%.2f", percentile(ms, 0.5)) + " / " + fmt("%.2f", percentile(ms, 0.99));
}

std::string trips(double steady, double first) {
  return fmt("%.2f", steady) + " (first " + fmt("%.0f", first) + ")";
}

std::string extra_trips(double steady, double first) {
  return fmt("%+.2f", steady) + " (" + fmt("%+.0f", first) + ")";
}

}  // namespace

ClosesFigures bench_closes(const ClosesSetup& setup) {
  return ClosesRun(setup).run();
}

std::vector<TableRow> closes_rows(const ClosesFigures& f) {
  const std::vector<double> plain_unpublished = minus(f.plain_s, f.plain_publish_s);
  std::string rounds;
  for (std::size_t i = 0; i < f.tiered_s.size(); ++i)
    rounds += (i ? " " : "") + fmt("%.2fx", f.tiered_s[i] / plain_unpublished[i]);
  const double tiered = median(f.tiered_s), plain = median(plain_unpublished);
  std::vector<TableRow> rows;
  rows.push_back({"27 archive " + fmt_int(f.archived) + ", 3 tiers + notices (s)",
                  fmt("%.2f s", tiered), "untiered, notice unpublished " + fmt("%.2f s", plain),
                  fmt("%.2fx", tiered / plain), "<= 1.1x"});
  rows.push_back({"  each round (tiered / untiered)", rounds, "", "", ""});
  rows.push_back({"  info: untiered, its notice published", "",
                  "untiered " + fmt("%.2f s", median(f.plain_s)),
                  fmt("%.2fx", tiered / median(f.plain_s)), ""});
  rows.push_back({"  info: the archive phase alone", fmt("%.2f s", median(f.tiered_archive_s)),
                  "untiered " + fmt("%.2f s", median(f.plain_archive_s)),
                  fmt("%.2fx", median(f.tiered_archive_s) / median(f.plain_archive_s)), ""});
  rows.push_back(
      {"28 rank, spilled, tiered p50 / p99 (ms)", p50_p99(f.rank_tiered_ms),
       "untiered " + p50_p99(f.rank_plain_ms),
       fmt("%.2fx", percentile(f.rank_tiered_ms, 0.5) / percentile(f.rank_plain_ms, 0.5)), ""});
  rows.push_back({"  ids= 100 spilled, p50 / p99 (ms)", p50_p99(f.ids_tiered_ms),
                  "untiered " + p50_p99(f.ids_plain_ms),
                  fmt("%.2fx", percentile(f.ids_tiered_ms, 0.5) / percentile(f.ids_plain_ms, 0.5)),
                  ""});
  rows.push_back(
      {"  PostgreSQL round trips, rank", trips(f.rank.tiered, f.rank.first_tiered),
       "untiered " + trips(f.rank.plain, f.rank.first_plain),
       extra_trips(f.rank.tiered - f.rank.plain, f.rank.first_tiered - f.rank.first_plain),
       "<= +1"});
  rows.push_back({"  PostgreSQL round trips, ids=", trips(f.ids.tiered, f.ids.first_tiered),
                  "untiered " + trips(f.ids.plain, f.ids.first_plain),
                  extra_trips(f.ids.tiered - f.ids.plain, f.ids.first_tiered - f.ids.first_plain),
                  "<= +1"});
  return rows;
}

}  // namespace bk_bench
