// What the benchmark's rows share (tests/bench/bench*.cpp): the options, the raw baselines'
// clients (hiredis and libpq directly: no boardkeeper code in the way), the real binary as a
// child process, and `Bench`, the run's servers and scratch directory, whose phases live one
// group of rows a file: bench_updates.cpp (row 1), bench_ingest.cpp (2, 7-9),
// bench_board.cpp (3-6, 10), bench_cluster.cpp (11, 12), bench_closes.cpp (27, 28, through
// bench_closes.h); bench.cpp prints the table.
#pragma once

#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/time.h"
#include "redis/connection.h"
#include "redis/url.h"
#include "service/leaderboards.h"

#include "bench_closes.h"

namespace bk_bench {

using Clock = std::chrono::steady_clock;

struct Options {
  std::int64_t members = 1'000'000;       // spilled (and archived) members of the big board
  std::int64_t keep = 10'000;             // hot_keep
  std::int64_t events = 300'000;          // events per update / ingest round
  std::int64_t distinct = 50'000;         // distinct members the update events hit
  std::int64_t ingest_members = 100'000;  // members the ingest (and peer) events are drawn from
  std::int64_t flat_events = 0;           // --flat-events: also our memory after this many (0: not)
  std::int64_t flat_members = 20'000;     // ... over this many members, which --events also reach
  std::string peer;                       // --peer DIR: run the peer, its npm install in DIR
  std::int64_t samples = 2'000;           // rehydrating updates timed one by one
  int rounds = 3;                         // update rounds (alternating with the baseline)
  std::int64_t chunk = 0;                 // --chunk for tick (0: the product's default)
  bool updates_only = false;              // --updates-only: phase 1 alone (for profiling)
  bool ingest_only = false;   // --ingest-only: our ingest of the uniform events alone (ditto)
  bool board_only = false;    // --board-only: the big board alone (spill, rehydrate, archive)
  bool cluster_only = false;  // --cluster-only: the cluster phase alone (rows 11 and 12)
  std::int64_t cluster_events = 300'000;  // events over the 30 boards of row 11
  std::int64_t closes_members = 200'000;  // rows 27, 28: members of each tiered / untiered board
  bool closes_only = false;               // --closes-only: rows 27 and 28 alone
  std::int64_t league_members = 100'000;  // rows 29, 30: members of the league / plain board
  bool league_only = false;               // --league-only: rows 29 and 30 alone
};

// The skew of the Zipf events (ingest and the peer).
constexpr double kZipfS = 1.1;

[[noreturn]] void fail(const std::string& what);
double seconds_since(Clock::time_point t0);
std::string env_or_fail(const char* name);
std::string fmt_int(std::int64_t v);
std::string fmt(const char* format, double v);
double median(std::vector<double> v);
double percentile(std::vector<double> v, double p);

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

// Runs `program` (a path, or a name looked up in PATH) with its output in `log_path`; fails,
// naming it `name` and quoting the log, unless it exits 0. `utc`: with TZ=UTC.
//
// Not forked from here: Linux counts the RSS a process had when it called exec in its peak
// (ru_maxrss), and a child forked from this process starts with all of this process's
// resident pages mapped (tens of MiB of events and boards), so its peak would be ours. The
// child is started by a fresh, small copy of this program (`bk_bench --launch`, see launch()),
// which times it and reports its rusage.
ChildRun run_child(const std::string& program, const std::vector<std::string>& args,
                   const std::string& log_path, const std::string& name, bool utc = false);
// bk_bench --launch REPORT LOG utc|- PROGRAM [ARGS...]: the launcher of run_child. Runs
// PROGRAM with its output in LOG (with TZ=UTC for "utc") and writes "<wait status> <seconds>
// <ru_maxrss KiB>" to REPORT. Called before anything else in main, so that this process is
// small when it forks: the child's peak RSS is then its own (a floor of this process's few
// MiB at most).
int launch(int argc, char** argv);
ChildRun run_binary(const std::vector<std::string>& args, const std::string& log_path);

// A replica of a Redis server for the length of a phase: redis-server on a free loopback
// port in `dir`, synced before the constructor returns. (Its master keeps feeding its
// replication backlog after it goes, so a phase with one runs last.)
class Replica {
 public:
  Replica(const std::string& host, int port, const std::string& dir);
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;
  ~Replica() { stop(); }

 private:
  pid_t pid_ = -1;
  void stop();
};

// One line of the table.
void row(const std::string& what, const std::string& ours, const std::string& base,
         const std::string& ratio, const std::string& target);

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

  Bench();

  std::string at(std::int64_t offset_ms) const;
  std::string config_text(const std::string& key_prefix, const std::string& boards) const;
  std::string write_config(const std::string& name, const std::string& text) const;
  static std::string board_yaml(const std::string& name, const std::string& periods,
                                std::int64_t keep);
  // The run's keys, schema and scratch directory go.
  void cleanup();

  // ---- 1. update throughput (bench_updates.cpp) ----
  std::vector<bk::service::Update> update_events(const std::string& board, std::int64_t n);

