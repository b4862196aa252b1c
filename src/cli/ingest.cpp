// ingest: the stream consumer, until SIGTERM/SIGINT (after its current batch) or, with
// --drain, until the stream is empty.
#include "lifecycle/ingest.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace bk::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int /*sig*/) {
  g_stop.store(true);
}

}  // namespace

int ingest(Context& ctx, const IngestArgs& args) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;  // a blocking read resumes; the loop checks the flag after it
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  lifecycle::IngestOptions o;
  o.stream = args.stream.empty() ? ctx.config().redis.key_prefix + ":events" : args.stream;
  o.group = args.group;
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  o.consumer = std::string(host) + "-" + std::to_string(getpid());
  o.drain = args.drain;
  o.reclaim_idle = Millis{args.reclaim_idle_ms};
  spdlog::info("ingest: stream {} group {} consumer {}{}", o.stream, o.group, o.consumer,
               o.drain ? " (until drained)" : "");
  const auto s = lifecycle::ingest(ctx.redis(), ctx.leaderboards(), o, g_stop);
  spdlog::info("ingest: {} read, {} applied, {} duplicates, {} dead-lettered, {} reclaimed{}",
               s.read, s.applied, s.duplicates, s.dead, s.reclaimed,
               g_stop.load() ? " (stopped by signal)" : "");
  if (ctx.format() == Format::json) {
    std::cout << JsonLine()
                     .num("read", s.read)
                     .num("applied", s.applied)
                     .num("duplicates", s.duplicates)
                     .num("dead", s.dead)
                     .num("reclaimed", s.reclaimed)
                     .done()
              << "\n";
  }
  return 0;
}

}  // namespace bk::cli
