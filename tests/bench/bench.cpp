// boardkeeper's benchmarks. Every figure is printed beside a raw baseline measured in the
// same run against the same servers (a plain client's ZMSCORE + ZADD, a plain consumer, plain
// COPY, the peer's ZINCRBY; docs/performance.md says which row has which),
// because these machines are noisy: the ratio is the result, the absolute numbers are
// context. Each phase also checks that the work was really done (row counts, dead letters),
// so a broken build cannot print a fast table.
//
//   tests/bench/run.sh                   the full run (1,000,000 members), with the peer
//   tests/bench/run.sh --events 200000 --flat-events 1000000   the ingest size
//   bk_bench --members 20000 --events 20000 --samples 200      a small run (no peer)
//   tests/bench/run.sh --cluster-only --rounds 5               rows 11 and 12 alone
//
// Rows 11 and 12 (BK_TEST_REDIS_CLUSTER_URL: the 3-master + 3-replica test cluster) run the
// same ingest events over 30 boards on one node (with a replica, as each master has one)
// and on the cluster, and compare each master's server time (INFO commandstats) with the
// node's; then one board through the update path via the cluster against a plain connection
// straight to that board's master (the cost of routing itself) and against the single node.
//
// Rows 27 and 28 (bench_closes.cpp) price a board's tiers and close notices: the archive of a
// tiered board that publishes its notices against the untiered one's, and the reads of a spilled
// member's tier with their PostgreSQL round trips counted (pg_round_trips.h).
//
// The peer (rows 7-9) is redis-rank from npm (tests/bench/peer: pinned in package-lock.json,
// installed into the build directory by run.sh), fed the same ingest events; its boards are
// checked against ours, and both against the events. Redis server time per event comes from
// INFO commandstats (CONFIG RESETSTAT before each side), memory from used_memory before and
// after each side's run (each under its own key prefix, one after the other).
//
// BK_TEST_REDIS_URL and BK_TEST_POSTGRES_URL name the servers; tests/bench/run.sh starts
// throwaway ones. Spill and archive run the real binary (`boardkeeper tick`) as a child
// process, so their time and peak RSS are the product's own.
#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cold/cold_store.h"
#include "config/config.h"
#include "core/period.h"
#include "core/score_codec.h"
#include "core/time.h"
#include "redis/connection.h"
#include "redis/slots.h"
#include "redis/url.h"
#include "service/leaderboards.h"

#include "bench_closes.h"

namespace {

using bk_bench::Clock;

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
};

// The skew of the Zipf events (ingest and the peer).
constexpr double kZipfS = 1.1;

}  // namespace

// Helpers bench_closes.cpp shares (bench_closes.h).
namespace bk_bench {

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

}  // namespace bk_bench

namespace {

using namespace bk_bench;

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
                   const std::string& log_path, const std::string& name, bool utc = false) {
  const std::string report = log_path + ".rusage";
  std::vector<std::string> launcher = {"bk_bench", "--launch", report, log_path};
  launcher.push_back(utc ? "utc" : "-");
  launcher.push_back(program);
  launcher.insert(launcher.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : launcher) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::remove(report.c_str());
  const pid_t pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int launched = 0;
  if (waitpid(pid, &launched, 0) != pid) fail("waitpid failed");
  int status = -1;
  double seconds = 0;
  long maxrss_kib = 0;
  std::ifstream in(report);
  if (!(in >> status >> seconds >> maxrss_kib) || !WIFEXITED(launched) ||
      WEXITSTATUS(launched) != 0) {
    fail("bk_bench --launch " + program + " failed (status " + std::to_string(launched) + ")");
  }
  ChildRun out;
  out.seconds = seconds;
  out.peak_rss_mib = static_cast<double>(maxrss_kib) / 1024.0;  // ru_maxrss is in KiB
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream log(log_path);
    std::stringstream text;
    text << log.rdbuf();
    std::string command;
    for (const auto& a : args) command += " " + a;
    fail(name + command + " failed (status " + std::to_string(status) + "):\n" + text.str());
  }
  return out;
}

// bk_bench --launch REPORT LOG utc|- PROGRAM [ARGS...]: the launcher of run_child. Runs
// PROGRAM with its output in LOG (with TZ=UTC for "utc") and writes "<wait status> <seconds>
// <ru_maxrss KiB>" to REPORT. Called before anything else in main, so that this process is
// small when it forks: the child's peak RSS is then its own (a floor of this process's few
// MiB at most).
int launch(int argc, char** argv) {
  if (argc < 6) return 2;
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    const int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    if (std::strcmp(argv[4], "utc") == 0) setenv("TZ", "UTC", 1);
    execvp(argv[5], argv + 5);
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid) return 1;
  const double seconds = seconds_since(t0);
  std::FILE* report = std::fopen(argv[2], "w");
  if (report == nullptr) return 1;
  std::fprintf(report, "%d %.6f %ld\n", status, seconds, static_cast<long>(ru.ru_maxrss));
  return std::fclose(report) == 0 ? 0 : 1;
}

ChildRun run_binary(const std::vector<std::string>& args, const std::string& log_path) {
  return run_child(BK_BINARY, args, log_path, "boardkeeper");
}

// ---- the scenario -----------------------------------------------------------------------

