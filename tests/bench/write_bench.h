// Rows 24-26 of the serve benchmark: scores written over HTTP (issue 38's targets), each
// beside a baseline measured in the same run (serve_bench.cpp measures the raw ZINCRBY one).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "redis/connection.h"
#include "serve_clients.h"

namespace bk::bench {

struct WriteSetup {
  int port = 0;                      // a serve that takes `token` as a write token
  std::string token;                 // ...
  std::string board = "sv";          // one period (daily), all but its hot members spilled
  std::string board3 = "sv3";        // daily, weekly and monthly, written like `board`
  std::vector<std::string> hot;      // `board`'s hot members (row 24 writes them)
  std::vector<std::string> spilled;  // some of its spilled members (row 25: one write each)
  std::string batch_board = "eh";    // row 26's events over HTTP
  std::string stream_board = "es";   // the same events through `stream`, as `ingest` reads it
  std::string stream;                // the stream `ingest_drain` consumes
  int connections = 16;              // rows 24 and 25
  int batch_connections = 4;         // row 26
  int seconds = 5;
  std::int64_t events = 200'000;  // row 26 (whole requests of 1,000)
  // Runs `boardkeeper ingest --drain` (the config's boards, `stream`); its wall seconds.
  std::function<double()> ingest_drain;
};

struct WriteFigures {
  PostLoadFigures hot, hot3, spilled, batch;
  std::int64_t events = 0;
  double batch_events_per_s = 0, ingest_events_per_s = 0;
};

// Rows 24-26 against the serve at `setup.port` (their order: hot writes on `board`, then on
// `board3`, spilled writes on `board`, the batches and the stream). Every answer is checked.
// The config's entries of the boards the rows add: board3, batch_board and stream_board (each
// of daily, weekly and monthly periods).
std::string write_boards_yaml();

WriteFigures write_rows(const WriteSetup& setup, bk::redis::Connection& conn);

// The rows' lines of the table, `zincrby` being redis-benchmark's ZINCRBY (16 clients).
// Deletes every key under `prefix` (the bench's own key prefix).
void forget_keys(bk::redis::Connection& conn, const std::string& prefix);

void print_write_rows(const WriteFigures& f, double zincrby_rps, double zincrby_p99_ms);

}  // namespace bk::bench