  struct UpdateFigures {
    double ours = 0;      // events per second, medians of the rounds
    double plain = 0;     // row 1's baseline: the same reads and writes, not atomic
    double raw = 0;       // for information: pipelined ZINCRBY x3 (reads nothing)
    double two_step = 0;  // ours, each batch prepared while the one before applies
  };
  UpdateFigures bench_updates();

  // ---- what the Redis server spent, and holds (bench_server_use.cpp) ----
  static std::string info(RawRedis& raw, const std::string& section);
  static std::string info_field(const std::string& text, const std::string& field);
  static std::int64_t used_memory(RawRedis& raw);
  static double main_thread_cpu(RawRedis& raw);
  // Commands our Lua scripts call (quoted upper-case words in src/hot/*.lua): Redis counts
  // a script's nested calls in INFO commandstats as well as inside the EVALSHA's own time,
  // so they are left out of the total (and shown apart) to count each microsecond once.
  static std::vector<std::string> nested_commands();

  struct ServerUse {
    double usec = 0;      // commandstats: top-level commands (a script's nested calls once)
    double cpu_usec = 0;  // the server's main thread, user + system
    std::vector<std::pair<std::string, double>> top_level, nested;  // usec per command
  };

  // CONFIG RESETSTAT; returns the main thread's CPU seconds so far (for server_use).
  static double start_server_use(RawRedis& raw);
  ServerUse server_use(RawRedis& raw, double cpu0);
  // INFO commandstats as usec per command; the total counts a script's nested calls once.
  ServerUse commandstats_use(const std::string& commandstats);
  std::vector<std::string> nested_;

  // One command's usec in a server use (top-level or nested; 0 when it never ran).
  static double usec_of(const ServerUse& use, const std::string& name);

  // Our ingest's server time as row 8 splits it: the update script (EVALSHA, less the stream
  // commands that only the streams' bounds script runs nested: XINFO GROUPS, XTRIM, XLEN;
  // that script's Lua and nested XPENDING, about one call a second, stay in) and the
  // stream's own commands (XREADGROUP, XACK, XAUTOCLAIM, ... and those nested ones).
  struct StreamSplit {
    double script = 0, stream = 0;
  };
  static StreamSplit split_stream(const ServerUse& use);

  // ---- 2. ingest end to end, and 7-9. the peer (bench_ingest.cpp) ----
  //
  // One event sequence per distribution, generated once: XADDed to the stream that
  // `boardkeeper ingest --drain` consumes, and written to a file for the peer (redis-rank,
  // tests/bench/peer/peer.js), which reads it into memory before its clock starts and calls
  // redis-rank as an application would at event time: no stream on its side, so its server
  // time and memory are those of its boards alone, while ours include the stream (the issue's
  // terms: "the stream included"). Both sides get exactly the same events in the same order.
  struct Event {
    std::string member;
    std::int64_t value = 0;
    std::int64_t at_ms = 0;
  };

  // Uniform members: the sequence the ingest phase always used (seed 7), over `members`.
  std::vector<Event> uniform_events(std::int64_t n, std::int64_t members) const;
  // Zipf-skewed members: member k (k = 1..members, named "s<k-1>") with probability
  // proportional to 1 / k^s, by inversion of the cumulative weights (seed 11; the uniform
  // draws are made from the generator's bits, so the sequence is the same everywhere).
  std::vector<Event> zipf_events(std::int64_t n, std::int64_t members, double s) const;
  static std::int64_t distinct_members(const std::vector<Event>& events);
  static void fill_stream(RawRedis& raw, const std::string& stream,
                          const std::vector<Event>& events);

  struct Side {
    std::int64_t events = 0;
    double rate = 0;          // events per second
    ServerUse server;         // during the run
    std::int64_t memory = 0;  // used_memory after minus before (ours: the stream included)
    std::map<std::string, std::string> keys;  // the peer's board per period
  };

  std::string ingest_config(const std::string& key_prefix) const;
  // boardkeeper ingest --drain of `events` under `key_prefix` (a deployment of its own).
  Side ingest_ours(const std::string& key_prefix, const std::vector<Event>& events);
  // The peer on `events` (node tests/bench/peer/peer.js), its boards under `base_key`.
  Side run_peer(const std::string& base_key, const std::vector<Event>& events);
  // Our boards after `events` (and the peer's, when given) against the events themselves:
  // in every period the same member count, the same top points, and our top member holding
  // those points on the peer's board too. Fails loudly otherwise.
  void check_boards(const std::string& what, const std::string& key_prefix,
                    const std::vector<Event>& events, const Side* peer);

  struct IngestFigures {
    double ours = 0, raw = 0;       // row 2: uniform events, against the plain consumer
    std::int64_t members = 0;       // distinct members the uniform events hit
    std::int64_t zipf_members = 0;  // ... and the Zipf events
    Side uniform, zipf;             // ours
    // Flatness: ours after --events and after --flat-events uniform events over the same
    // --flat-members members (both runs reach all of them: a fixed member count).
    Side flat_base, flat;
    std::int64_t flat_base_members = 0, flat_members = 0;
    Side peer_uniform, peer_zipf;  // the peer (when --peer was given)
  };
  IngestFigures bench_ingest();
  void ingest_zipf(IngestFigures& f);
  void ingest_flatness(IngestFigures& f);

