// Benchmarks of `serve`, the HTTP API (rows 13-26 of tests/bench/run.sh, 16 aside), each
// beside a raw baseline of the same run on the same servers, or the same read alone:
//   13 GET .../top?limit=10 with wrk (16 connections) against redis-benchmark ZRANGE key 0 9
//      WITHSCORES (16 clients): requests/s and p99;
//   14 GET .../members?ids= with 100 ids (mostly spilled members) against redis-benchmark
//      ZMSCORE of the same 100 ids: requests/s and p99;
//   15 a cursor page (100 rows) at the bottom of the board against the first page: the cost
//      of depth;
//   17 2,000 connections each sending one header byte a second and 200 idle keep-alive ones:
//      /readyz and top p99 from another client against the same without them, serve's RSS,
//      and SIGTERM to exit with all of them connected;
//   18 10,000 requests over one keep-alive connection: the TCP connections they needed;
//   19 how long serve takes to load the spilled period's cold ranks into memory, and their size;
//   20 GET members/{m} and .../around of a spilled member (16 connections): requests/s, p99;
//   21 top?limit=10 from 4 connections beside 48 connections each POSTing 100 spilled ids,
//      against the same alone (head-of-line blocking);
//   22 with BK_TEST_POSTGRES_READ_URL (a replica): the primary's CPU seconds while 16
//      connections read 100 spilled ids from PostgreSQL, without and with postgres.read_url;
//   23 top?limit=10 with a read rate limit that is never reached against the same without
//      one (two serve processes, measured in turns): the limiter's cost, target <= 5%.
//   24-26 writes (write_bench.h): POST .../scores of hot members against redis-benchmark
//      ZINCRBY, of spilled ones (rehydration), and POST /v1/events against ingest --drain.
// The board: one period of --members members (1,000,000), all but hot_keep (1,000) spilled
// to PostgreSQL by the real `boardkeeper tick`. Every answer is checked (record counts,
// ranks, the total) so a broken build cannot print a fast table. bench() reads as its steps:
// the board, the read rows on one serve, the write rows on another, the table
// (serve_table.cpp; the figures in serve_bench.h), the clean-up.
//
//   tests/bench/run.sh --serve-only                 the full run
//   bk_serve_bench --members 20000 --seconds 1      a small one (ctest's bench.serve_smoke)
//
// Needs BK_TEST_REDIS_URL, BK_TEST_POSTGRES_URL, wrk and redis-benchmark.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api/cursor.h"
#include "cold/cold_store.h"
#include "config/config.h"
#include "redis/connection.h"
#include "redis/url.h"
#include "serve_bench.h"
#include "serve_clients.h"
#include "service/leaderboards.h"
#include "write_bench.h"

namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;
using bk::bench::ColdLoad;
using bk::bench::ColdReadFigures;
using bk::bench::LimiterFigures;
using bk::bench::ReadFigures;
using bk::bench::ReplicaFigures;
using bk::bench::ServeOptions;
using bk::bench::WriteRowFigures;
using bk::bench::WrkFigures;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

