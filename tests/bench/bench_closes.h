// Rows 27 and 28 (issue 39): what a board's tiers and close notices cost, each side measured
// against the same board without them in the same run. 27: `boardkeeper tick` archiving a
// tiered board that publishes close notices against the archive of the untiered board; 28: the
// rank of a spilled member (`rank`) and of 100 (`ids=`) through the library, with the
// PostgreSQL round trips of a request counted. bench.cpp runs them and prints their rows.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/time.h"

namespace bk_bench {

using Clock = std::chrono::steady_clock;

// bench.cpp's helpers.
[[noreturn]] void fail(const std::string& what);
double seconds_since(Clock::time_point t0);
std::string fmt_int(std::int64_t v);
std::string fmt(const char* format, double v);
double median(std::vector<double> v);
double percentile(std::vector<double> v, double p);

struct ClosesSetup {
  std::string redis_url, pg_url;
  // The two boards are deployments of their own: key prefixes key_prefix + "t" and + "u", and
  // schemas of those names (a tick lists the boards of its schema's cold rows too), made and
  // dropped by the rows.
  std::string key_prefix;
  std::string dir;                 // scratch: configs, logs, metrics files
  bk::Instant day;                 // the day the boards' daily period lies in (two days ago)
  std::int64_t members = 200'000;  // archived members of each board: `keep` hot, the rest spilled
  std::int64_t keep = 10'000;      // hot_keep
  int rounds = 3;                  // archives of each board, in turns
  std::int64_t samples = 2'000;    // rank requests a board; ids= requests: a twentieth, 100 ids
  // Runs `boardkeeper ARGS` as a child process (output in LOG); its wall time in seconds.
  std::function<double(const std::vector<std::string>& args, const std::string& log)> boardkeeper;
};

// The PostgreSQL round trips of one kind of request (row 28), tiered and untiered.
struct RoundTrips {
  double tiered = 0, plain = 0;              // a request of a reader that has read before
  double first_tiered = 0, first_plain = 0;  // the first request on a new connection
};

struct ClosesFigures {
  std::int64_t archived = 0;  // members each archive wrote
  // 27, per round: the whole tick that archived each board (a child process), and the
  // untiered tick's publishing of its close notice (the `closes` phase of its metrics).
  std::vector<double> tiered_s, plain_s, plain_publish_s;
  std::vector<double> tiered_archive_s, plain_archive_s;  // their `archive` phases
  // 28: the requests' latencies (ms), tiered and untiered in turns.
  std::vector<double> rank_tiered_ms, rank_plain_ms, ids_tiered_ms, ids_plain_ms;
  RoundTrips rank, ids;
};

ClosesFigures bench_closes(const ClosesSetup& setup);

// Rows 27 and 28 as the table prints them.
struct TableRow {
  std::string what, ours, base, ratio, target;
};
std::vector<TableRow> closes_rows(const ClosesFigures& f);

struct Bench;
// Rows 29 and 30 (bench_league.cpp): league updates and the league close against a plain board.
std::vector<TableRow> league_rows(Bench& b);

}  // namespace bk_bench
