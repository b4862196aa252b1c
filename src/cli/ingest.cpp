// ingest: the stream consumer, until SIGTERM/SIGINT (after its current batch) or, with
// --drain, until the stream is empty. With --listen it serves /metrics, /healthz and
// /readyz on a thread of its own while it runs.
#include "lifecycle/ingest.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/http_server.h"
#include "cli/logging.h"
#include "cli/metrics_io.h"
#include "cli/output.h"
#include "lifecycle/backend.h"

namespace bk::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int /*sig*/) {
  g_stop.store(true);
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The consumer's live metrics and probes: updated on the consumer's thread, read on the
// HTTP thread (the registry locks; the probe state is atomic).
class IngestMetrics : public lifecycle::IngestObserver {
 public:
  using Backend = lifecycle::Backend;

  explicit IngestMetrics(std::chrono::milliseconds block)
      : stale_after_(std::max<std::chrono::nanoseconds>(std::chrono::seconds{30}, 3 * block)) {
    add_build_info(registry_);
    for (auto* c : {&read_, &reclaimed_, &applied_, &duplicate_, &dead_, &unavailable_,
                    &rehydrated_, &redis_errors_, &postgres_errors_}) {
      c->touch();
    }
    // Every reason exists from the start, so rate() and absent() behave from the first scrape.
    refused_.touch({{"reason", "malformed"}});
    for (int r = static_cast<int>(service::Refusal::invalid_board);
         r <= static_cast<int>(service::Refusal::cold_tier); ++r) {
      refused_.touch({{"reason", service::refusal_label(static_cast<service::Refusal>(r))}});
    }
  }

  void loop_turn() override { last_turn_ns_.store(steady_ns()); }

  void redis_round_trip(bool ok) override {
    ready_.store(ok);
    if (ok) {
      last_success_.set(unix_now());
    } else {
      redis_errors_.add(1);
    }
  }

  void batch_done(const lifecycle::IngestStats& b, std::chrono::duration<double> took) override {
    read_.add(static_cast<double>(b.read));
    reclaimed_.add(static_cast<double>(b.reclaimed));
    applied_.add(static_cast<double>(b.applied));
    duplicate_.add(static_cast<double>(b.duplicates));
    dead_.add(static_cast<double>(b.dead));
    for (const auto& [reason, n] : b.dead_by_reason) {
      refused_.add(static_cast<double>(n), {{"reason", reason}});
    }
    unavailable_.add(static_cast<double>(b.unavailable));
    rehydrated_.add(static_cast<double>(b.rehydrated));
    postgres_errors_.add(static_cast<double>(b.postgres_errors));
    batch_seconds_.observe(took.count());
  }

  void failed(Backend backend) {
    // Redis failures are told by redis_round_trip(false) already.
    if (backend == Backend::postgres) postgres_errors_.add(1);
  }

  HttpServer::Response answer(std::string_view path) const {
    if (path == "/metrics") {
      return {200, std::string(kPrometheusText), registry_.render()};
    }
    if (path == "/healthz") {
      const std::chrono::nanoseconds since{steady_ns() - last_turn_ns_.load()};
      if (since <= stale_after_) return {200, "text/plain; charset=utf-8", "ok\n"};
      return {503, "text/plain; charset=utf-8",
              "the consumer loop has not turned for " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(since).count()) +
                  " s\n"};
    }
    if (path == "/readyz") {
      if (ready_.load()) return {200, "text/plain; charset=utf-8", "ok\n"};
      return {503, "text/plain; charset=utf-8",
              "no successful Redis round trip yet, or the last failed\n"};
    }
    return {404, "text/plain; charset=utf-8", "not found; try /metrics, /healthz or /readyz\n"};
  }

