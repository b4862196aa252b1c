// boardkeeper's benchmarks. Every figure is printed beside a raw baseline measured in the
// same run against the same servers (plain pipelined ZINCRBY, a plain consumer, plain COPY),
// because these machines are noisy: the ratio is the result, the absolute numbers are
// context. Each phase also checks that the work was really done (row counts, dead letters),
// so a broken build cannot print a fast table.
//
//   tests/bench/run.sh                   the full run (1,000,000 members)
//   bk_bench --members 20000 --events 20000 --samples 200      a small run (the ctest smoke)
//
// BK_TEST_REDIS_URL and BK_TEST_POSTGRES_URL name the servers; tests/bench/run.sh starts
// throwaway ones. Spill and archive run the real binary (`boardkeeper tick`) as a child
// process, so their time and peak RSS are the product's own.
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "config/config.h"
#include "core/time.h"
#include "redis/connection.h"
#include "redis/url.h"
#include "service/leaderboards.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::int64_t members = 1'000'000;  // spilled (and archived) members of the big board
  std::int64_t keep = 10'000;        // hot_keep
  std::int64_t events = 300'000;     // events per update / ingest round
  std::int64_t distinct = 50'000;    // distinct members the update events hit
  std::int64_t samples = 2'000;      // rehydrating updates timed one by one
  int rounds = 3;                    // update rounds (alternating with the baseline)
  std::int64_t chunk = 0;            // --chunk for tick (0: the product's default)
  bool updates_only = false;         // --updates-only: phase 1 alone (for profiling)
};

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string env_or_fail(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0')
    fail(std::string(name) + " is not set (tests/bench/run.sh sets it)");
  return v;
}

std::string fmt_int(std::int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return v[std::min(i, v.size() - 1)];
}

// ---- raw Redis (the baselines use hiredis directly: no boardkeeper code in the way) ------

struct RawRedis {
  explicit RawRedis(const std::string& url) {
    const bk::redis::Options o = bk::redis::parse_url(url);
    ctx = redisConnect(o.host.c_str(), o.port);
    if (ctx == nullptr || ctx->err != 0) fail("cannot connect to Redis at " + url);
    if (o.db != 0) command({"SELECT", std::to_string(o.db)});
  }
  ~RawRedis() { redisFree(ctx); }
  RawRedis(const RawRedis&) = delete;
  RawRedis& operator=(const RawRedis&) = delete;

  void append(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    redisAppendCommandArgv(ctx, static_cast<int>(args.size()), argv.data(), lens.data());
  }
  // Reads one reply; fails on an error reply.
  std::unique_ptr<redisReply, void (*)(void*)> read() {
    void* r = nullptr;
    if (redisGetReply(ctx, &r) != REDIS_OK || r == nullptr) fail("Redis connection failed");
    auto* reply = static_cast<redisReply*>(r);
    if (reply->type == REDIS_REPLY_ERROR) {
      const std::string msg(reply->str, reply->len);
      freeReplyObject(reply);
      fail("Redis error: " + msg);
    }
    return {reply, freeReplyObject};
  }
  std::unique_ptr<redisReply, void (*)(void*)> command(const std::vector<std::string>& args) {
    append(args);
    return read();
  }

  redisContext* ctx = nullptr;
};

// ---- raw PostgreSQL (plain COPY through libpq) ------------------------------------------

struct RawPg {
  explicit RawPg(const std::string& url) : conn(PQconnectdb(url.c_str())) {
    if (PQstatus(conn) != CONNECTION_OK) fail("cannot connect to PostgreSQL");
    PQsetNoticeProcessor(
        conn, [](void*, const char*) {}, nullptr);  // DROP ... CASCADE notes
  }
  ~RawPg() { PQfinish(conn); }
  RawPg(const RawPg&) = delete;
  RawPg& operator=(const RawPg&) = delete;