std::string env_or_fail(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0')
    fail(std::string(name) + " is not set (tests/bench/run.sh sets it)");
  return v;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a program (no shell) with its output in `log`; its exit status.
int run(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string must_run(const std::vector<std::string>& args, const std::string& log) {
  if (run(args, log) != 0) fail(args[0] + " " + args[1] + " failed:\n" + read_file(log));
  return read_file(log);
}

double to_ms(const std::string& value) {  // wrk's "1.23ms", "456.00us", "1.10s"
  const double v = std::stod(value);
  if (value.find("us") != std::string::npos) return v / 1000;
  if (value.find("ms") != std::string::npos) return v;
  return v * 1000;
}

// `script`: a wrk Lua script (e.g. one that POSTs), none when empty.
WrkFigures wrk(const std::string& url, int connections, int seconds, const std::string& log,
               const std::string& script = "") {
  std::vector<std::string> args{"wrk", "-t2", "-c" + std::to_string(connections)};
  if (!script.empty()) args.insert(args.end(), {"-s", script});
  // A second unmeasured first: every connection's worker makes its own Redis and PostgreSQL
  // connections on its first request.
  std::vector<std::string> warm = args;
  warm.insert(warm.end(), {"-d1s", url});
  must_run(warm, log);
  args.insert(args.end(), {"-d" + std::to_string(seconds) + "s", "--latency", url});
  const std::string out = must_run(args, log);
  WrkFigures f;
  const auto rps = out.find("Requests/sec:");
  const auto p99 = out.find(" 99%");
  if (rps == std::string::npos || p99 == std::string::npos) fail("no figures from wrk:\n" + out);
  f.rps = std::stod(out.substr(rps + 13));
  std::istringstream line(out.substr(p99 + 4));
  std::string value;
  line >> value;
  f.p99_ms = to_ms(value);
  if (out.find("Non-2xx") != std::string::npos) fail("wrk saw errors:\n" + out);
  return f;
}

// redis-benchmark's requests/s for one command (16 clients), from its CSV.
WrkFigures redis_benchmark(const bk::redis::Options& where, int clients, int requests,
                           const std::vector<std::string>& command, const std::string& log) {
  std::vector<std::string> args{"redis-benchmark",
                                "-h",
                                where.host,
                                "-p",
                                std::to_string(where.port),
                                "-c",
                                std::to_string(clients),
                                "-n",
                                std::to_string(requests),
                                "--csv"};
  args.insert(args.end(), command.begin(), command.end());
  const std::string out = must_run(args, log);
  // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",
  // "p99_latency_ms","max_latency_ms"
  std::istringstream in(out);
  std::string header, line;
  std::getline(in, header);
  std::getline(in, line);
  std::vector<std::string> fields;
  for (std::size_t at = 0; at < line.size();) {
    const auto open = line.find('"', at);
    if (open == std::string::npos) break;
    const auto close = line.find('"', open + 1);
    fields.push_back(line.substr(open + 1, close - open - 1));
    at = close + 1;
  }
  if (fields.size() < 7) fail("no figures from redis-benchmark:\n" + out);
  return {std::stod(fields[1]), std::stod(fields[6])};
}

// `boardkeeper serve` with `config_path` on a free port (its output in `log`), stopped with
// SIGTERM when this goes (unless `reaped`).
struct Serving {
  pid_t pid = -1;
  int port = 0;
  bool reaped = false;
  Serving(const std::string& config_path, const std::string& log, const std::string& cursor_key,
          const std::string& write_token = "") {
    pid = fork();
    if (pid == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      setenv("BOARDKEEPER_CURSOR_KEY", cursor_key.c_str(), 1);
      if (!write_token.empty()) setenv("BOARDKEEPER_SERVE_WRITE_TOKENS", write_token.c_str(), 1);
      execl(BK_BINARY, BK_BINARY, "--config", config_path.c_str(), "serve", "--listen",
            "127.0.0.1:0", static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 300 && port == 0; ++i) {
      const std::string text = read_file(log);
      const auto at = text.find("on http://127.0.0.1:");
      if (at != std::string::npos) port = std::stoi(text.substr(at + 20));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (port == 0) {
      stop();
      fail("serve did not start:\n" + read_file(log));
    }
  }
  ~Serving() { stop(); }
  Serving(const Serving&) = delete;
  Serving& operator=(const Serving&) = delete;
  void stop() {
    if (reaped) return;
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    reaped = true;
  }
};

// serve's resident memory (MiB).
double rss_mib(pid_t pid) {
  const std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
  const auto at = status.find("VmRSS:");
  return at == std::string::npos ? 0 : std::stod(status.substr(at + 6)) / 1024;
}

// A gauge of serve's /metrics (0 when absent).
double gauge(httplib::Client& client, const std::string& name) {
  const auto r = client.Get("/metrics");
  if (!r || r->status != 200) fail("GET /metrics failed");
  const auto at = r->body.find("\n" + name + " ");
  return at == std::string::npos ? 0 : std::stod(r->body.substr(at + name.size() + 2));
}

// Row 19: the first read of the spilled period asked for its cold ranks; how long until they
// are in serve's memory, and what they take there.
ColdLoad wait_for_cold_ranks(httplib::Client& client, pid_t serve, SteadyClock::time_point asked,
                             double rss_before) {
  while (gauge(client, "boardkeeper_cold_rank_periods") < 1) {
    if (SteadyClock::now() - asked > std::chrono::seconds(120)) {
      fail("serve did not load the cold ranks within 120 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ColdLoad load;
  load.seconds = std::chrono::duration<double>(SteadyClock::now() - asked).count();
  load.index_mib = gauge(client, "boardkeeper_cold_rank_bytes") / (1 << 20);
  load.rss_growth_mib = rss_mib(serve) - rss_before;
  return load;
}

// Rows 20 and 21: a spilled member's rank and neighbourhood under 16 connections; the hot top
// page from 4 connections alone and beside 48 connections each POSTing 100 spilled ids.
ColdReadFigures cold_reads(const std::string& base, const ServeOptions& opt, const std::string& dir,
                           const std::string& member, const std::vector<std::string>& ids) {
  ColdReadFigures f;
  const std::string at = base + "/v1/boards/sv/daily/members/" + member;
  f.member = wrk(at, opt.connections, opt.seconds, dir + "/wrk-member.log");
  f.around = wrk(at + "/around?k=5", opt.connections, opt.seconds, dir + "/wrk-around.log");
  f.cohort = wrk(base + "/v1/boards/lg/daily/members/lgp42/cohort", opt.connections, opt.seconds,
                 dir + "/wrk-cohort.log");
  const std::string top = base + "/v1/boards/sv/daily/top?limit=10";
  f.top_quiet = wrk(top, 4, opt.seconds, dir + "/wrk-top-quiet.log");
  std::string body = "{\"ids\": [";
  for (const auto& id : ids) body += (id == ids.front() ? "\"" : ", \"") + id + "\"";
  body += "]}";
  const std::string script = dir + "/post-ids.lua";
  std::ofstream(script) << "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = "
                           "\"application/json\"\nwrk.body = '"
                        << body << "'\n";
  std::string crowd_failed;
  std::thread crowd([&] {
    try {
      wrk(base + "/v1/boards/sv/daily/members", 48, opt.seconds + 2, dir + "/wrk-post.log", script);
    } catch (const std::exception& e) {
      crowd_failed = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // its unmeasured second
  f.top_crowded = wrk(top, 4, opt.seconds, dir + "/wrk-top-crowded.log");
  crowd.join();
  if (!crowd_failed.empty()) fail("the 48 POSTing clients: " + crowd_failed);
  return f;
}

// CPU seconds (user + system) of the PostgreSQL server at `url`: its postmaster (from its
// data directory's postmaster.pid) and every process it started.
double postgres_cpu_seconds(const std::string& url, const std::string& log) {
  const std::string data = must_run({"psql", "-X", "-At", url, "-c", "SHOW data_directory"}, log);
  std::string postmaster;
  std::istringstream(read_file(data.substr(0, data.find('\n')) + "/postmaster.pid")) >> postmaster;
  if (postmaster.empty()) fail("no postmaster.pid in PostgreSQL's data directory " + data);
  const auto stat_of = [](const std::string& pid) {
    std::string text = read_file("/proc/" + pid + "/stat");
    const auto close = text.rfind(')');
    std::istringstream rest(close == std::string::npos ? "" : text.substr(close + 2));
    std::vector<std::string> f;  // from field 3 (state) on
    for (std::string x; rest >> x;) f.push_back(x);
    return f;
  };
  double ticks = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto f = stat_of(pid);
    if (f.size() > 12 && (pid == postmaster || f[1] == postmaster)) {
      ticks += std::stod(f[11]) + std::stod(f[12]);  // utime, stime
    }
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Row 22: the primary's CPU seconds while 16 connections read 100 spilled ids (cold ranks from
// memory off, so that every read asks PostgreSQL), without and with postgres.read_url.
ReplicaFigures replica_rows(const std::string& config_text, const std::string& pg_url,
                            const std::string& read_url, const ServeOptions& opt,
                            const std::string& dir, const std::string& members) {
  const std::string lsn = must_run(
      {"psql", "-X", "-At", pg_url, "-c", "SELECT pg_current_wal_lsn()"}, dir + "/psql.log");
  for (int i = 0;; ++i) {
    const std::string caught =
        must_run({"psql", "-X", "-At", read_url, "-c",
                  "SELECT pg_last_wal_replay_lsn() >= '" + lsn.substr(0, lsn.find('\n')) + "'"},
                 dir + "/psql.log");
    if (caught.rfind("t", 0) == 0) break;
    if (i == 600) fail("the replica did not catch up within 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ReplicaFigures f;
  for (const bool replica : {false, true}) {
    std::string text = config_text + "serve:\n  cold_rank_memory_mb: 0\n";
    if (replica) text.insert(text.find("}\nboards:"), ", read_url: \"" + read_url + "\"");
    const std::string path = dir + (replica ? "/replica.yaml" : "/primary.yaml");
    std::ofstream(path) << text;
    Serving s(path, dir + (replica ? "/serve-replica.log" : "/serve-primary.log"),
              std::string(bk::api::kMinCursorKeyBytes, 'k'));
    const std::string url = "http://127.0.0.1:" + std::to_string(s.port) + members;
    must_run({"wrk", "-t2", "-c16", "-d1s", url}, dir + "/wrk-warm.log");
    const double before = postgres_cpu_seconds(pg_url, dir + "/psql.log");
    const WrkFigures w = wrk(url, opt.connections, opt.seconds, dir + "/wrk-replica.log");
    const double cpu = postgres_cpu_seconds(pg_url, dir + "/psql.log") - before;
    (replica ? f.with : f.without) = w;
    (replica ? f.primary_cpu_with : f.primary_cpu_without) = cpu;
  }
  return f;
}

// Row 23: what the rate limiter costs reads. top?limit=10 from the running serve (no limits)
// and from a second one whose read limit is never reached (rate and burst 10^9; reads without
// a token share one bucket, the most contended case), taken in turns, twice each.
LimiterFigures limiter_overhead(const std::string& config_text, const std::string& base,
                                const std::string& top, const ServeOptions& opt,
                                const std::string& dir) {
  const std::string path = dir + "/limited.yaml";
  std::ofstream(path) << config_text
                      << "serve:\n  rate_limits:\n    read: {rate: 1000000000/s, burst: "
                         "1000000000}\n";
  Serving limited(path, dir + "/serve-limited.log", std::string(bk::api::kMinCursorKeyBytes, 'k'));
  httplib::Client client("127.0.0.1", limited.port);
  client.set_url_encode(false);
  const auto asked = SteadyClock::now();
  const auto first = client.Get(top.c_str());
  if (!first || first->status != 200 ||
      first->get_header_value("RateLimit-Limit") != "1000000000") {
    fail("the limited serve's top page lacks its RateLimit-Limit: " + (first ? first->body : ""));
  }
  wait_for_cold_ranks(client, limited.pid, asked, rss_mib(limited.pid));
  const std::string with = "http://127.0.0.1:" + std::to_string(limited.port);
  LimiterFigures f;
  for (int round = 0; round < 2; ++round) {
    f.without_rps +=
        wrk(base + top, opt.connections, opt.seconds, dir + "/wrk-unlimited.log").rps / 2;
    f.with_rps += wrk(with + top, opt.connections, opt.seconds, dir + "/wrk-limited.log").rps / 2;
  }
  return f;
}

const std::string kTop = "/v1/boards/sv/daily/top?limit=10";

// Requests a redis-benchmark baseline makes (row 14's a quarter of them).
int baseline_requests(const ServeOptions& opt) {
  return std::max(20000, 100000 * opt.seconds);
}

std::string temp_dir() {
  char tmpl[] = "/tmp/bk_serve_bench.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) fail("mkdtemp failed");
  return tmpl;
}

// The config's path in `dir`, its schema migrated.
std::string migrated(const std::string& dir, const std::string& config_text) {
  const std::string config_path = dir + "/boardkeeper.yaml";
  std::ofstream(config_path) << config_text;
  must_run({BK_BINARY, "--config", config_path, "migrate"}, dir + "/migrate.log");
  return config_path;
}

// The bench's board `sv`: one period of --members members written through the library (as an
// application would), all but hot_keep (1,000) spilled by the real `boardkeeper tick`; the
// servers, names and files every row uses.
struct Board {
  std::string redis_url = env_or_fail("BK_TEST_REDIS_URL");
  std::string pg_url = env_or_fail("BK_TEST_POSTGRES_URL");
  std::string prefix = "sbench" + std::to_string(getpid());
  std::string dir = temp_dir();
  std::string config_text =
      "redis: {url: \"" + redis_url + "\", key_prefix: " + prefix + "}\npostgres: {url: \"" +
      pg_url + "\", schema: " + prefix +
      "}\nboards:\n  - name: sv\n    periods: [daily]\n"
      "    max_points: 50000000\n    hot_keep: 1000\n    display: 10\n"
      "    retention: {default: 30d}\n"
      // Row 31's league: cohorts of 30 (opened by the tick below).
      "  - name: lg\n    periods: [daily]\n    max_points: 50000000\n"
      "    retention: {default: 30d}\n    league: {divisions: [bronze, silver,"
      " gold], cohort_size: 30, promote: 7, relegate: 5}\n";
  std::string config_path = migrated(dir, config_text);
  bk::Config config = bk::parse_config(config_text, config_path, {});
  bk::redis::Options where = bk::redis::parse_url(redis_url);
  bk::redis::Connection conn{where};
  bk::cold::ColdStore cold{pg_url, prefix};
  bk::service::Leaderboards lb{config, conn, bk::Clock(), &cold};
  std::mt19937_64 rng{2026};  // the members' points, then row 14's ids
  bk::service::PeriodRef ref{};
  std::string live_key{};
  std::string cursor_key = std::string(bk::api::kMinCursorKeyBytes, 'k');  // row 15's cursor

  explicit Board(const ServeOptions& opt) {
    std::fprintf(stderr, "serve: writing %lld members, spilling all but 1,000\n",
                 static_cast<long long>(opt.members));
    std::vector<bk::service::Update> batch;
    for (std::int64_t i = 0; i < opt.members; ++i) {
      batch.push_back({"sv",
                       "player" + std::to_string(i),
                       static_cast<std::int64_t>(rng() % 50'000'000),
                       {},
                       ""});
      if (batch.size() == 10000 || i + 1 == opt.members) {
        for (const auto& r : lb.apply(batch, bk::service::Leaderboards::Detail::status)) {
          if (r.status != bk::service::UpdateStatus::applied) fail("an update failed: " + r.reason);
        }
        batch.clear();
      }
    }
    must_run({BK_BINARY, "--config", config_path, "tick"}, dir + "/tick.log");
    write_league(opt.members / 10);
    ref = lb.resolve("sv", "daily", std::nullopt);
    live_key = prefix + ":{sv}:daily:" + ref.period.id;
  }
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;

  // Row 31: `members` on the league, seated as they come (the tick opened the cohorts).
  void write_league(std::int64_t members) {
    std::vector<bk::service::Update> batch;
    for (std::int64_t i = 0; i < members; ++i) {
      batch.push_back(
          {"lg", "lgp" + std::to_string(i), static_cast<std::int64_t>(rng() % 1000), {}, ""});
      if (batch.size() == 10000 || i + 1 == members) {
        for (const auto& r : lb.apply(batch, bk::service::Leaderboards::Detail::status)) {
          if (r.status != bk::service::UpdateStatus::applied) fail("an update failed: " + r.reason);
        }
        batch.clear();
      }
    }
  }

  // Leaves nothing behind: the keys, the schema, the files.
  void forget() {
    bk::bench::forget_keys(conn, prefix);
    run({"psql", "-X", "-q", pg_url, "-c", "DROP SCHEMA " + prefix + " CASCADE"},
        dir + "/drop.log");
    std::filesystem::remove_all(dir);
  }
};

// serve's API at 127.0.0.1:`port`, read one request at a time: every answer a 200.
struct Api {
  std::string base;
  httplib::Client client;
  explicit Api(int port)
      : base("http://127.0.0.1:" + std::to_string(port)), client("127.0.0.1", port) {
    client.set_url_encode(false);
  }
  json get(const std::string& target) {
    const auto r = client.Get(target.c_str());
    if (!r || r->status != 200) fail("GET " + target + " failed: " + (r ? r->body : "no answer"));
    return json::parse(r->body);
  }
};

// Row 13, top 10 against ZRANGE 0 9; its first read asks for the cold ranks (row 19).
void top_rows(const Board& b, const ServeOptions& opt, const Serving& serve, Api& api,
              ReadFigures& f) {
  const double rss_before = rss_mib(serve.pid);
  const auto asked = SteadyClock::now();
  const json first = api.get(kTop);  // its count asks for the cold ranks (row 19)
  f.load = wait_for_cold_ranks(api.client, serve.pid, asked, rss_before);
  if (first["records"].size() != 10 || first["total"] != opt.members) fail("top: " + first.dump());
  f.top = wrk(api.base + kTop, opt.connections, opt.seconds, b.dir + "/wrk-top.log");
  f.raw_top =
      redis_benchmark(b.where, opt.connections, baseline_requests(opt),
                      {"ZRANGE", b.live_key, "0", "9", "WITHSCORES"}, b.dir + "/rb-top.log");
}

// Row 14's ids: drawn from the whole board (so nearly all of them spilled), their target,
// and one of them below the hot 1,000 (rows 20, 21).
struct Ids {
  std::vector<std::string> ids;
  std::string target;
  std::string spilled_member;
};

// Row 14: 100 ids against ZMSCORE of the same ids, and one request at a time.
Ids ids_rows(Board& b, const ServeOptions& opt, Api& api, ReadFigures& f) {
  Ids asked;
  for (int i = 0; i < 100; ++i)
    asked.ids.push_back("player" + std::to_string(b.rng() % opt.members));
  std::sort(asked.ids.begin(), asked.ids.end());
  asked.ids.erase(std::unique(asked.ids.begin(), asked.ids.end()), asked.ids.end());
  std::string joined;
  for (const auto& id : asked.ids) joined += (joined.empty() ? "" : ",") + id;
  asked.target = "/v1/boards/sv/daily/members?ids=" + joined;
  const json found = api.get(asked.target);
  if (found["records"].size() != asked.ids.size() || !found["not_found"].empty()) {
    fail("members: " + found.dump().substr(0, 500));
  }
  for (int i = 0; i < 30; ++i) {
    const auto t0 = SteadyClock::now();
    api.get(asked.target);
    f.ids_alone_ms.push_back(
        std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count());
  }
  for (const auto& r : found["records"]) {
    if (r["rank"].get<std::int64_t>() > 1000) asked.spilled_member = r["member"].get<std::string>();
  }
  f.ids = wrk(api.base + asked.target, opt.connections, opt.seconds, b.dir + "/wrk-ids.log");
  std::vector<std::string> zmscore{"ZMSCORE", b.live_key};
  zmscore.insert(zmscore.end(), asked.ids.begin(), asked.ids.end());
  f.raw_ids = redis_benchmark(b.where, opt.connections, baseline_requests(opt) / 4, zmscore,
                              b.dir + "/rb-ids.log");
  return asked;
}

// Row 15: the last page through a cursor against the first page, one request at a time.
void cursor_rows(Board& b, const ServeOptions& opt, Api& api, ReadFigures& f) {
  const auto last = b.lb.reads().top_at({b.ref}, opt.members - 101, 1);
  if (last.size() != 1) fail("no member at position " + std::to_string(opt.members - 100));
  const std::string cursor = bk::api::encode_cursor(
      b.ref, bk::service::PageMark{opt.members - 100, last.front()}, b.cursor_key);
  const std::string deep = "/v1/boards/sv/daily/top?limit=100&cursor=" + cursor;
  const std::string shallow = "/v1/boards/sv/daily/top?limit=100";
  const auto timed = [&](const std::string& target, std::vector<double>& out) {
    const auto t0 = SteadyClock::now();
    const json page = api.get(target);
    out.push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count());
    if (page["records"].size() != 100) fail("a page of " + std::to_string(page["records"].size()));
    return page;
  };
  for (int i = 0; i < 60; ++i) {
    const json page = timed(deep, f.deep_ms);
    if (page["records"][99]["rank"].get<std::int64_t>() > opt.members ||
        page["records"][0]["rank"].get<std::int64_t>() < opt.members - 200 ||
        !page["next_cursor"].is_null()) {
      fail("the last page: " + page["records"][0].dump() + " .. " + page["records"][99].dump());
    }
    timed(shallow, f.shallow_ms);
  }
}

// Row 18, then 17, which ends serve with SIGTERM.
void connection_rows(const Board& b, const ServeOptions& opt, Serving& serve, ReadFigures& f) {
  f.kept = bk::bench::one_connection(serve.port, kTop, opt.keepalive);
  f.crowd = bk::bench::slow_clients(serve.port, serve.pid, kTop, opt.slow, opt.idle, opt.seconds);
  serve.reaped = true;
  if (f.crowd.exit_status != 0) {
    fail("serve exited " + std::to_string(f.crowd.exit_status) + " after SIGTERM:\n" +
         read_file(b.dir + "/serve.log"));
  }
}

// The read rows on one serve (with the bench's cursor key), in their order: 13 (and 19), 23,
// 14, 20 and 21, 22 (with BK_TEST_POSTGRES_READ_URL, a replica), 15, 18 and 17.
ReadFigures read_rows(Board& b, const ServeOptions& opt) {
  Serving serve(b.config_path, b.dir + "/serve.log", b.cursor_key);
  Api api(serve.port);
  ReadFigures f;
  top_rows(b, opt, serve, api, f);
  f.limiter = limiter_overhead(b.config_text, api.base, kTop, opt, b.dir);
  const Ids asked = ids_rows(b, opt, api, f);
  f.memory = cold_reads(api.base, opt, b.dir, asked.spilled_member, asked.ids);
  const char* read_url = std::getenv("BK_TEST_POSTGRES_READ_URL");
  if (read_url != nullptr && *read_url != '\0') {
    f.replica = replica_rows(b.config_text, b.pg_url, read_url, opt, b.dir, asked.target);
  }
  cursor_rows(b, opt, api, f);
  connection_rows(b, opt, serve, f);
  return f;
}

// Rows 24-26's members: the board's hot 1,000 and up to 200,000 spilled ones.
void write_members(Board& b, const ServeOptions& opt, bk::bench::WriteSetup& ws) {
  for (const auto& s : b.lb.reads().top_at({b.ref}, 0, 1000)) ws.hot.push_back(s.member);
  std::sort(ws.hot.begin(), ws.hot.end());
  for (std::int64_t i = 0; i < opt.members && ws.spilled.size() < 200'000; ++i) {
    const std::string m = "player" + std::to_string(i);
    if (!std::binary_search(ws.hot.begin(), ws.hot.end(), m)) ws.spilled.push_back(m);
  }
}

// Rows 24-26, after the reads (they change the board), on a serve with a write token; then
// their baseline, redis-benchmark's ZINCRBY.
WriteRowFigures write_rows_with_baseline(Board& b, const ServeOptions& opt) {
  bk::bench::WriteSetup ws;
  const std::string writer_path = b.dir + "/writer.yaml";
  std::ofstream(writer_path) << b.config_text << bk::bench::write_boards_yaml();
  ws.token = "bench-write-token-" + b.prefix;
  Serving writer(writer_path, b.dir + "/serve-writer.log", b.cursor_key, ws.token);
  ws.port = writer.port;
  {
    // Rows 24-26 run with the writer's cold ranks in memory, as a serve that has run for a
    // while has them (before they load, a spilled write counts in PostgreSQL: see
    // docs/performance.md, row 25).
    httplib::Client wc("127.0.0.1", writer.port);
    const auto writer_asked = SteadyClock::now();
    wc.Get("/v1/boards/sv/daily/top?limit=10");  // its count asks for the cold ranks
    wait_for_cold_ranks(wc, writer.pid, writer_asked, rss_mib(writer.pid));
  }
  ws.seconds = opt.seconds;
  ws.events = opt.write_events;
  ws.stream = b.prefix + ":events";
  write_members(b, opt, ws);
  ws.ingest_drain = [&] {
    const auto t0 = SteadyClock::now();
    must_run({BK_BINARY, "--config", writer_path, "ingest", "--drain"}, b.dir + "/ingest.log");
    return std::chrono::duration<double>(SteadyClock::now() - t0).count();
  };
  WriteRowFigures f;
  f.writes = bk::bench::write_rows(ws, b.conn);
  f.raw_incr =
      redis_benchmark(b.where, opt.connections, baseline_requests(opt),
                      {"-r", "1000", "ZINCRBY", b.prefix + ":zincrby", "1", "m:__rand_int__"},
                      b.dir + "/rb-zincrby.log");
  return f;
}

int bench(const ServeOptions& opt) {
  Board board(opt);
  const ReadFigures reads = read_rows(board, opt);
  const WriteRowFigures writes = write_rows_with_baseline(board, opt);
  bk::bench::print_table(opt, reads, writes);
  board.forget();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ServeOptions opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::int64_t {
      if (i + 1 >= argc) fail(a + " needs a value");
      return std::stoll(argv[++i]);
    };
    if (a == "--members") {
      opt.members = value();
    } else if (a == "--seconds") {
      opt.seconds = static_cast<int>(value());
    } else if (a == "--connections") {
      opt.connections = static_cast<int>(value());
    } else if (a == "--slow") {
      opt.slow = static_cast<int>(value());
    } else if (a == "--idle") {
      opt.idle = static_cast<int>(value());
    } else if (a == "--keepalive") {
      opt.keepalive = static_cast<int>(value());
    } else if (a == "--write-events") {
      opt.write_events = value();
    } else {
      std::fprintf(stderr,
                   "usage: bk_serve_bench [--members N] [--seconds S] [--connections C] [--slow N] "
                   "[--idle N] [--keepalive N] [--write-events N]\n");
      return 2;
    }
  }
  if (opt.members < 2000) opt.members = 2000;
  try {
    return bench(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bk_serve_bench: %s\n", e.what());
    return 1;
  }
}