// A replica of a Redis server for the length of a phase: redis-server on a free loopback
// port in `dir`, synced before the constructor returns. (Its master keeps feeding its
// replication backlog after it goes, so a phase with one runs last.)
class Replica {
 public:
  Replica(const std::string& host, int port, const std::string& dir) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      fail("no free port for a replica");
    }
    close(fd);
    const std::string own_port = std::to_string(ntohs(addr.sin_port));
    std::filesystem::create_directories(dir);
    pid_ = fork();
    if (pid_ == 0) {
      const std::string master_port = std::to_string(port), log = dir + "/redis.log";
      execlp("redis-server", "redis-server", "--port", own_port.c_str(), "--bind", "127.0.0.1",
             "--dir", dir.c_str(), "--save", "", "--appendonly", "no", "--replicaof", host.c_str(),
             master_port.c_str(), "--logfile", log.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    bk::redis::Options o = bk::redis::parse_url("redis://127.0.0.1:" + own_port);
    for (int i = 0; i < 200; ++i) {
      try {
        bk::redis::Connection c(o);
        const std::string info = c.command({"INFO", "replication"}).as_string();
        if (info.find("master_link_status:up") != std::string::npos) return;
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    stop();
    fail("the replica did not sync with its master (see " + dir + "/redis.log)");
  }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;
  ~Replica() { stop(); }

 private:
  pid_t pid_ = -1;
  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
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
    double ours = 0;      // events per second, medians of the rounds
    double plain = 0;     // row 1's baseline: the same reads and writes, not atomic
    double raw = 0;       // for information: pipelined ZINCRBY x3 (reads nothing)
    double two_step = 0;  // ours, each batch prepared while the one before applies
  };

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

  UpdateFigures bench_updates() {
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
    const std::vector<std::string> raw_keys = {
        key_prefix + ":raw:daily", key_prefix + ":raw:weekly", key_prefix + ":raw:monthly"};
    PlainReadWrite plain(*config.board_for("speed"), key_prefix, day + bk::Millis{3'600'000});
    constexpr std::size_t kBatch = 1000;
    std::vector<double> ours, plain_rates, base, two_step;
    for (int round = 0; round < opt.rounds; ++round) {
      const auto events = update_events("speed", opt.events);
      // Row 1's baseline: the same reads and writes without atomicity, 1000 events a batch.
      auto t0 = Clock::now();
      std::vector<bk::service::Update> plain_batch;
      for (std::size_t start = 0; start < events.size(); start += kBatch) {
        const std::size_t end = std::min(events.size(), start + kBatch);
        plain_batch.assign(events.begin() + static_cast<std::ptrdiff_t>(start),
                           events.begin() + static_cast<std::ptrdiff_t>(end));
        plain.apply(raw, plain_batch);
      }
      plain_rates.push_back(static_cast<double>(events.size()) / seconds_since(t0));
      // For information: the same events as ZINCRBY into three plain keys, 1000 events a
      // pipeline (reads nothing, no tie-break time).
      t0 = Clock::now();
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
      // The same events on a second board through the two-step form (docs/library.md): batch
      // k+1 is prepared while batch k's script calls run at the server.
      std::vector<std::vector<bk::service::Update>> batches;
      for (std::size_t start = 0; start < events.size(); start += kBatch) {
        const std::size_t end = std::min(events.size(), start + kBatch);
        batches.emplace_back(events.begin() + static_cast<std::ptrdiff_t>(start),
                             events.begin() + static_cast<std::ptrdiff_t>(end));
        for (auto& u : batches.back()) u.board = "speed2";
      }
      t0 = Clock::now();
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
      two_step.push_back(static_cast<double>(events.size()) / seconds_since(t0));
    }
    // Check: both sides summed the same points per member in every period.
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
    // The plain baseline holds the same points and tie-break times as the board.
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
    return {median(ours), median(plain_rates), median(base), median(two_step)};
  }

  // ---- 2. ingest end to end, and 7-9. the peer ----
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
  std::vector<Event> uniform_events(std::int64_t n, std::int64_t members) const {
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
  std::vector<Event> zipf_events(std::int64_t n, std::int64_t members, double s) const {
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

  static std::int64_t distinct_members(const std::vector<Event>& events) {
    std::unordered_set<std::string> seen;
    for (const auto& e : events) seen.insert(e.member);
    return static_cast<std::int64_t>(seen.size());
  }

  static void fill_stream(RawRedis& raw, const std::string& stream,
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

  // ---- what the Redis server spent, and holds ----

  static std::string info(RawRedis& raw, const std::string& section) {
    const auto r = raw.command({"INFO", section});
    return {r->str, r->len};
  }
  static std::string info_field(const std::string& text, const std::string& field) {
    const auto at = text.find("\n" + field + ":");
    if (at == std::string::npos) fail("INFO has no " + field);
    const auto from = at + field.size() + 2;
    return text.substr(from, text.find('\r', from) - from);
  }
  static std::int64_t used_memory(RawRedis& raw) {
    return std::stoll(info_field(info(raw, "memory"), "used_memory"));
  }
  static double main_thread_cpu(RawRedis& raw) {
    const std::string cpu = info(raw, "cpu");
    return std::stod(info_field(cpu, "used_cpu_user_main_thread")) +
           std::stod(info_field(cpu, "used_cpu_sys_main_thread"));
  }

  // Commands our Lua scripts call (quoted upper-case words in src/hot/*.lua): Redis counts
  // a script's nested calls in INFO commandstats as well as inside the EVALSHA's own time,
  // so they are left out of the total (and shown apart) to count each microsecond once.
  static std::vector<std::string> nested_commands() {
    std::vector<std::string> names;
    const std::filesystem::path hot = std::filesystem::path(BK_SOURCE_DIR) / "src" / "hot";
    int scripts = 0;
    for (const auto& entry : std::filesystem::directory_iterator(hot)) {
      if (entry.path().extension() != ".lua") continue;
      ++scripts;
      std::ifstream in(entry.path());
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\'' && text[i] != '"') continue;
        std::size_t j = i + 1;
        while (j < text.size() && std::isupper(static_cast<unsigned char>(text[j])) != 0) ++j;
        if (j < text.size() && text[j] == text[i] && j > i + 1) {
          std::string name = text.substr(i + 1, j - i - 1);
          std::transform(name.begin(), name.end(), name.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
          i = j;
        }
      }
    }
    if (scripts == 0) fail("no Lua scripts in " + hot.string());
    // XACK is the consumer's own top-level command; the one script that also calls it
    // (dead letters) never runs here: the ingest phases fail on any dead letter.
    names.erase(std::remove(names.begin(), names.end(), "xack"), names.end());
    return names;
  }

  struct ServerUse {
    double usec = 0;      // commandstats: top-level commands (a script's nested calls once)
    double cpu_usec = 0;  // the server's main thread, user + system
    std::vector<std::pair<std::string, double>> top_level, nested;  // usec per command
  };

  // CONFIG RESETSTAT; returns the main thread's CPU seconds so far (for server_use).
  static double start_server_use(RawRedis& raw) {
    raw.command({"CONFIG", "RESETSTAT"});
    return main_thread_cpu(raw);
  }
  ServerUse server_use(RawRedis& raw, double cpu0) {
    ServerUse use = commandstats_use(info(raw, "commandstats"));
    use.cpu_usec = (main_thread_cpu(raw) - cpu0) * 1e6;
    return use;
  }
  // INFO commandstats as usec per command; the total counts a script's nested calls once.
  ServerUse commandstats_use(const std::string& commandstats) {
    ServerUse use;
    if (nested_.empty()) nested_ = nested_commands();
    std::istringstream lines(commandstats);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("cmdstat_", 0) != 0) continue;
      const std::string name = line.substr(8, line.find(':') - 8);
      const auto u = line.find("usec=");
      const double usec = std::stod(line.substr(u + 5, line.find(',', u) - u - 5));
      // The bench's own (and ioredis's one INFO when it connects; a cluster client's map).
      if (name == "config|resetstat" || name == "info" || name == "cluster|slots") continue;
      if (std::find(nested_.begin(), nested_.end(), name) != nested_.end()) {
        use.nested.emplace_back(name, usec);
      } else {
        use.top_level.emplace_back(name, usec);
        use.usec += usec;
      }
    }
    const auto by_usec = [](const auto& a, const auto& b) { return a.second > b.second; };
    std::sort(use.top_level.begin(), use.top_level.end(), by_usec);
    std::sort(use.nested.begin(), use.nested.end(), by_usec);
    return use;
  }
  std::vector<std::string> nested_;

  // One command's usec in a server use (top-level or nested; 0 when it never ran).
  static double usec_of(const ServerUse& use, const std::string& name) {
    double usec = 0;
    for (const auto* list : {&use.top_level, &use.nested}) {
      for (const auto& [n, u] : *list) usec += n == name ? u : 0;
    }
    return usec;
  }

  // Our ingest's server time as row 8 splits it: the update script (EVALSHA, less the stream
  // commands that only the streams' bounds script runs nested: XINFO GROUPS, XTRIM, XLEN;
  // that script's Lua and nested XPENDING, about one call a second, stay in) and the
  // stream's own commands (XREADGROUP, XACK, XAUTOCLAIM, ... and those nested ones).
  struct StreamSplit {
    double script = 0, stream = 0;
  };
  static StreamSplit split_stream(const ServerUse& use) {
    StreamSplit split;
    double bounds = 0;
    for (const char* name : {"xinfo|groups", "xtrim", "xlen"}) bounds += usec_of(use, name);
    split.script = usec_of(use, "evalsha") - bounds;
    split.stream = bounds;
    for (const auto& [name, usec] : use.top_level) {
      if (name[0] == 'x' && name != "xinfo|groups") split.stream += usec;
    }
    return split;
  }

  struct Side {
    std::int64_t events = 0;
    double rate = 0;          // events per second
    ServerUse server;         // during the run
    std::int64_t memory = 0;  // used_memory after minus before (ours: the stream included)
    std::map<std::string, std::string> keys;  // the peer's board per period
  };

  std::string ingest_config(const std::string& key_prefix) const {
    return config_text(key_prefix, board_yaml("stream", "[daily, weekly, monthly]", 100'000'000));
  }

  // boardkeeper ingest --drain of `events` under `key_prefix` (a deployment of its own).
  Side ingest_ours(const std::string& key_prefix, const std::vector<Event>& events) {
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

  // ---- 11, 12. a Redis Cluster (BK_TEST_REDIS_CLUSTER_URL: 3 masters) ----
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
                             const std::vector<std::string>& streams) const {
    std::string text = "redis:\n  url: " + url + "\n  key_prefix: " + key_prefix +
                       (cluster ? "\n  cluster: true" : "") + "\npostgres:\n  url: " + pg_url +
                       "\n  schema: " + prefix + "\n";
    if (!streams.empty()) {
      text += "ingest:\n  stream: [";
      for (std::size_t i = 0; i < streams.size(); ++i) {
        text += (i > 0 ? ", \"" : "\"") + streams[i] + "\"";
      }
      text += "]\n";
    }
    return text + "boards:\n" + board_yaml("cb*", "[daily, weekly, monthly]", 100'000'000);
  }

  // Every master's (or the single server's) server use so far.
  std::vector<ServerUse> work(bk::redis::Connection& conn) {
    std::vector<ServerUse> use;
    for (std::size_t i = 0; i < conn.masters(); ++i) {
      use.push_back(commandstats_use(conn.master_command(i, {"INFO", "commandstats"}).as_string()));
    }
    return use;
  }
  static void reset_work(bk::redis::Connection& conn) {
    for (std::size_t i = 0; i < conn.masters(); ++i) {
      conn.master_command(i, {"CONFIG", "RESETSTAT"}).checked();
    }
  }

  // `events` produced (XADD: board k's to stream k % streams) and consumed by one
  // `ingest --drain` on the server(s) of `conn`; each master's server time of it all.
  std::vector<ServerUse> cluster_ingest(bk::redis::Connection& conn, const std::string& config_text,
                                        const std::string& key_prefix,
                                        const std::vector<std::string>& streams,
                                        const std::vector<std::string>& names,
                                        const std::vector<BoardEvent>& events) {
    const std::string path = write_config(key_prefix, config_text);
    RawPg(pg_url).exec("DELETE FROM " + prefix + ".deployment");  // hand the schema over
    reset_work(conn);
    std::vector<bk::redis::Args> batch;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const BoardEvent& e = events[i];
      batch.push_back({"XADD", streams[static_cast<std::size_t>(e.board) % streams.size()], "*",
                       "board", names[static_cast<std::size_t>(e.board)], "member", e.member,
                       "value", std::to_string(e.value), "at", std::to_string(e.at_ms)});
      if (batch.size() == 1000 || i + 1 == events.size()) {
        for (const auto& r : conn.pipeline(batch)) r.checked();
        batch.clear();
      }
    }
    run_binary({"--config", path, "--now", at(43'200'000), "ingest", "--drain"},
               dir + "/ingest-" + key_prefix + ".log");
    std::vector<ServerUse> use = work(conn);
    for (const std::string& stream : streams) {
      if (conn.command({"XLEN", stream + ":dead"}).as_int() != 0) {
        fail("cluster ingest dead-lettered events of " + stream);
      }
      if (conn.command({"XPENDING", stream, "boardkeeper"}).at(0).as_int() != 0) {
        fail("cluster ingest left events pending in " + stream);
      }
    }
    // Check: every board's best member has the points its events sum to.
    const bk::Config config = bk::parse_config(config_text, "check.yaml", {});
    bk::service::Leaderboards boards(config, conn, bk::Clock(day + bk::Millis{43'200'000}));
    std::vector<std::unordered_map<std::string, std::int64_t>> sums(30);
    for (const BoardEvent& e : events) sums[static_cast<std::size_t>(e.board)][e.member] += e.value;
    for (int b = 0; b < 30; ++b) {
      std::int64_t best = 0;
      for (const auto& [member, points] : sums[static_cast<std::size_t>(b)]) {
        best = std::max(best, points);
      }
      const std::string& name = names[static_cast<std::size_t>(b)];
      const auto top = boards.reads().top_at({boards.resolve(name, "daily", std::nullopt)}, 0, 1);
      if (best > 0 && (top.empty() || top[0].points != best)) {
        fail("cluster ingest: board " + name + " does not sum its events");
      }
    }
    return use;
  }

  // Leaderboards::apply of `events` on one board, 1,000 a call: events per second.
  double apply_rate(bk::redis::Connection& conn, const bk::Config& config,
                    const std::vector<bk::service::Update>& events) {
    std::unique_ptr<bk::cold::ColdStore> cold;
    bk::service::Leaderboards boards(
        config, conn, bk::Clock(day + bk::Millis{43'200'000}), [&]() -> bk::cold::ColdStore& {
          if (!cold) cold = std::make_unique<bk::cold::ColdStore>(pg_url, config.postgres.schema);
          return *cold;
        });
    const auto t0 = Clock::now();
    std::vector<bk::service::Update> batch;
    for (std::size_t start = 0; start < events.size(); start += 1000) {
      batch.assign(
          events.begin() + static_cast<std::ptrdiff_t>(start),
          events.begin() + static_cast<std::ptrdiff_t>(std::min(events.size(), start + 1000)));
      for (const auto& r : boards.apply(batch)) {
        if (r.status != bk::service::UpdateStatus::applied) fail("not applied: " + r.reason);
      }
    }
    return static_cast<double>(events.size()) / seconds_since(t0);
  }

  ClusterFigures bench_cluster() {
    ClusterFigures f;
    bk::redis::Options seed = bk::redis::parse_url(cluster_url());
    seed.cluster = true;
    bk::redis::Connection cluster(seed);
    if (cluster.masters() != 3) fail("the test cluster has not 3 masters");
    bk::redis::Connection single(bk::redis::parse_url(redis_url));

    // 11: the same events over 30 boards on one node and on the cluster. The test cluster's
    // masters serve the three thirds of the slots (redis-cli --cluster create).
    const auto third = [](const std::string& key) {
      return bk::redis::key_slot(key) * 3 / bk::redis::kClusterSlots;
    };
    std::vector<BoardEvent> events;
    std::mt19937_64 gen(13);
    for (std::int64_t i = 0; i < opt.cluster_events; ++i) {
      events.push_back({static_cast<int>(gen() % 30), "c" + std::to_string(gen() % 10'000),
                        static_cast<std::int64_t>(1 + gen() % 9),
                        bk::to_epoch_ms(day) + 3'600'000 + i});
    }
    f.events = opt.cluster_events;
    // Boards placed as an operator places hot keys (spread over the masters): the first ten
    // names of cb0, cb1, ... on each master. And cb0..cb29 as they happen to hash.
    std::vector<std::string> even, hashed;
    std::vector<int> per_master(3, 0);
    for (int n = 0; even.size() < 30 || hashed.size() < 30; ++n) {
      const std::string name = "cb" + std::to_string(n);
      const auto master = static_cast<std::size_t>(third("{" + name + "}"));
      if (n < 30) {
        hashed.push_back(name);
        ++f.hashed_boards[master];
      }
      if (per_master[master] < 10) {
        ++per_master[master];
        even.push_back(name);
      }
    }
    const std::string single_prefix = prefix + "cs";
    const std::vector<std::string> single_streams{single_prefix + ":events"};
    f.single =
        cluster_ingest(single, cluster_config(redis_url, false, single_prefix, single_streams),
                       single_prefix, single_streams, even, events);
    {
      // Each master feeds a replica, which costs inside the commands (the effects of every
      // script and the XCLAIM of every entry read are propagated): the single node with a
      // replica too is the like-for-like baseline.
      const bk::redis::Options where = bk::redis::parse_url(redis_url);
      Replica replica(where.host, where.port, dir + "/replica");
      const std::string replicated_prefix = prefix + "cr";
      const std::vector<std::string> replicated_streams{replicated_prefix + ":events"};
      f.replicated = cluster_ingest(
          single, cluster_config(redis_url, false, replicated_prefix, replicated_streams),
          replicated_prefix, replicated_streams, even, events);
    }
    // A stream on each master: tags whose slots lie in the three thirds.
    const auto spread_streams = [&](const std::string& key_prefix) {
      std::vector<std::string> streams;
      for (int t = 0; t < 3; ++t) {
        for (int n = 0; streams.size() == static_cast<std::size_t>(t); ++n) {
          const std::string key = key_prefix + ":{ev" + std::to_string(n) + "}";
          if (third(key) == t) streams.push_back(key);
        }
      }
      return streams;
    };
    const std::string spread_prefix = prefix + "cm";
    const auto streams = spread_streams(spread_prefix);
    f.spread = cluster_ingest(cluster, cluster_config(cluster_url(), true, spread_prefix, streams),
                              spread_prefix, streams, even, events);
    const std::string one_prefix = prefix + "c1";
    const std::vector<std::string> one_stream{one_prefix + ":{events}"};
    f.one = cluster_ingest(cluster, cluster_config(cluster_url(), true, one_prefix, one_stream),
                           one_prefix, one_stream, even, events);
    const std::string hashed_prefix = prefix + "ch";
    const auto hashed_streams = spread_streams(hashed_prefix);
    f.hashed =
        cluster_ingest(cluster, cluster_config(cluster_url(), true, hashed_prefix, hashed_streams),
                       hashed_prefix, hashed_streams, hashed, events);

    // 12: one board through the update path, the sides taking turns. Straight to the board's
    // master: a key prefix whose own keys (<prefix>:boards, :deployment) live there too.
    const std::string board = "cb1";
    const int board_third = third("{" + board + "}");
    std::string direct_prefix;
    for (int n = 0; direct_prefix.empty(); ++n) {
      const std::string p = prefix + "rd" + std::to_string(n);
      if (third(p + ":boards") == board_third && third(p + ":deployment") == board_third) {
        direct_prefix = p;
      }
    }
    bk::redis::Options at_master = bk::redis::parse_url(cluster_url());
    const int board_slot = bk::redis::key_slot("{" + board + "}");
    for (const auto& range : cluster.master_command(0, {"CLUSTER", "SLOTS"}).elements) {
      if (range.at(0).as_int() <= board_slot && board_slot <= range.at(1).as_int()) {
        at_master.host = range.at(2).at(0).as_string();
        at_master.port = static_cast<int>(range.at(2).at(1).as_int());
      }
    }
    bk::redis::Connection direct(at_master);
    const bk::Config on_single =
        bk::parse_config(cluster_config(redis_url, false, prefix + "rs", {}), "single.yaml", {});
    const bk::Config on_cluster = bk::parse_config(
        cluster_config(cluster_url(), true, prefix + "rc", {}), "cluster.yaml", {});
    const bk::Config on_master = bk::parse_config(
        cluster_config(cluster_url(), false, direct_prefix, {}), "direct.yaml", {});
    std::vector<double> single_rates, cluster_rates, direct_rates;
    for (int round = 0; round < opt.rounds; ++round) {
      const auto updates = update_events(board, opt.events);
      if (round % 2 == 0) cluster_rates.push_back(apply_rate(cluster, on_cluster, updates));
      direct_rates.push_back(apply_rate(direct, on_master, updates));
      if (round % 2 == 1) cluster_rates.push_back(apply_rate(cluster, on_cluster, updates));
      single_rates.push_back(apply_rate(single, on_single, updates));
    }
    f.single_rate = median(single_rates);
    f.cluster_rate = median(cluster_rates);
    f.direct_rate = median(direct_rates);
    // Check: both sides hold the same best member and points.
    bk::service::Leaderboards a(on_single, single, bk::Clock(day + bk::Millis{43'200'000}));
    bk::service::Leaderboards b(on_cluster, cluster, bk::Clock(day + bk::Millis{43'200'000}));
    const auto top_a = a.reads().top_at({a.resolve(board, "daily", std::nullopt)}, 0, 1);
    const auto top_b = b.reads().top_at({b.resolve(board, "daily", std::nullopt)}, 0, 1);
    if (top_a.empty() || top_b.empty() || top_a[0].points != top_b[0].points ||
        top_a[0].member != top_b[0].member) {
      fail("routing phase: the cluster's board differs from the single node's");
    }
    for (auto* conn : {&single, &cluster}) {
      for (std::size_t i = 0; i < conn->masters(); ++i) {
        // The phase's keys (its own prefixes) go; other runs' stay.
        for (const std::string& pattern : {prefix + "c*", prefix + "r*"}) {
          std::string cursor = "0";
          do {
            const auto r =
                conn->master_command(i, {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
            cursor = r.at(0).as_string();
            for (const auto& k : r.at(1).elements) conn->command({"UNLINK", k.as_string()});
          } while (cursor != "0");
        }
      }
    }
    return f;
  }

  // The peer on `events` (node tests/bench/peer/peer.js), its boards under `base_key`.
  Side run_peer(const std::string& base_key, const std::vector<Event>& events) {
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
              {BK_PEER_SCRIPT, "--modules", opt.peer + "/node_modules", "--redis", redis_url,
               "--key", base_key, "--events", file, "--batch", "500"},
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

  // Our boards after `events` (and the peer's, when given) against the events themselves:
  // in every period the same member count, the same top points, and our top member holding
  // those points on the peer's board too. Fails loudly otherwise.
  void check_boards(const std::string& what, const std::string& key_prefix,
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
        fail(where + "boardkeeper has " + fmt_int(status.current_members) +
             " members, the events " + fmt_int(members));
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

  IngestFigures bench_ingest() {
    IngestFigures f;
    const auto events = uniform_events(opt.events, opt.ingest_members);

    // Baseline: a plain consumer group reader doing ZINCRBY x3 and XACK, pipelined per read.
    RawRedis raw(redis_url);
    const std::string base_prefix = prefix + "r";
    const std::string raw_stream = base_prefix + ":rawevents";
    fill_stream(raw, raw_stream, events);
    const std::vector<std::string> keys = {base_prefix + ":raw:daily", base_prefix + ":raw:weekly",
                                           base_prefix + ":raw:monthly"};
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
        const redisReply* fields = entry->element[1];
        std::string member, value;
        for (std::size_t j = 0; j + 1 < fields->elements; j += 2) {
          const std::string name(fields->element[j]->str, fields->element[j]->len);
          if (name == "member")
            member.assign(fields->element[j + 1]->str, fields->element[j + 1]->len);
          if (name == "value")
            value.assign(fields->element[j + 1]->str, fields->element[j + 1]->len);
        }
        for (const auto& k : keys) raw.append({"ZINCRBY", k, value, member});
        commands += 3;
      }
      raw.append(ack);
      for (std::size_t i = 0; i < commands; ++i) raw.read();
      consumed += static_cast<std::int64_t>(entries->elements);
    }
    f.raw = static_cast<double>(consumed) / seconds_since(t0);
    if (consumed != opt.events) fail("the baseline consumer read " + fmt_int(consumed) + " events");

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

    // Zipf-skewed members, s = 1.1: ours and the peer.
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

    // Flatness: our memory for a fixed member count, after --events and after --flat-events
    // uniform events over --flat-members members (few enough that both runs reach them all,
    // so what grows with the events alone shows; over --ingest-members the larger run also
    // reaches more members, and the boards grow with them).
    if (opt.flat_events > 0) {
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
    return f;
  }

  // ---- 3-6. spill, rehydrate, archive of a big board ----
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

    // 10. A deep read of the spilled board (the last 10 members) against the first 10.
    if (latency) {
      const std::vector<std::string> top = {
          "--config", config_path, "--now", at(50'400'000), "top", board, "daily", "-n", "10"};
      f.shallow_read = run_binary(top, dir + "/top.log");
      auto deep = top;
      deep.push_back("--offset");
      deep.push_back(std::to_string(opt.keep + spilled_members - 10));
      f.deep_read = run_binary(deep, dir + "/top-deep.log");
    }

    // 3. Archive: `boardkeeper tick` after the period's end and grace.
    f.archive =
        run_binary(tick_args(config_path, at(86'400'000 + 3'600'000)), dir + "/archive.log");
    const std::string period_where =
        where + " AND period = 'daily' AND period_id = '" + at(0).substr(0, 10) + "'";
    f.archived = pg.scalar("SELECT count(*) FROM " + schema + ".history" + period_where);
    const std::int64_t status_rows = pg.scalar(
        "SELECT count(*) FROM " + schema + ".periods" + period_where +
        " AND status = 'archived' AND members = " + std::to_string(opt.keep + spilled_members));
    if (f.archived != opt.keep + spilled_members || status_rows != 1) {
      fail("archive wrote " + fmt_int(f.archived) + " rows, expected " +
           fmt_int(opt.keep + spilled_members));
    }
    {
      // The period's rows as history_rows holds them (a large period's own table has one
      // more column, `part`).
      const std::string columns =
          "SELECT board, period, period_id, period_start, period_end, rank, position, member,"
          " points, achieved_at, name, metadata, tier FROM " +
          schema;
      const std::string rows =
          pg.copy_out(columns + ".history_rows" + period_where + " UNION ALL " + columns +
                      ".history_large" + period_where);
      const std::string table = schema + ".copy_history_" + std::to_string(spilled_members);
      pg.exec("CREATE TABLE " + table + " (LIKE " + schema + ".history_rows INCLUDING ALL)");
      f.archive_copy = pg.copy_in(table, rows);
      pg.exec("DROP TABLE " + table);
    }
    return f;
  }

  // Rows 27 and 28 (bench_closes.cpp), under key prefixes and schemas of their own.
  ClosesFigures bench_closes() {
    ClosesSetup s;
    s.redis_url = redis_url;
    s.pg_url = pg_url;
    s.key_prefix = prefix + "c";
    s.dir = dir;
    s.day = day;
    s.members = opt.closes_members;
    s.keep = opt.keep;
    s.rounds = opt.rounds;
    s.samples = opt.samples;
    s.boardkeeper = [](const std::vector<std::string>& args, const std::string& log) {
      return run_binary(args, log).seconds;
    };
    return bk_bench::bench_closes(s);
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

// The peer's redis-rank version, from its installed package.json.
std::string peer_version(const std::string& peer_dir) {
  std::ifstream in(peer_dir + "/node_modules/redis-rank/package.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto key = text.find("\"version\"");
  const auto open = text.find('"', text.find(':', key) + 1);
  if (key == std::string::npos || open == std::string::npos) return "?";
  return text.substr(open + 1, text.find('"', open + 1) - open - 1);
}

// "evalsha 15.3, xreadgroup 0.8 (nested: zadd 4.5, ...)": usec per event by command.
std::string breakdown(const Bench::ServerUse& use, std::int64_t events) {
  const auto list = [&](const std::vector<std::pair<std::string, double>>& commands) {
    std::string out;
    for (std::size_t i = 0; i < commands.size() && i < 5; ++i) {
      if (i > 0) out += ", ";
      out +=
          commands[i].first + " " + fmt("%.2f", commands[i].second / static_cast<double>(events));
    }
    return out;
  };
  std::string out = list(use.top_level);
  if (!use.nested.empty()) out += " (nested, counted once: " + list(use.nested) + ")";
  return out;
}

std::string breakdown(const Bench::Side& side) {
  return breakdown(side.server, side.events);
}

// Rows 11 and 12, and where row 11's server time went.
void print_cluster(const Bench::ClusterFigures& f) {
  const double one_node = f.replicated.at(0).usec;  // with a replica, as each master has
  const auto busiest = [](const std::vector<Bench::ServerUse>& v) {
    double most = 0;
    for (const Bench::ServerUse& u : v) most = std::max(most, u.usec);
    return most;
  };
  const auto shares = [&](const std::vector<Bench::ServerUse>& v) {
    std::string out;
    for (const Bench::ServerUse& u : v)
      out += (out.empty() ? "" : " / ") + fmt("%.0f%%", 100 * u.usec / one_node);
    return out;
  };
  row("11 Redis work per master, 30 boards, 10 each",
      "busiest " + fmt("%.0f%%", 100 * busiest(f.spread) / one_node) + " (" + shares(f.spread) +
          ")",
      "one node + replica " + fmt("%.1f us/event", one_node / static_cast<double>(f.events)),
      fmt("%.2fx", busiest(f.spread) / one_node), "<= 0.45x");
  const double bare = f.single.at(0).usec;
  row("  against one node without a replica", "",
      "one node " + fmt("%.1f us/event", bare / static_cast<double>(f.events)),
      fmt("%.2fx", busiest(f.spread) / bare), "");
  row("  the same, one stream for all boards",
      "busiest " + fmt("%.0f%%", 100 * busiest(f.one) / one_node) + " (" + shares(f.one) + ")", "",
      fmt("%.2fx", busiest(f.one) / one_node), "");
  row("  cb0..cb29 as they hash (" + std::to_string(f.hashed_boards[0]) + "/" +
          std::to_string(f.hashed_boards[1]) + "/" + std::to_string(f.hashed_boards[2]) + ")",
      "busiest " + fmt("%.0f%%", 100 * busiest(f.hashed) / one_node) + " (" + shares(f.hashed) +
          ")",
      "", fmt("%.2fx", busiest(f.hashed) / one_node), "");
  row("12 one board through the cluster (events/s)",
      fmt_int(static_cast<std::int64_t>(f.cluster_rate)) + "/s",
      "its master, no routing " + fmt_int(static_cast<std::int64_t>(f.direct_rate)) + "/s",
      fmt("%.2fx", f.cluster_rate / f.direct_rate), ">= 0.95x");
  row("  against the single node", "",
      "single node " + fmt_int(static_cast<std::int64_t>(f.single_rate)) + "/s",
      fmt("%.2fx", f.cluster_rate / f.single_rate), "");
  std::printf("\nalso: row 11 us/event by command: one node + replica %s; without %s",
              breakdown(f.replicated.at(0), f.events).c_str(),
              breakdown(f.single.at(0), f.events).c_str());
  for (std::size_t i = 0; i < f.spread.size(); ++i) {
    std::printf("; master %zu %s", i + 1, breakdown(f.spread[i], f.events).c_str());
  }
  std::printf("\n");
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
    if (opt.ingest_only) {
      const auto side =
          b.ingest_ours(b.prefix + "io", b.uniform_events(opt.events, opt.ingest_members));
      std::printf("ingest: %.0f events/s, server %.2f us/event (CPU %.2f)\n", side.rate,
                  side.server.usec / static_cast<double>(side.events),
                  side.server.cpu_usec / static_cast<double>(side.events));
      for (const auto& [name, usec] : side.server.top_level)
        std::printf("  %s %.2f\n", name.c_str(), usec / static_cast<double>(side.events));
      for (const auto& [name, usec] : side.server.nested)
        std::printf("  (nested) %s %.2f\n", name.c_str(), usec / static_cast<double>(side.events));
      b.cleanup();
      return 0;
    }
    if (opt.cluster_only) {
      std::fprintf(stderr, "cluster: %s events over 30 boards, 4 runs; %d rounds on one board\n",
                   fmt_int(opt.cluster_events).c_str(), opt.rounds);
      const auto c = b.bench_cluster();
      row("measurement", "boardkeeper", "raw baseline (same run)", "ratio", "target");
      print_cluster(c);
      b.cleanup();
      return 0;
    }
    if (opt.closes_only) {
      const auto closes = b.bench_closes();
      row("measurement", "boardkeeper", "raw baseline (same run)", "ratio", "target");
      for (const auto& r : closes_rows(closes)) row(r.what, r.ours, r.base, r.ratio, r.target);
      b.cleanup();
      return 0;
    }
    if (opt.board_only) {
      const auto big = b.bench_board(opt.members, true);
      std::printf(
          "spill %.2f s vs COPY %.2f s (%.2fx), peak RSS %.1f MiB; archive %.2f s vs COPY %.2f s "
          "(%.2fx), peak RSS %.1f MiB; rehydrating update p50 %.2f ms p99 %.2f ms; top of the "
          "last 10 %.0f ms %.1f MiB, of the first 10 %.0f ms %.1f MiB\n",
          big.spill.seconds, big.spill_copy, big.spill.seconds / big.spill_copy,
          big.spill.peak_rss_mib, big.archive.seconds, big.archive_copy,
          big.archive.seconds / big.archive_copy, big.archive.peak_rss_mib,
          median(big.rehydrate_ms), percentile(big.rehydrate_ms, 0.99),
          big.deep_read.seconds * 1000, big.deep_read.peak_rss_mib, big.shallow_read.seconds * 1000,
          big.shallow_read.peak_rss_mib);
      b.cleanup();
      return 0;
    }
    std::fprintf(stderr, "1/4 updates: %d rounds of %s events\n", opt.rounds,
                 fmt_int(opt.events).c_str());
    const auto u = b.bench_updates();
    if (opt.updates_only) {
      std::printf(
          "update: %.0f events/s, two-step %.0f events/s, plain ZMSCORE+ZADD %.0f events/s, "
          "%.2fx, two-step %.2fx; ZINCRBY x3 pipelined %.0f events/s, %.2fx\n",
          u.ours, u.two_step, u.plain, u.ours / u.plain, u.two_step / u.plain, u.raw,
          u.ours / u.raw);
      b.cleanup();
      return 0;
    }
    std::fprintf(stderr, "2/4 ingest: %s events over %s members%s\n", fmt_int(opt.events).c_str(),
                 fmt_int(opt.ingest_members).c_str(),
                 opt.peer.empty() ? " (no peer: --peer DIR runs it)" : ", and the peer");
    const auto in = b.bench_ingest();
    std::fprintf(stderr, "3/4 board of %s members (RSS reference)\n",
                 fmt_int(opt.members / 10).c_str());
    const auto small = b.bench_board(opt.members / 10, false);
    std::fprintf(stderr, "4/4 board of %s members\n", fmt_int(opt.members).c_str());
    const auto big = b.bench_board(opt.members, true);
    std::fprintf(stderr, "and rows 27, 28: tiered and untiered boards of %s members\n",
                 fmt_int(opt.closes_members).c_str());
    const auto closes = b.bench_closes();
    std::optional<Bench::ClusterFigures> cluster;
    if (std::getenv("BK_TEST_REDIS_CLUSTER_URL") != nullptr) {
      std::fprintf(stderr, "and the cluster: %s events over 30 boards, one board\n",
                   fmt_int(opt.cluster_events).c_str());
      cluster = b.bench_cluster();
    }

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
        "ZMSCORE+ZADD x3 plain " + fmt_int(static_cast<std::int64_t>(u.plain)) + "/s",
        fmt("%.2fx", u.ours / u.plain), ">= 1.0x");
    row("  two-step: next batch prepared meanwhile",
        fmt_int(static_cast<std::int64_t>(u.two_step)) + "/s", "",
        fmt("%.2fx", u.two_step / u.plain), "");
    row("  info: against ZINCRBY x3 (reads nothing)", "",
        "ZINCRBY x3 pipelined " + fmt_int(static_cast<std::int64_t>(u.raw)) + "/s",
        fmt("%.2fx", u.ours / u.raw), "");
    row("2 ingest end to end (events/s)", fmt_int(static_cast<std::int64_t>(in.ours)) + "/s",
        "XREADGROUP+ZINCRBY x3+XACK " + fmt_int(static_cast<std::int64_t>(in.raw)) + "/s",
        fmt("%.2fx", in.ours / in.raw), ">= 1.0x");
    const std::string archived = fmt_int(big.archived);
    row("3 archive " + archived + " members (s)", fmt("%.2f s", big.archive.seconds),
        "COPY " + archived + " rows " + fmt("%.2f s", big.archive_copy),
        fmt("%.2fx", big.archive.seconds / big.archive_copy), "<= 0.5x");
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
    const auto per_event = [](const Bench::Side& side, double usec) {
      return usec / static_cast<double>(side.events);
    };
    const auto server_us = [&](const Bench::Side& side) {
      return fmt("%.1f", per_event(side, side.server.usec)) + " (CPU " +
             fmt("%.1f", per_event(side, side.server.cpu_usec)) + ")";
    };
    const auto mb = [](std::int64_t bytes) {
      return fmt("%.1f MB", static_cast<double>(bytes) / 1e6);
    };
    const std::string zipf = fmt("%.1f", kZipfS);
    if (!opt.peer.empty()) {
      const std::string peer = "redis-rank " + peer_version(opt.peer) + " ";
      row("7 ingest vs the peer, uniform (events/s)",
          fmt_int(static_cast<std::int64_t>(in.uniform.rate)) + "/s",
          peer + fmt_int(static_cast<std::int64_t>(in.peer_uniform.rate)) + "/s",
          fmt("%.2fx", in.uniform.rate / in.peer_uniform.rate), ">= 1.0x");
      row("  Zipf s = " + zipf + " (events/s)",
          fmt_int(static_cast<std::int64_t>(in.zipf.rate)) + "/s",
          peer + fmt_int(static_cast<std::int64_t>(in.peer_zipf.rate)) + "/s",
          fmt("%.2fx", in.zipf.rate / in.peer_zipf.rate), ">= 2.0x");
      // Row 8: the update script against the peer's three ZINCRBY, the stream's own commands
      // beside it (the peer has no stream).
      const auto script_us = [&](const Bench::Side& side) {
        const Bench::StreamSplit split = Bench::split_stream(side.server);
        return fmt("%.1f", per_event(side, split.script)) + " (stream +" +
               fmt("%.1f", per_event(side, split.stream)) + ")";
      };
      const auto zincrby_us = [&](const Bench::Side& side) {
        return fmt("%.1f", per_event(side, Bench::usec_of(side.server, "zincrby")));
      };
      const auto script_ratio = [&](const Bench::Side& side, const Bench::Side& peer_side) {
        return fmt("%.2fx", per_event(side, Bench::split_stream(side.server).script) /
                                per_event(peer_side, Bench::usec_of(peer_side.server, "zincrby")));
      };
      row("8 update script server us/event, uniform", script_us(in.uniform),
          peer + "ZINCRBY x3 " + zincrby_us(in.peer_uniform),
          script_ratio(in.uniform, in.peer_uniform), "<= 1.0x");
      row("  Zipf s = " + zipf, script_us(in.zipf), peer + "ZINCRBY x3 " + zincrby_us(in.peer_zipf),
          script_ratio(in.zipf, in.peer_zipf), "");
      row("  info: all server us/event, uniform (CPU)", server_us(in.uniform),
          peer + server_us(in.peer_uniform),
          fmt("%.2fx", per_event(in.uniform, in.uniform.server.usec) /
                           per_event(in.peer_uniform, in.peer_uniform.server.usec)),
          "");
      row("  info: all, Zipf s = " + zipf, server_us(in.zipf), peer + server_us(in.peer_zipf),
          fmt("%.2fx", per_event(in.zipf, in.zipf.server.usec) /
                           per_event(in.peer_zipf, in.peer_zipf.server.usec)),
          "");
      row("9 Redis used_memory, uniform", mb(in.uniform.memory) + " (stream incl.)",
          peer + mb(in.peer_uniform.memory),
          fmt("%.2fx",
              static_cast<double>(in.uniform.memory) / static_cast<double>(in.peer_uniform.memory)),
          "<= 1.3x");
    }
    if (opt.flat_events > 0) {
      row("  ours, " + fmt_int(opt.flat_members) + " members: " + fmt_int(opt.flat_events) +
              " events vs " + fmt_int(opt.events),
          mb(in.flat.memory), "at " + fmt_int(opt.events) + ": " + mb(in.flat_base.memory),
          fmt("%.2fx",
              static_cast<double>(in.flat.memory) / static_cast<double>(in.flat_base.memory)),
          "<= 1.1x");
    }
    const std::string last10 = fmt_int(opt.keep + big.members - 10);
    row("10 top --offset " + last10 + " -n 10 (ms, MiB)",
        fmt("%.0f ms", big.deep_read.seconds * 1000) + ", " +
            fmt("%.1f MiB", big.deep_read.peak_rss_mib),
        "top -n 10: " + fmt("%.0f ms", big.shallow_read.seconds * 1000) + ", " +
            fmt("%.1f MiB", big.shallow_read.peak_rss_mib),
        fmt("%.2fx RSS", big.deep_read.peak_rss_mib / big.shallow_read.peak_rss_mib),
        "< 50 ms, RSS 1.1x");
    for (const auto& r : closes_rows(closes)) row(r.what, r.ours, r.base, r.ratio, r.target);
    if (cluster) print_cluster(*cluster);
    std::printf(
        "\nalso: ingest events drawn from %s members: uniform %s events hit %s, Zipf s = %s "
        "hit %s; boardkeeper's own Zipf memory %s",
        fmt_int(opt.ingest_members).c_str(), fmt_int(opt.events).c_str(),
        fmt_int(in.members).c_str(), zipf.c_str(), fmt_int(in.zipf_members).c_str(),
        mb(in.zipf.memory).c_str());
    if (!opt.peer.empty()) std::printf(", the peer's %s", mb(in.peer_zipf.memory).c_str());
    if (opt.flat_events > 0) {
      std::printf("; flatness runs hit %s and %s of %s members, ingest of %s events %s/s",
                  fmt_int(in.flat_base_members).c_str(), fmt_int(in.flat_members).c_str(),
                  fmt_int(opt.flat_members).c_str(), fmt_int(opt.flat_events).c_str(),
                  fmt_int(static_cast<std::int64_t>(in.flat.rate)).c_str());
    }
    std::printf("\nalso: Redis server us/event by command (commandstats), uniform: boardkeeper %s",
                breakdown(in.uniform).c_str());
    if (!opt.peer.empty()) std::printf("; the peer %s", breakdown(in.peer_uniform).c_str());
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
  if (argc > 1 && std::strcmp(argv[1], "--launch") == 0) return launch(argc, argv);
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
    } else if (a == "--ingest-members") {
      opt.ingest_members = value();
    } else if (a == "--flat-events") {
      opt.flat_events = value();
    } else if (a == "--flat-members") {
      opt.flat_members = value();
    } else if (a == "--peer") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "--peer needs a directory\n");
        return 2;
      }
      opt.peer = argv[++i];
    } else if (a == "--samples") {
      opt.samples = value();
    } else if (a == "--chunk") {
      opt.chunk = value();
    } else if (a == "--updates-only") {
      opt.updates_only = true;
    } else if (a == "--ingest-only") {
      opt.ingest_only = true;
    } else if (a == "--board-only") {
      opt.board_only = true;
    } else if (a == "--cluster-only") {
      opt.cluster_only = true;
    } else if (a == "--cluster-events") {
      opt.cluster_events = value();
    } else if (a == "--closes-members") {
      opt.closes_members = value();
    } else if (a == "--closes-only") {
      opt.closes_only = true;
    } else if (a == "--rounds") {
      opt.rounds = static_cast<int>(value());
    } else {
      std::fprintf(
          stderr,
          "usage: bk_bench [--members N] [--keep N] [--events N] [--distinct N] [--samples N] "
          "[--rounds N] [--chunk N] [--updates-only] [--ingest-only] [--board-only] "
          "[--cluster-only] [--cluster-events N] [--closes-only] [--closes-members N] "
          "[--ingest-members N] "
          "[--flat-events N] [--flat-members N] [--peer DIR]\n"
          "  --updates-only      the update phase alone, one line (for profiling)\n"
          "  --ingest-only       our ingest of the uniform events alone, one line: events/s and\n"
          "                      the server's µs per event (for profiling)\n"
          "  --board-only        the board of --members members alone, one line: spill,\n"
          "                      archive (each vs its COPY), the rehydrating update\n"
          "  --cluster-only      the cluster phase alone (rows 11, 12; BK_TEST_REDIS_CLUSTER_URL)\n"
          "  --cluster-events N  events over the 30 boards of row 11 (default 300,000)\n"
          "  --closes-only       rows 27 and 28 alone (tiers and close notices)\n"
          "  --closes-members N  members of each board of rows 27 and 28 (default 200,000)\n"
          "  --events N          events per update round and per ingest run (default 300,000)\n"
          "  --distinct N        members the update events hit (default 50,000)\n"
          "  --ingest-members N  members the ingest and peer events are drawn from, uniform\n"
          "                      and Zipf s = 1.1 (default 100,000)\n"
          "  --flat-events N     also compare Redis memory after N and after --events uniform\n"
          "                      events over --flat-members members (default: not)\n"
          "  --flat-members N    members of that comparison; --events should reach them all\n"
          "                      (default 20,000)\n"
          "  --peer DIR          run the peer (redis-rank, tests/bench/peer) with the npm\n"
          "                      packages installed in DIR (tests/bench/peer/npm-ci.sh DIR)\n");
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
