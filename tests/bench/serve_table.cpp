// The serve benchmark's table (see serve_bench.h): a line a row, ours beside its baseline,
// their ratio and the target.
#include <cstdio>
#include <string>

#include "serve_bench.h"

namespace bk::bench {
namespace {

void row(const std::string& what, const std::string& ours, const std::string& baseline,
         const std::string& ratio, const std::string& target) {
  std::printf("%-44s %-24s %-34s %-8s %s\n", what.c_str(), ours.c_str(), baseline.c_str(),
              ratio.c_str(), target.c_str());
}

// Rows 13, 14 and 15: the top page, 100 ids and the cursor page at the bottom.
void print_request_rows(const ReadFigures& r) {
  char a[64], b[64], c[64];
  std::snprintf(a, sizeof a, "%.0f/s p99 %.2f ms", r.top.rps, r.top.p99_ms);
  std::snprintf(b, sizeof b, "ZRANGE 0 9 %.0f/s p99 %.2f ms", r.raw_top.rps, r.raw_top.p99_ms);
  std::snprintf(c, sizeof c, "%.2fx", r.top.rps / r.raw_top.rps);
  row("13 GET top?limit=10 (req/s, wrk)", a, b, c, ">= 0.5x");
  std::snprintf(a, sizeof a, "%.0f/s p99 %.2f ms", r.ids.rps, r.ids.p99_ms);
  std::snprintf(b, sizeof b, "ZMSCORE x100 %.0f/s p99 %.2f ms", r.raw_ids.rps, r.raw_ids.p99_ms);
  std::snprintf(c, sizeof c, "%.2fx", r.ids.rps / r.raw_ids.rps);
  row("14 GET members?ids= (100 ids, req/s)", a, b, c, "p99 < 10 ms");
  std::snprintf(a, sizeof a, "alone p50 %.2f ms", percentile(r.ids_alone_ms, 0.5));
  row("   (one request at a time)", a, "", "", "p50 < 2 ms");
  std::snprintf(a, sizeof a, "p50 %.2f p99 %.2f ms", percentile(r.deep_ms, 0.5),
                percentile(r.deep_ms, 0.99));
  std::snprintf(b, sizeof b, "first page p50 %.2f p99 %.2f ms", percentile(r.shallow_ms, 0.5),
                percentile(r.shallow_ms, 0.99));
  std::snprintf(c, sizeof c, "%.2fx", percentile(r.deep_ms, 0.5) / percentile(r.shallow_ms, 0.5));
  row("15 cursor page at the bottom (100 rows)", a, b, c, "< 50 ms");
}

// Rows 17 and 19: the slow and idle clients, serve's memory with them, the cold ranks' load.
void print_memory_rows(const ServeOptions& opt, const ReadFigures& r) {
  char a[64], b[64], c[64];
  const SlowClientsFigures& crowd = r.crowd;
  std::snprintf(a, sizeof a, "readyz p99 %.2f, top p99 %.2f ms", crowd.readyz_p99_ms,
                crowd.top_p99_ms);
  std::snprintf(b, sizeof b, "without them: %.2f, %.2f ms", crowd.quiet_readyz_p99_ms,
                crowd.quiet_top_p99_ms);
  std::snprintf(c, sizeof c, "%.2fx", crowd.top_p99_ms / crowd.quiet_top_p99_ms);
  row("17 " + std::to_string(crowd.slow) + " slow + " + std::to_string(crowd.idle) +
          " idle clients",
      a, b, c, "p99 < 50 ms");
  // The cold ranks (row 19) are memory serve holds whatever its clients: the target is for
  // what the clients cost.
  std::snprintf(a, sizeof a, "RSS %.1f MiB (%.1f ranks)", crowd.rss_mib, r.load.index_mib);
  std::snprintf(b, sizeof b, "SIGTERM to exit %.2f s", crowd.sigterm_exit_s);
  row("   (serve with them connected)", a, b, "", "< 64 MiB + ranks, < 5 s");
  std::snprintf(a, sizeof a, "%.2f s, %.1f MiB", r.load.seconds, r.load.index_mib);
  std::snprintf(b, sizeof b, "serve's RSS grew %.1f MiB", r.load.rss_growth_mib);
  std::snprintf(c, sizeof c, "%.1f",
                r.load.index_mib * 1e6 / static_cast<double>(opt.members - 1000));
  row("19 cold ranks into memory (load, size)", a, b, c, "MiB per million cold members");
}

// Rows 20, 21 and 22: reads of spilled members.
void print_spilled_rows(const ReadFigures& r) {
  char a[64], b[64], c[64];
  std::snprintf(a, sizeof a, "%.0f/s p99 %.2f ms", r.memory.member.rps, r.memory.member.p99_ms);
  std::snprintf(b, sizeof b, "around k=5: %.0f/s p99 %.2f ms", r.memory.around.rps,
                r.memory.around.p99_ms);
  row("20 GET members/{m} of a spilled member", a, b, "", "p99 < 5 ms both");
  std::snprintf(a, sizeof a, "p99 %.2f ms", r.memory.top_crowded.p99_ms);
  std::snprintf(b, sizeof b, "alone: p99 %.2f ms", r.memory.top_quiet.p99_ms);
  std::snprintf(c, sizeof c, "%.2fx", r.memory.top_crowded.p99_ms / r.memory.top_quiet.p99_ms);
  row("21 top?limit=10 (4 conns) beside 48 POSTing", a, b, c, "<= 2x");
  std::snprintf(a, sizeof a, "%.0f/s p99 %.2f ms", r.memory.cohort.rps, r.memory.cohort.p99_ms);
  row("31 GET members/{m}/cohort, 30 rows + zones", a, "", "", "p99 < 5 ms");
  if (const auto& replica = r.replica) {
    std::snprintf(a, sizeof a, "with: %.2f s, %.0f/s", replica->primary_cpu_with,
                  replica->with.rps);
    std::snprintf(b, sizeof b, "without read_url: %.2f s, %.0f/s", replica->primary_cpu_without,
                  replica->without.rps);
    std::snprintf(c, sizeof c, "%.2fx", replica->primary_cpu_with / replica->primary_cpu_without);
    row("22 primary CPU, 100 ids, memory off", a, b, c, "report both");
  }
}

// Rows 23 and 18: the rate limiter's cost, keep-alive; the slow clients that came back.
void print_connection_rows(const ReadFigures& r) {
  char a[64], b[64], c[64];
  std::snprintf(a, sizeof a, "%.0f/s with a read limit", r.limiter.with_rps);
  std::snprintf(b, sizeof b, "%.0f/s without", r.limiter.without_rps);
  std::snprintf(c, sizeof c, "%.3fx", r.limiter.with_rps / r.limiter.without_rps);
  row("23 top?limit=10, rate limiter (never reached)", a, b, c, ">= 0.95x");
  const KeepAliveFigures& kept = r.kept;
  std::snprintf(a, sizeof a, "%d requests, %d connection%s", kept.requests, kept.connections,
                kept.connections == 1 ? "" : "s");
  std::snprintf(b, sizeof b, "%.0f req/s one at a time", kept.requests / kept.seconds);
  std::snprintf(c, sizeof c, "%.0f", static_cast<double>(kept.requests) / kept.connections);
  row("18 keep-alive, one client (req/connection)", a, b, c, "1 connection");
  std::printf("   slow clients the server closed and that connected again: %d\n",
              r.crowd.slow_reconnects);
}

}  // namespace

void print_table(const ServeOptions& opt, const ReadFigures& reads, const WriteRowFigures& w) {
  std::printf("\nboardkeeper serve: %lld members (%lld spilled), %d connections, %d s a run\n\n",
              static_cast<long long>(opt.members), static_cast<long long>(opt.members - 1000),
              opt.connections, opt.seconds);
  row("measurement", "boardkeeper", "raw baseline (same run)", "ratio", "target");
  print_request_rows(reads);
  print_memory_rows(opt, reads);
  print_spilled_rows(reads);
  print_connection_rows(reads);
  print_write_rows(w.writes, w.raw_incr.rps, w.raw_incr.p99_ms);
  std::printf("\n");
}

}  // namespace bk::bench
