// The serve benchmark's options and figures (rows 13-26, 16 aside): what its runs measure
// (serve_bench.cpp) and its table prints (serve_table.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "serve_clients.h"
#include "write_bench.h"

namespace bk::bench {

struct ServeOptions {
  std::int64_t members = 1'000'000;
  int seconds = 5;
  int connections = 16;
  int slow = 2000;  // row 17
  int idle = 200;
  int keepalive = 10000;                // row 18
  std::int64_t write_events = 200'000;  // row 26
};

// One run of wrk or redis-benchmark.
struct WrkFigures {
  double rps = 0;
  double p99_ms = 0;
};

// Row 19: the first read of the spilled period asked for its cold ranks; how long until they
// are in serve's memory, and what they take there.
struct ColdLoad {
  double seconds = 0;
  double index_mib = 0;
  double rss_growth_mib = 0;
};

// Rows 20 and 21: a spilled member's rank and neighbourhood under 16 connections; the hot top
// page from 4 connections alone and beside 48 connections each POSTing 100 spilled ids.
struct ColdReadFigures {
  WrkFigures member{}, around{}, top_quiet{}, top_crowded{};
  WrkFigures cohort{};  // row 31: a league member's cohort (30 rows with zones)
};

// Row 22: the primary's CPU seconds while 16 connections read 100 spilled ids (cold ranks from
// memory off, so that every read asks PostgreSQL), without and with postgres.read_url.
struct ReplicaFigures {
  double primary_cpu_without = 0, primary_cpu_with = 0;
  WrkFigures without{}, with{};
};

// Row 23: top?limit=10 without a rate limit and with one that is never reached.
struct LimiterFigures {
  double without_rps = 0, with_rps = 0;
};

// The read rows, in the order they are measured.
struct ReadFigures {
  ColdLoad load{};                              // 19
  WrkFigures top{}, raw_top{};                  // 13: ours, ZRANGE 0 9
  LimiterFigures limiter{};                     // 23
  WrkFigures ids{}, raw_ids{};                  // 14: ours, ZMSCORE of the same ids
  std::vector<double> ids_alone_ms{};           // 14, one request at a time
  ColdReadFigures memory{};                     // 20, 21
  std::optional<ReplicaFigures> replica{};      // 22, with BK_TEST_POSTGRES_READ_URL
  std::vector<double> deep_ms{}, shallow_ms{};  // 15: the last page, the first page
  KeepAliveFigures kept{};                      // 18
  SlowClientsFigures crowd{};                   // 17
};

// The write rows (24-26) and their baseline, redis-benchmark's ZINCRBY.
struct WriteRowFigures {
  WriteFigures writes{};
  WrkFigures raw_incr{};
};

// The table of every row, on stdout.
void print_table(const ServeOptions& opt, const ReadFigures& reads, const WriteRowFigures& w);

}  // namespace bk::bench