  std::vector<std::vector<std::string>> exec(const std::string& sql) {
    PGresult* r = PQexec(conn, sql.c_str());
    const auto st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      const std::string msg = PQresultErrorMessage(r);
      PQclear(r);
      fail("SQL failed: " + msg + "in: " + sql);
    }
    std::vector<std::vector<std::string>> rows;
    for (int i = 0; i < PQntuples(r); ++i) {
      std::vector<std::string> row;
      row.reserve(static_cast<std::size_t>(PQnfields(r)));
      for (int j = 0; j < PQnfields(r); ++j) row.emplace_back(PQgetvalue(r, i, j));
      rows.push_back(std::move(row));
    }
    PQclear(r);
    return rows;
  }
  std::int64_t scalar(const std::string& sql) {
    const auto rows = exec(sql);
    if (rows.empty() || rows[0].empty()) fail("no value from: " + sql);
    return std::stoll(rows[0][0]);
  }

  // COPY (query) TO STDOUT, into memory.
  std::string copy_out(const std::string& query) {
    PGresult* r = PQexec(conn, ("COPY (" + query + ") TO STDOUT").c_str());
    if (PQresultStatus(r) != PGRES_COPY_OUT)
      fail(std::string("COPY TO failed: ") + PQresultErrorMessage(r));
    PQclear(r);
    std::string out;
    char* buf = nullptr;
    int n = 0;
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      PQfreemem(buf);
    }
    r = PQgetResult(conn);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
      fail(std::string("COPY TO failed: ") + PQresultErrorMessage(r));
    PQclear(r);
    return out;
  }

  // COPY table FROM STDIN of text-format data, in 256 KiB messages; returns seconds.
  double copy_in(const std::string& table, const std::string& data) {
    const auto t0 = Clock::now();
    PGresult* r = PQexec(conn, ("COPY " + table + " FROM STDIN").c_str());
    if (PQresultStatus(r) != PGRES_COPY_IN)
      fail(std::string("COPY FROM failed: ") + PQresultErrorMessage(r));
    PQclear(r);
    constexpr std::size_t kChunk = std::size_t{256} * 1024;
    for (std::size_t at = 0; at < data.size(); at += kChunk) {
      const std::size_t n = std::min(kChunk, data.size() - at);
      if (PQputCopyData(conn, data.data() + at, static_cast<int>(n)) != 1) fail("COPY data failed");
    }
    if (PQputCopyEnd(conn, nullptr) != 1) fail("COPY end failed");
    r = PQgetResult(conn);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
      fail(std::string("COPY FROM failed: ") + PQresultErrorMessage(r));
    PQclear(r);
    return seconds_since(t0);
  }

  PGconn* conn;
};

// ---- the real binary as a child process -------------------------------------------------

struct ChildRun {
  double seconds = 0;
  double peak_rss_mib = 0;
};

ChildRun run_binary(const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<char*> argv;
  std::string binary = BK_BINARY;
  argv.push_back(binary.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid) fail("wait4 failed");
  ChildRun out;
  out.seconds = seconds_since(t0);
  out.peak_rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream log(log_path);
    std::stringstream text;
    text << log.rdbuf();
    std::string command;
    for (const auto& a : args) command += " " + a;
    fail("boardkeeper" + command + " failed (status " + std::to_string(status) + "):\n" +
         text.str());
  }
  return out;
}

// ---- the scenario -----------------------------------------------------------------------

struct Bench {
  Options opt;
  std::string redis_url = env_or_fail("BK_TEST_REDIS_URL");
  std::string pg_url = env_or_fail("BK_TEST_POSTGRES_URL");
  std::string prefix = "bench" + std::to_string(getpid());
  std::string dir;
  // The day every board period lies in: two days ago (UTC), so that `--now` can close it
  // while Redis (which expires by real time) keeps the keys for the retention.
  bk::Instant day;
  std::mt19937_64 rng{20261122};

  Bench() {
    char tmpl[] = "/tmp/bk_bench.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) fail("mkdtemp failed");
    dir = tmpl;
    const auto now_ms = bk::to_epoch_ms(
        bk::Instant(std::chrono::time_point_cast<bk::Millis>(std::chrono::system_clock::now())));
    const std::int64_t day_ms = 86'400'000;
    day = bk::from_epoch_ms((now_ms / day_ms - 2) * day_ms);
  }

  std::string at(std::int64_t offset_ms) const {
    return bk::format_rfc3339(day + bk::Millis{offset_ms});
  }

