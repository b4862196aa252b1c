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
//
// The rows live one group a file (tests/bench/bench.h): bench_updates.cpp, bench_ingest.cpp,
// bench_board.cpp, bench_cluster.cpp, bench_closes.cpp; this file parses the options, runs the
// phases and prints the table.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "bench.h"

namespace bk_bench {

ClosesFigures Bench::bench_closes() {
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

namespace {

double per_event(const Bench::Side& side, double usec) {
  return usec / static_cast<double>(side.events);
}

std::string server_us(const Bench::Side& side) {
  return fmt("%.1f", per_event(side, side.server.usec)) + " (CPU " +
         fmt("%.1f", per_event(side, side.server.cpu_usec)) + ")";
}

std::string mb(std::int64_t bytes) {
  return fmt("%.1f MB", static_cast<double>(bytes) / 1e6);
}

// --ingest-only, --cluster-only, --board-only: one phase alone; false when none was asked.
bool run_one_phase(Bench& b) {
  const Options& opt = b.opt;
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
    return true;
  }
  if (opt.cluster_only) {
    std::fprintf(stderr, "cluster: %s events over 30 boards, 4 runs; %d rounds on one board\n",
                 fmt_int(opt.cluster_events).c_str(), opt.rounds);
    const auto c = b.bench_cluster();
    row("measurement", "boardkeeper", "raw baseline (same run)", "ratio", "target");
    print_cluster(c);
    return true;
  }
  if (opt.league_only) {
    row("measurement", "boardkeeper", "raw baseline (same run)", "ratio", "target");
    for (const auto& r : league_rows(b)) row(r.what, r.ours, r.base, r.ratio, r.target);
    return true;
  }
  if (opt.closes_only) {
    const auto closes = b.bench_closes();
    row("measurement", "boardkeeper", "raw baseline (same run)", "ratio", "target");
    for (const auto& r : closes_rows(closes)) row(r.what, r.ours, r.base, r.ratio, r.target);
    return true;
  }
  if (opt.board_only) {
    const auto big = b.bench_board(opt.members, true);
    std::printf(
        "spill %.2f s vs COPY %.2f s (%.2fx), peak RSS %.1f MiB; archive %.2f s vs COPY %.2f s "
        "(%.2fx), peak RSS %.1f MiB; rehydrating update p50 %.2f ms p99 %.2f ms; top of the "
        "last 10 %.0f ms %.1f MiB, of the first 10 %.0f ms %.1f MiB\n",
        big.spill.seconds, big.spill_copy, big.spill.seconds / big.spill_copy,
        big.spill.peak_rss_mib, big.archive.seconds, big.archive_copy,
        big.archive.seconds / big.archive_copy, big.archive.peak_rss_mib, median(big.rehydrate_ms),
        percentile(big.rehydrate_ms, 0.99), big.deep_read.seconds * 1000,
        big.deep_read.peak_rss_mib, big.shallow_read.seconds * 1000, big.shallow_read.peak_rss_mib);
    return true;
  }
  return false;
}

void print_title(Bench& b) {
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
}

void print_rows_1_to_6(const Bench::UpdateFigures& u, const Bench::IngestFigures& in,
                       const Bench::BoardFigures& big, const Bench::BoardFigures& small) {
  row("1 update, 3 periods, tie-break (events/s)",
      fmt_int(static_cast<std::int64_t>(u.ours)) + "/s",
      "ZMSCORE+ZADD x3 plain " + fmt_int(static_cast<std::int64_t>(u.plain)) + "/s",
      fmt("%.2fx", u.ours / u.plain), ">= 1.0x");
  row("  two-step: next batch prepared meanwhile",
      fmt_int(static_cast<std::int64_t>(u.two_step)) + "/s", "", fmt("%.2fx", u.two_step / u.plain),
      "");
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
}

// Rows 7-9: ours against the peer on the same events.
void print_peer_rows(const Options& opt, const Bench::IngestFigures& in) {
  const std::string zipf = fmt("%.1f", kZipfS);
  const std::string peer = "redis-rank " + peer_version(opt.peer) + " ";
  row("7 ingest vs the peer, uniform (events/s)",
      fmt_int(static_cast<std::int64_t>(in.uniform.rate)) + "/s",
      peer + fmt_int(static_cast<std::int64_t>(in.peer_uniform.rate)) + "/s",
      fmt("%.2fx", in.uniform.rate / in.peer_uniform.rate), ">= 1.0x");
  row("  Zipf s = " + zipf + " (events/s)", fmt_int(static_cast<std::int64_t>(in.zipf.rate)) + "/s",
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
      peer + "ZINCRBY x3 " + zincrby_us(in.peer_uniform), script_ratio(in.uniform, in.peer_uniform),
      "<= 1.0x");
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

void print_flat_row(const Options& opt, const Bench::IngestFigures& in) {
  row("  ours, " + fmt_int(opt.flat_members) + " members: " + fmt_int(opt.flat_events) +
          " events vs " + fmt_int(opt.events),
      mb(in.flat.memory), "at " + fmt_int(opt.events) + ": " + mb(in.flat_base.memory),
      fmt("%.2fx", static_cast<double>(in.flat.memory) / static_cast<double>(in.flat_base.memory)),
      "<= 1.1x");
}

void print_row_10(const Options& opt, const Bench::BoardFigures& big) {
  const std::string last10 = fmt_int(opt.keep + big.members - 10);
  row("10 top --offset " + last10 + " -n 10 (ms, MiB)",
      fmt("%.0f ms", big.deep_read.seconds * 1000) + ", " +
          fmt("%.1f MiB", big.deep_read.peak_rss_mib),
      "top -n 10: " + fmt("%.0f ms", big.shallow_read.seconds * 1000) + ", " +
          fmt("%.1f MiB", big.shallow_read.peak_rss_mib),
      fmt("%.2fx RSS", big.deep_read.peak_rss_mib / big.shallow_read.peak_rss_mib),
      "< 50 ms, RSS 1.1x");
}

void print_also(const Options& opt, const Bench::IngestFigures& in, const Bench::BoardFigures& big,
                const Bench::BoardFigures& small) {
  const std::string zipf = fmt("%.1f", kZipfS);
  std::printf(
      "\nalso: ingest events drawn from %s members: uniform %s events hit %s, Zipf s = %s "
      "hit %s; boardkeeper's own Zipf memory %s",
      fmt_int(opt.ingest_members).c_str(), fmt_int(opt.events).c_str(), fmt_int(in.members).c_str(),
      zipf.c_str(), fmt_int(in.zipf_members).c_str(), mb(in.zipf.memory).c_str());
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
}

// Every phase (or the update phase alone, --updates-only), then the table.
void run_all(Bench& b) {
  const Options& opt = b.opt;
  std::fprintf(stderr, "1/4 updates: %d rounds of %s events\n", opt.rounds,
               fmt_int(opt.events).c_str());
  const auto u = b.bench_updates();
  if (opt.updates_only) {
    std::printf(
        "update: %.0f events/s, two-step %.0f events/s, plain ZMSCORE+ZADD %.0f events/s, "
        "%.2fx, two-step %.2fx; ZINCRBY x3 pipelined %.0f events/s, %.2fx\n",
        u.ours, u.two_step, u.plain, u.ours / u.plain, u.two_step / u.plain, u.raw, u.ours / u.raw);
    return;
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
  std::fprintf(stderr, "and rows 29, 30: league and plain boards of %s members\n",
               fmt_int(opt.league_members).c_str());
  const auto league = league_rows(b);
  std::optional<Bench::ClusterFigures> cluster;
  if (std::getenv("BK_TEST_REDIS_CLUSTER_URL") != nullptr) {
    std::fprintf(stderr, "and the cluster: %s events over 30 boards, one board\n",
                 fmt_int(opt.cluster_events).c_str());
    cluster = b.bench_cluster();
  }
  print_title(b);
  print_rows_1_to_6(u, in, big, small);
  if (!opt.peer.empty()) print_peer_rows(opt, in);
  if (opt.flat_events > 0) print_flat_row(opt, in);
  print_row_10(opt, big);
  for (const auto& r : closes_rows(closes)) row(r.what, r.ours, r.base, r.ratio, r.target);
  for (const auto& r : league) row(r.what, r.ours, r.base, r.ratio, r.target);
  if (cluster) print_cluster(*cluster);
  print_also(opt, in, big, small);
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
    if (!run_one_phase(b)) run_all(b);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    status = 1;
  }
  b.cleanup();
  return status;
}

void print_usage() {
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
      "  --league-only       rows 29 and 30 alone (leagues; --league-members N, 100,000)\n"
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
}

// The flags that pick one phase alone, by name.
bool* phase_flag(Options& opt, const std::string& a) {
  const std::pair<const char*, bool*> flags[] = {
      {"--updates-only", &opt.updates_only}, {"--ingest-only", &opt.ingest_only},
      {"--board-only", &opt.board_only},     {"--cluster-only", &opt.cluster_only},
      {"--closes-only", &opt.closes_only},   {"--league-only", &opt.league_only}};
  for (const auto& [name, flag] : flags) {
    if (a == name) return flag;
  }
  return nullptr;
}

// The options into `opt`; an exit status when the program stops here (--help, a bad flag).
std::optional<int> parse_options(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::int64_t {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::stoll(argv[++i]);
    };
    if (bool* flag = phase_flag(opt, a)) {
      *flag = true;
    } else if (a == "--members") {
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
    } else if (a == "--cluster-events") {
      opt.cluster_events = value();
    } else if (a == "--closes-members") {
      opt.closes_members = value();
    } else if (a == "--league-members") {
      opt.league_members = value();
    } else if (a == "--rounds") {
      opt.rounds = static_cast<int>(value());
    } else {
      print_usage();
      return a == "--help" ? 0 : 2;
    }
  }
  return std::nullopt;
}

}  // namespace
}  // namespace bk_bench

int main(int argc, char** argv) {
  using namespace bk_bench;
  if (argc > 1 && std::strcmp(argv[1], "--launch") == 0) return launch(argc, argv);
  Options opt;
  if (const auto stop = parse_options(argc, argv, opt)) return *stop;
  try {
    return run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
}