 private:
  metrics::Registry registry_;
  metrics::Family& read_ =
      registry_.counter("boardkeeper_ingest_entries_read_total",
                        "Stream entries read (new, reclaimed and redelivered), valid or not.");
  metrics::Family& reclaimed_ =
      registry_.counter("boardkeeper_ingest_entries_reclaimed_total",
                        "Stream entries taken over from consumers that left them pending.");
  metrics::Family& applied_ =
      registry_.counter("boardkeeper_ingest_events_applied_total", "Events applied to boards.");
  metrics::Family& duplicate_ = registry_.counter(
      "boardkeeper_ingest_events_duplicate_total",
      "Events not applied again: their event id was applied before (redelivery).");
  metrics::Family& refused_ = registry_.counter(
      "boardkeeper_ingest_events_refused_total",
      "Events refused, by reason: malformed, or refused by the board's rules (closed, "
      "out_of_range, ...). Each is moved to the dead-letter stream.");
  metrics::Family& dead_ =
      registry_.counter("boardkeeper_ingest_events_dead_lettered_total",
                        "Events moved to the dead-letter stream <stream>:dead and acknowledged.");
  metrics::Family& unavailable_ = registry_.counter(
      "boardkeeper_ingest_events_unavailable_total",
      "Events left pending because their cold rows were unreachable; they are read again.");
  metrics::Family& rehydrated_ = registry_.counter(
      "boardkeeper_rehydrations_total",
      "Member periods brought back from the cold tier by an update (a spilled member scored).");
  metrics::Family& redis_errors_ = registry_.counter(
      "boardkeeper_redis_errors_total",
      "Redis errors met by the consumer loop (connection, timeout, error reply).");
  metrics::Family& postgres_errors_ = registry_.counter(
      "boardkeeper_postgres_errors_total",
      "PostgreSQL errors met while applying events (the cold tier was unreachable).");
  metrics::Family& batch_seconds_ =
      registry_.histogram("boardkeeper_ingest_batch_duration_seconds",
                          "Time to apply and acknowledge one batch of stream entries.",
                          {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  metrics::Family& last_success_ =
      registry_.gauge("boardkeeper_last_success_timestamp_seconds",
                      "When the consumer loop last completed a Redis round trip (Unix time).");

  std::chrono::nanoseconds stale_after_;
  std::atomic<std::int64_t> last_turn_ns_{steady_ns()};
  std::atomic<bool> ready_{false};
};

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

  IngestMetrics observed(o.block);
  std::unique_ptr<HttpServer> server;
  if (!args.listen.empty()) {
    // Before connecting, so probes answer (not ready) while Redis is being reached.
    server = std::make_unique<HttpServer>(
        args.listen, [&observed](std::string_view path) { return observed.answer(path); });
    spdlog::info("ingest: serving /metrics, /healthz and /readyz on http://{}", server->address());
  }
  spdlog::info("ingest: stream {} group {} consumer {}{}", o.stream, o.group, o.consumer,
               o.drain ? " (until drained)" : "");
  lifecycle::IngestStats s;
  try {
    s = lifecycle::ingest(ctx.redis(), ctx.leaderboards(), o, g_stop, &observed);
  } catch (const std::exception& e) {
    observed.failed(lifecycle::backend_of(e));
    throw;
  }
  const std::string message = fmt::format(
      "ingest: {} read, {} applied, {} duplicates, {} dead-lettered, {} reclaimed, {} left "
      "pending (cold tier unreachable), {} rehydrated{}",
      s.read, s.applied, s.duplicates, s.dead, s.reclaimed, s.unavailable, s.rehydrated,
      g_stop.load() ? " (stopped by signal)" : "");
  JsonLine numbers;
  numbers.num("read", s.read)
      .num("applied", s.applied)
      .num("duplicates", s.duplicates)
      .num("dead", s.dead)
      .num("reclaimed", s.reclaimed)
      .num("unavailable", s.unavailable)
      .num("rehydrated", s.rehydrated);
  log_info_with_fields(message, numbers.fields());
  if (ctx.format() == Format::json) std::cout << numbers.done() << "\n";
  return 0;
}

}  // namespace bk::cli