  std::string config_text(const std::string& key_prefix, const std::string& boards) const {
    return "redis:\n  url: " + redis_url + "\n  key_prefix: " + key_prefix +
           "\npostgres:\n  url: " + pg_url + "\n  schema: " + prefix + "\nboards:\n" + boards;
  }
  std::string write_config(const std::string& name, const std::string& text) const {
    std::string path = dir + "/" + name + ".yaml";
    std::ofstream(path) << text;
    return path;
  }
  static std::string board_yaml(const std::string& name, const std::string& periods,
                                std::int64_t keep) {
    return "  - name: " + name + "\n    periods: " + periods +
           "\n    timezone: UTC\n    order: desc\n    tie_break: earliest\n    update: increment\n"
           "    time_resolution: ms\n    min_points: 0\n    max_points: 1000000\n    hot_keep: " +
           std::to_string(keep) +
           "\n    display: 10\n    max_clock_skew: 1h\n    archive:\n      grace: 1m\n    "
           "retention:\n      default: 3650d\n";
  }

  // ---- 1. update throughput ----
  std::vector<bk::service::Update> update_events(const std::string& board, std::int64_t n) {
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

  struct UpdateFigures {
    double ours = 0, raw = 0;  // events per second, medians of the rounds
  };

  UpdateFigures bench_updates() {
    const std::string key_prefix = prefix + "u";
    const bk::Config config = bk::parse_config(
        config_text(key_prefix, board_yaml("speed", "[daily, weekly, monthly]", 100'000'000)),
        "bench.yaml", {});
    bk::redis::Connection redis(bk::redis::parse_url(redis_url));
    // As the CLI and ingest run it: with a cold tier, connected on first need (the board's
    // sync with the cold tier, once), so the safety-net checks are part of what is timed.
    std::unique_ptr<bk::cold::ColdStore> cold;
    bk::service::Leaderboards boards(config, redis, bk::Clock(day + bk::Millis{43'200'000}),
                                     [&]() -> bk::cold::ColdStore& {
                                       if (!cold) {
                                         cold = std::make_unique<bk::cold::ColdStore>(
                                             pg_url, config.postgres.schema);
                                         cold->migrate();
                                       }
                                       return *cold;
                                     });
    RawRedis raw(redis_url);
    const std::vector<std::string> raw_keys = {
        key_prefix + ":raw:daily", key_prefix + ":raw:weekly", key_prefix + ":raw:monthly"};
    constexpr std::size_t kBatch = 1000;
    std::vector<double> ours, base;
    for (int round = 0; round < opt.rounds; ++round) {
      const auto events = update_events("speed", opt.events);
      // Baseline: the same events as ZINCRBY into three plain keys, 1000 events a pipeline.
      auto t0 = Clock::now();
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
      base.push_back(static_cast<double>(events.size()) / seconds_since(t0));
      // boardkeeper: the library's batch form, 1000 events a call.
      t0 = Clock::now();
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
      ours.push_back(static_cast<double>(events.size()) / seconds_since(t0));
    }
    // Check: both sides summed the same points per member in every period.
    for (const auto& k : raw_keys) {
      const auto raw_total = raw.command({"ZCARD", k});
      const auto top =
          boards.top(boards.resolve("speed", k.substr(k.rfind(':') + 1), std::nullopt), 0, 1);
      if (top.empty() || raw_total->integer == 0) fail("update phase wrote nothing to " + k);
      const auto raw_score = raw.command({"ZSCORE", k, top[0].member});
      if (std::stoll(std::string(raw_score->str, raw_score->len)) != top[0].points) {
        fail("update phase: points of " + top[0].member + " differ from the ZINCRBY baseline");
      }
    }
    return {median(ours), median(base)};
  }

  // ---- 2. ingest end to end ----
  void fill_stream(RawRedis& raw, const std::string& stream, std::int64_t n) {
    std::mt19937_64 gen(7);  // the same events in both streams
    constexpr std::int64_t kBatch = 1000;
    for (std::int64_t start = 0; start < n; start += kBatch) {
      const std::int64_t end = std::min(n, start + kBatch);
      for (std::int64_t i = start; i < end; ++i) {
        raw.append({"XADD", stream, "*", "board", "stream", "member",
                    "s" + std::to_string(gen() % static_cast<std::uint64_t>(opt.distinct)), "value",
                    std::to_string(1 + gen() % 9), "at",
                    std::to_string(bk::to_epoch_ms(day) + 3'600'000 + i)});
      }
      for (std::int64_t i = start; i < end; ++i) raw.read();
    }
  }

  struct IngestFigures {
    double ours = 0, raw = 0;
  };

  IngestFigures bench_ingest() {
    const std::string key_prefix = prefix + "i";
    const std::string config_path = write_config(
        "ingest",
        config_text(key_prefix, board_yaml("stream", "[daily, weekly, monthly]", 100'000'000)));
    RawRedis raw(redis_url);
    const std::string stream = key_prefix + ":events";
    const std::string raw_stream = key_prefix + ":rawevents";
    fill_stream(raw, stream, opt.events);
    fill_stream(raw, raw_stream, opt.events);

    // Baseline: a plain consumer group reader doing ZINCRBY x3 and XACK, pipelined per read.
    const std::vector<std::string> keys = {key_prefix + ":raw:daily", key_prefix + ":raw:weekly",
                                           key_prefix + ":raw:monthly"};
    raw.command({"XGROUP", "CREATE", raw_stream, "g", "0"});
    auto t0 = Clock::now();
    std::int64_t consumed = 0;
    for (;;) {
      const auto reply = raw.command(
          {"XREADGROUP", "GROUP", "g", "c", "COUNT", "1000", "STREAMS", raw_stream, ">"});
      if (reply->type == REDIS_REPLY_NIL || reply->elements == 0) break;
      const redisReply* entries = reply->element[0]->element[1];
      if (entries->elements == 0) break;
      std::vector<std::string> ack = {"XACK", raw_stream, "g"};
      std::size_t commands = 1;
      for (std::size_t e = 0; e < entries->elements; ++e) {
        const redisReply* entry = entries->element[e];
        ack.emplace_back(entry->element[0]->str, entry->element[0]->len);
        const redisReply* f = entry->element[1];
        std::string member, value;
        for (std::size_t j = 0; j + 1 < f->elements; j += 2) {
          const std::string name(f->element[j]->str, f->element[j]->len);
          if (name == "member") member.assign(f->element[j + 1]->str, f->element[j + 1]->len);
          if (name == "value") value.assign(f->element[j + 1]->str, f->element[j + 1]->len);
        }
        for (const auto& k : keys) raw.append({"ZINCRBY", k, value, member});
        commands += 3;
      }
      raw.append(ack);
      for (std::size_t i = 0; i < commands; ++i) raw.read();
      consumed += static_cast<std::int64_t>(entries->elements);
    }
    const double raw_rate = static_cast<double>(consumed) / seconds_since(t0);
    if (consumed != opt.events) fail("the baseline consumer read " + fmt_int(consumed) + " events");

    // boardkeeper ingest --drain, the real binary.
    const ChildRun run =
        run_binary({"--config", config_path, "--now", at(43'200'000), "ingest", "--drain"},
                   dir + "/ingest.log");
    const auto dead = raw.command({"XLEN", stream + ":dead"});
    if (dead->integer != 0) fail("ingest dead-lettered " + fmt_int(dead->integer) + " events");
    const auto pending = raw.command({"XPENDING", stream, "boardkeeper"});
    if (pending->element[0]->integer != 0) fail("ingest left events pending");
    const auto hot = raw.command({"ZCARD", key_prefix + ":{stream}:daily:" + at(0).substr(0, 10)});
    const auto raw_card = raw.command({"ZCARD", keys[0]});
    if (hot->integer != raw_card->integer) {
      fail("ingest: " + fmt_int(hot->integer) + " members, the baseline " +
           fmt_int(raw_card->integer));
    }
    return {static_cast<double>(opt.events) / run.seconds, raw_rate};
  }

  // ---- 3-6. spill, rehydrate, archive of a big board ----
  struct BoardFigures {
    std::int64_t members = 0;
    double fill_rate = 0;
    ChildRun spill, archive;
    double spill_copy = 0, archive_copy = 0;
    std::int64_t spilled = 0, archived = 0;
    std::vector<double> rehydrate_ms, hot_update_ms, zincrby_ms;
  };

  // `boardkeeper tick` at `now`, with --chunk when one was given.
  std::vector<std::string> tick_args(const std::string& config_path, const std::string& now) const {
    std::vector<std::string> args = {"--config", config_path, "--now", now, "tick"};
    if (opt.chunk > 0) {
      args.push_back("--chunk");
      args.push_back(std::to_string(opt.chunk));
    }
    return args;
  }

  BoardFigures bench_board(std::int64_t spilled_members, bool latency) {
    BoardFigures f;
    f.members = spilled_members;
    const std::string board = "big" + std::to_string(spilled_members);
    const std::string key_prefix = prefix + "b" + std::to_string(spilled_members);
    const std::string text = config_text(key_prefix, board_yaml(board, "[daily]", opt.keep));
    const std::string config_path = write_config(board, text);
    const bk::Config config = bk::parse_config(text, config_path, {});
    bk::redis::Connection redis(bk::redis::parse_url(redis_url));
    RawPg pg(pg_url);
    const std::string schema = prefix;
    const std::string where = " WHERE board = '" + board + "'";
    // Each board size is a deployment of its own (its own key prefix) on the one schema, one
    // after the other: the schema is handed over to it (see service/deployment.h).
    pg.exec("DELETE FROM " + schema + ".deployment");

    // Fill: keep + spilled_members members through the update path (not timed as a result).
    {
      bk::service::Leaderboards boards(config, redis, bk::Clock(day + bk::Millis{43'200'000}));
      const std::int64_t total = opt.keep + spilled_members;
      std::vector<bk::service::Update> batch;
      const auto t0 = Clock::now();
      for (std::int64_t start = 0; start < total; start += 1000) {
        batch.clear();
        for (std::int64_t i = start; i < std::min(total, start + 1000); ++i) {
          bk::service::Update u;
          u.board = board;
          u.member = "player-" + std::to_string(i);
          u.value = static_cast<std::int64_t>(rng() % 1'000'000);
          u.at = day + bk::Millis{3'600'000 + static_cast<std::int64_t>(rng() % 28'800'000)};
          batch.push_back(std::move(u));
        }
        for (const auto& r : boards.apply(batch)) {
          if (r.status != bk::service::UpdateStatus::applied) fail("fill: " + r.reason);
        }
      }
      f.fill_rate = static_cast<double>(total) / seconds_since(t0);
    }

    // 4. Spill: `boardkeeper tick` while the period is open.
    f.spill = run_binary(tick_args(config_path, at(46'800'000)), dir + "/spill.log");
    f.spilled = pg.scalar("SELECT count(*) FROM " + schema + ".cold_members" + where);
    if (f.spilled != spilled_members) {
      fail("spill moved " + fmt_int(f.spilled) + " members, expected " + fmt_int(spilled_members));
    }
    {
      const std::string rows = pg.copy_out("SELECT * FROM " + schema + ".cold_members" + where);
      const std::string table = schema + ".copy_cold_" + std::to_string(spilled_members);
      pg.exec("CREATE TABLE " + table + " (LIKE " + schema + ".cold_members INCLUDING ALL)");
      f.spill_copy = pg.copy_in(table, rows);
      pg.exec("DROP TABLE " + table);
    }

    // 5. Latency of an update that rehydrates a cold member, one at a time.
    if (latency) {
      bk::cold::ColdStore cold(pg_url, schema);
      bk::service::Leaderboards boards(config, redis, bk::Clock(day + bk::Millis{50'400'000}),
                                       &cold);
      const auto members = pg.exec("SELECT member FROM " + schema + ".cold_members" + where +
                                   " ORDER BY md5(member) LIMIT " + std::to_string(opt.samples));
      RawRedis raw(redis_url);
      const std::string raw_key = key_prefix + ":raw:latency";
      for (std::size_t i = 0; i < members.size(); ++i) {
        bk::service::Update u;
        u.board = board;
        u.member = members[i][0];
        u.value = 1;
        u.at = day + bk::Millis{50'400'000};
        auto t0 = Clock::now();
        const auto r = boards.apply(u);
        f.rehydrate_ms.push_back(seconds_since(t0) * 1000);
        if (r.status != bk::service::UpdateStatus::applied) fail("rehydrating update: " + r.reason);
        // The same member again: now hot, no rehydration.
        t0 = Clock::now();
        boards.apply(u);
        f.hot_update_ms.push_back(seconds_since(t0) * 1000);
        t0 = Clock::now();
        raw.command({"ZINCRBY", raw_key, "1", u.member});
        f.zincrby_ms.push_back(seconds_since(t0) * 1000);
      }
      if (boards.counters().rehydrated != static_cast<std::int64_t>(members.size())) {
        fail("expected " + fmt_int(static_cast<std::int64_t>(members.size())) +
             " rehydrations, counted " + fmt_int(boards.counters().rehydrated));
      }
    }

    // 3. Archive: `boardkeeper tick` after the period's end and grace.
    f.archive =
        run_binary(tick_args(config_path, at(86'400'000 + 3'600'000)), dir + "/archive.log");
    const std::string period_where =
        where + " AND period = 'daily' AND period_id = '" + at(0).substr(0, 10) + "'";
    f.archived = pg.scalar("SELECT count(*) FROM " + schema + ".history_rows" + period_where);
    const std::int64_t status_rows = pg.scalar(
        "SELECT count(*) FROM " + schema + ".periods" + period_where +
        " AND status = 'archived' AND members = " + std::to_string(opt.keep + spilled_members));
    if (f.archived != opt.keep + spilled_members || status_rows != 1) {
      fail("archive wrote " + fmt_int(f.archived) + " rows, expected " +
           fmt_int(opt.keep + spilled_members));
    }
    {
      const std::string rows =
          pg.copy_out("SELECT * FROM " + schema + ".history_rows" + period_where);
      const std::string table = schema + ".copy_history_" + std::to_string(spilled_members);
      pg.exec("CREATE TABLE " + table + " (LIKE " + schema + ".history_rows INCLUDING ALL)");
      f.archive_copy = pg.copy_in(table, rows);
      pg.exec("DROP TABLE " + table);
    }
    return f;
  }

  void cleanup() {
    RawRedis raw(redis_url);
    std::string cursor = "0";
    do {
      const auto r = raw.command({"SCAN", cursor, "MATCH", prefix + "*", "COUNT", "10000"});
      cursor.assign(r->element[0]->str, r->element[0]->len);
      for (std::size_t i = 0; i < r->element[1]->elements; ++i) {
        raw.command({"UNLINK",
                     std::string(r->element[1]->element[i]->str, r->element[1]->element[i]->len)});
      }
    } while (cursor != "0");
    RawPg(pg_url).exec("DROP SCHEMA IF EXISTS " + prefix + " CASCADE");
    std::string rm = "rm -rf " + dir;
    if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
};

std::string machine() {
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpu, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return model + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " cores";
}

void row(const std::string& what, const std::string& ours, const std::string& base,
         const std::string& ratio, const std::string& target) {
  std::printf("%-44s %-22s %-34s %-8s %s\n", what.c_str(), ours.c_str(), base.c_str(),
              ratio.c_str(), target.c_str());
}

int run(const Options& opt) {
  Bench b;
  b.opt = opt;
  int status = 0;
  try {
    std::fprintf(stderr, "migrating schema %s\n", b.prefix.c_str());
    run_binary(
        {"--config",
         b.write_config("migrate", b.config_text(b.prefix, Bench::board_yaml("x", "[daily]", 10))),
         "migrate"},
        b.dir + "/migrate.log");
    std::fprintf(stderr, "1/4 updates: %d rounds of %s events\n", opt.rounds,
                 fmt_int(opt.events).c_str());
    const auto u = b.bench_updates();
    if (opt.updates_only) {
      std::printf("update: %.0f events/s, ZINCRBY x3 pipelined %.0f events/s, %.2fx\n", u.ours,
                  u.raw, u.ours / u.raw);
      b.cleanup();
      return 0;
    }
    std::fprintf(stderr, "2/4 ingest: %s events\n", fmt_int(opt.events).c_str());
    const auto in = b.bench_ingest();
    std::fprintf(stderr, "3/4 board of %s members (RSS reference)\n",
                 fmt_int(opt.members / 10).c_str());
    const auto small = b.bench_board(opt.members / 10, false);
    std::fprintf(stderr, "4/4 board of %s members\n", fmt_int(opt.members).c_str());
    const auto big = b.bench_board(opt.members, true);

    RawPg pg(b.pg_url);
    RawRedis raw(b.redis_url);
    const auto info = raw.command({"INFO", "server"});
    const std::string server(info->str, info->len);
    const auto vpos = server.find("redis_version:");
    const std::string redis_version = server.substr(vpos + 14, server.find('\r', vpos) - vpos - 14);
    std::printf("\nboardkeeper benchmarks: %s; Redis %s, PostgreSQL %s (fsync %s), loopback\n\n",
                machine().c_str(), redis_version.c_str(),
                pg.exec("SHOW server_version")[0][0].c_str(), pg.exec("SHOW fsync")[0][0].c_str());
    row("measurement", "boardkeeper", "raw baseline (same run)", "ratio", "target");
    row("1 update, 3 periods, tie-break (events/s)",
        fmt_int(static_cast<std::int64_t>(u.ours)) + "/s",
        "ZINCRBY x3 pipelined " + fmt_int(static_cast<std::int64_t>(u.raw)) + "/s",
        fmt("%.2fx", u.ours / u.raw), ">= 1.0x");
    row("2 ingest end to end (events/s)", fmt_int(static_cast<std::int64_t>(in.ours)) + "/s",
        "XREADGROUP+ZINCRBY x3+XACK " + fmt_int(static_cast<std::int64_t>(in.raw)) + "/s",
        fmt("%.2fx", in.ours / in.raw), "");
    const std::string archived = fmt_int(big.archived);
    row("3 archive " + archived + " members (s)", fmt("%.2f s", big.archive.seconds),
        "COPY " + archived + " rows " + fmt("%.2f s", big.archive_copy),
        fmt("%.2fx", big.archive.seconds / big.archive_copy), "<= 1.25x");
    const std::string spilled = fmt_int(big.spilled);
    row("4 spill " + spilled + " members (s)", fmt("%.2f s", big.spill.seconds),
        "COPY " + spilled + " rows " + fmt("%.2f s", big.spill_copy),
        fmt("%.2fx", big.spill.seconds / big.spill_copy), "<= 1.25x");
    row("5 rehydrating update p50 / p99 (ms)",
        fmt("%.2f", percentile(big.rehydrate_ms, 0.5)) + " / " +
            fmt("%.2f", percentile(big.rehydrate_ms, 0.99)),
        "ZINCRBY " + fmt("%.2f", percentile(big.zincrby_ms, 0.5)) + " / " +
            fmt("%.2f", percentile(big.zincrby_ms, 0.99)),
        "", "p99 < 2 ms");
    row("  same member again, hot (ms)",
        fmt("%.2f", percentile(big.hot_update_ms, 0.5)) + " / " +
            fmt("%.2f", percentile(big.hot_update_ms, 0.99)),
        "", "", "");
    row("6 peak RSS, spill / archive (MiB)",
        fmt("%.1f", big.spill.peak_rss_mib) + " / " + fmt("%.1f", big.archive.peak_rss_mib),
        "at " + fmt_int(small.spilled) + ": " + fmt("%.1f", small.spill.peak_rss_mib) + " / " +
            fmt("%.1f", small.archive.peak_rss_mib),
        "", "< 64 MiB, flat");
    std::printf(
        "\nalso: spill %s members %.2f s vs COPY %.2f s (%.2fx); archive %s %.2f s vs COPY %.2f s "
        "(%.2fx); "
        "board fill through the update path %s members/s\n",
        fmt_int(small.spilled).c_str(), small.spill.seconds, small.spill_copy,
        small.spill.seconds / small.spill_copy, fmt_int(small.archived).c_str(),
        small.archive.seconds, small.archive_copy, small.archive.seconds / small.archive_copy,
        fmt_int(static_cast<std::int64_t>(big.fill_rate)).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    status = 1;
  }
  b.cleanup();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::int64_t {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::stoll(argv[++i]);
    };
    if (a == "--members") {
      opt.members = value();
    } else if (a == "--keep") {
      opt.keep = value();
    } else if (a == "--events") {
      opt.events = value();
    } else if (a == "--distinct") {
      opt.distinct = value();
    } else if (a == "--samples") {
      opt.samples = value();
    } else if (a == "--chunk") {
      opt.chunk = value();
    } else if (a == "--updates-only") {
      opt.updates_only = true;
    } else if (a == "--rounds") {
      opt.rounds = static_cast<int>(value());
    } else {
      std::fprintf(
          stderr,
          "usage: bk_bench [--members N] [--keep N] [--events N] [--distinct N] [--samples N] "
          "[--rounds N] [--chunk N] [--updates-only]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    return run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
}