  // ---- 3-6, 10. spill, rehydrate, archive and read a big board (bench_board.cpp) ----
  struct BoardFigures {
    std::int64_t members = 0;
    double fill_rate = 0;
    ChildRun spill, archive;
    ChildRun deep_read, shallow_read;  // `top --offset <last 10> -n 10` and `top -n 10`
    double spill_copy = 0, archive_copy = 0;
    std::int64_t spilled = 0, archived = 0;
    std::vector<double> rehydrate_ms, hot_update_ms, zincrby_ms;
  };

  // `boardkeeper tick` at `now`, with --chunk when one was given.
  std::vector<std::string> tick_args(const std::string& config_path, const std::string& now) const;
  BoardFigures bench_board(std::int64_t spilled_members, bool latency);

  // One board size's names and config, which its steps share.
  struct BoardRun {
    std::string board, key_prefix, config_path;
    std::string where;  // the SQL condition on the board's rows
    bk::Config config;
  };
  // Fill: keep + spilled members through the update path; members per second.
  double fill_board(const BoardRun& run, bk::redis::Connection& redis,
                    std::int64_t spilled_members);
  void spill_board(BoardFigures& f, const BoardRun& run, RawPg& pg);
  void time_rehydration(BoardFigures& f, const BoardRun& run, bk::redis::Connection& redis,
                        RawPg& pg);
  void time_reads(BoardFigures& f, const BoardRun& run);
  void archive_board(BoardFigures& f, const BoardRun& run, RawPg& pg);

  // ---- 11, 12. a Redis Cluster (bench_cluster.cpp; BK_TEST_REDIS_CLUSTER_URL: 3 masters) ----
  struct ClusterFigures {
    std::int64_t events = 0;
    // Each master's server use (the single node's: one) for the same events: 30 boards placed
    // 10 per master with a stream on every master; the same with one stream; 30 boards as
    // their names happen to hash (cb0..cb29).
    std::vector<ServerUse> single, spread, one, hashed;
    std::vector<ServerUse> replicated;  // the single node with a replica, as the masters have
    std::vector<int> hashed_boards = std::vector<int>(3, 0);  // of cb0..cb29 on each master
    // One board through the update path (medians, events/s): through the cluster, straight
    // to the board's master (a plain connection: no routing), and on the single node.
    double cluster_rate = 0, direct_rate = 0, single_rate = 0;
  };

  struct BoardEvent {
    int board = 0;  // index into the phase's board names
    std::string member;
    std::int64_t value = 0;
    std::int64_t at_ms = 0;
  };

  static std::string cluster_url() { return env_or_fail("BK_TEST_REDIS_CLUSTER_URL"); }
  std::string cluster_config(const std::string& url, bool cluster, const std::string& key_prefix,
                             const std::vector<std::string>& streams) const;
  // Every master's (or the single server's) server use so far.
  std::vector<ServerUse> work(bk::redis::Connection& conn);
  static void reset_work(bk::redis::Connection& conn);
  // `events` produced (XADD: board k's to stream k % streams) and consumed by one
  // `ingest --drain` on the server(s) of `conn`; each master's server time of it all.
  std::vector<ServerUse> cluster_ingest(bk::redis::Connection& conn, const std::string& config_text,
                                        const std::string& key_prefix,
                                        const std::vector<std::string>& streams,
                                        const std::vector<std::string>& names,
                                        const std::vector<BoardEvent>& events);
  // Leaderboards::apply of `events` on one board, 1,000 a call: events per second.
  double apply_rate(bk::redis::Connection& conn, const bk::Config& config,
                    const std::vector<bk::service::Update>& events);
  ClusterFigures bench_cluster();
  // The cluster phase's events: random boards of 30, members, values (seed 13).
  std::vector<BoardEvent> cluster_events() const;
  // 11: the same events over 30 boards on one node (without and with a replica) and on the
  // cluster (boards spread, one stream, boards as they hash).
  void cluster_work(ClusterFigures& f, bk::redis::Connection& cluster,
                    bk::redis::Connection& single);
  // 12: one board through the update path on the cluster, on its master, on the single node.
  void cluster_routing(ClusterFigures& f, bk::redis::Connection& cluster,
                       bk::redis::Connection& single);

  // ---- 27, 28. tiers and close notices (bench_closes.h) ----
  // Rows 27 and 28, under key prefixes and schemas of their own (bench.cpp).
  ClosesFigures bench_closes();
};

std::string machine();
// The peer's redis-rank version, from its installed package.json.
std::string peer_version(const std::string& peer_dir);
// "evalsha 15.3, xreadgroup 0.8 (nested: zadd 4.5, ...)": usec per event by command.
std::string breakdown(const Bench::ServerUse& use, std::int64_t events);
std::string breakdown(const Bench::Side& side);
// Rows 11 and 12, and where row 11's server time went.
void print_cluster(const Bench::ClusterFigures& f);

}  // namespace bk_bench
