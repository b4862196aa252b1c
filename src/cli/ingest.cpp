// ingest: the stream consumer, until SIGTERM/SIGINT (after its current batch, or at once
// during a backoff wait) or, with --drain, until the streams are empty. Its flags override
// the config's ingest section. Redis and PostgreSQL outages are waited out, never fatal.
// With --listen it serves /metrics, /healthz and /readyz on a thread of its own while it runs.
#include "lifecycle/ingest.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <mutex>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/output.h"
#include "http/metrics_io.h"
#include "http/server.h"
#include "service/deployment.h"

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
  using Backend = bk::Backend;

  IngestMetrics(std::chrono::milliseconds block, const std::vector<std::string>& streams)
      : stale_after_(std::max<std::chrono::nanoseconds>(std::chrono::seconds{30}, 3 * block)),
        fresh_within_(std::max<std::chrono::nanoseconds>(std::chrono::seconds{5}, 3 * block)) {
    http::add_build_info(registry_);
    for (auto* c : {&read_, &reclaimed_, &applied_, &duplicate_, &dead_, &unavailable_, &waiting_,
                    &dead_letter_failures_, &rehydrated_, &redis_errors_, &postgres_errors_,
                    &board_failed_, &board_failures_}) {
      c->touch();
    }
    for (const std::string& stream : streams) trimmed_.touch({{"stream", stream}});
    // Every reason exists from the start, so rate() and absent() behave from the first scrape.
    refused_.touch({{"reason", "malformed"}});
    for (int r = static_cast<int>(service::Refusal::invalid_board);
         r <= static_cast<int>(service::kLastRefusal); ++r) {
      refused_.touch({{"reason", service::refusal_label(static_cast<service::Refusal>(r))}});
    }
    consecutive_failures_.set(0, {{"backend", "redis"}});
    consecutive_failures_.set(0, {{"backend", "postgres"}});
    failing_boards_gauge_.set(0);
  }

  void loop_turn() override { last_turn_ns_.store(steady_ns()); }

  void redis_round_trip() override {
    last_redis_ok_ns_.store(steady_ns());
    last_success_.set(http::unix_now());
  }

  void backend_failures(Backend backend, std::int64_t in_a_row) override {
    const bool redis = backend == Backend::redis;
    (redis ? redis_failures_ : postgres_failures_).store(in_a_row);
    consecutive_failures_.set(static_cast<double>(in_a_row),
                              {{"backend", redis ? "redis" : "postgres"}});
    if (in_a_row > 0) (redis ? redis_errors_ : postgres_errors_).add(1);
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
    waiting_.add(static_cast<double>(b.waiting));
    dead_letter_failures_.add(static_cast<double>(b.dead_letter_failures));
    rehydrated_.add(static_cast<double>(b.rehydrated));
    board_failed_.add(static_cast<double>(b.board_failed));
    board_failures_.add(static_cast<double>(b.board_failures));
    batch_seconds_.observe(took.count());
  }

  void failing_boards(const std::vector<lifecycle::FailingBoard>& boards) override {
    failing_boards_gauge_.set(static_cast<double>(boards.size()));
    // The first kListed, for /readyz's body (the number says how many there are).
    std::string listed = "[";
    for (std::size_t i = 0; i < boards.size() && i < kListed; ++i) {
      const lifecycle::FailingBoard& b = boards[i];
      listed +=
          (i > 0 ? "," : "") + JsonLine()
                                   .str("board", b.board)
                                   .str("error", b.error)
                                   .time("since", std::chrono::time_point_cast<Millis>(b.since))
                                   .num("attempts", b.attempts)
                                   .done();
    }
    listed += "]";
    const std::lock_guard<std::mutex> lock(failing_mutex_);
    failing_count_ = boards.size();
    failing_listed_ = std::move(listed);
  }

  void stream_bounds(const std::string& stream, const hot::StreamBounds& b) override {
    const metrics::Labels labels{{"stream", stream}};
    // Unknown (entries deleted with XDEL, or no group yet): the last known value stays.
    if (b.lag) lag_.set(static_cast<double>(*b.lag), labels);
    pending_.set(static_cast<double>(b.pending), labels);
    length_.set(static_cast<double>(b.length), labels);
    trimmed_.add(static_cast<double>(b.trimmed), labels);
  }

  http::HttpServer::Response answer(std::string_view path) const {
    if (path == "/metrics") {
      http::update_process_metrics(registry_);
      return {200, std::string(http::kPrometheusText), registry_.render()};
    }
    if (path == "/healthz") {
      const std::chrono::nanoseconds since{steady_ns() - last_turn_ns_.load()};
      if (since <= stale_after_) return {200, "text/plain; charset=utf-8", "ok\n"};
      return {503, "text/plain; charset=utf-8",
              "the consumer loop has not turned for " + seconds(since) + " s\n"};
    }
    if (path == "/readyz") {
      // A failing board does not make the consumer unready (it is the board's keys, not the
      // process, and the other boards go on): it is shown in the body.
      const std::string why = not_ready();
      JsonLine body;
      body.flag("ready", why.empty());
      if (!why.empty()) body.str("reason", why);
      {
        const std::lock_guard<std::mutex> lock(failing_mutex_);
        body.num("failing_boards", static_cast<std::int64_t>(failing_count_))
            .raw("failing", failing_listed_);
      }
      return {why.empty() ? 200 : 503, "application/json", body.done() + "\n"};
    }
    return {404, "text/plain; charset=utf-8", "not found; try /metrics, /healthz or /readyz\n"};
  }

 private:
  mutable metrics::Registry registry_;  // thread-safe; process metrics change at render
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
      "out_of_range, ...). Counted when the dead letter is written.");
  metrics::Family& dead_ = registry_.counter(
      "boardkeeper_ingest_events_dead_lettered_total",
      "Events whose dead letter was written to <stream>:dead, then acknowledged.");
  metrics::Family& unavailable_ = registry_.counter(
      "boardkeeper_ingest_events_unavailable_total",
      "Events left pending because their cold rows were unreachable; they are read again.");
  metrics::Family& waiting_ = registry_.counter(
      "boardkeeper_ingest_events_waiting_total",
      "Events left pending because an earlier event of the member is held; they are read "
      "again, in stream order.");
  metrics::Family& dead_letter_failures_ = registry_.counter(
      "boardkeeper_ingest_dead_letter_failures_total",
      "Refused events left pending because Redis refused their dead letter (maxmemory, a "
      "<stream>:dead key of the wrong type...); they are read again.");
  metrics::Family& rehydrated_ = registry_.counter(
      "boardkeeper_rehydrations_total",
      "Member periods brought back from the cold tier by an update (a spilled member scored).");
  metrics::Family& board_failed_ = registry_.counter(
      "boardkeeper_ingest_events_board_failed_total",
      "Events left pending because their board's keys refuse updates (a lasting error: a key "
      "of the wrong type, a script error on them); read again, in order, once the board works. "
      "Counted each time one is left pending.");
  metrics::Family& board_failures_ = registry_.counter(
      "boardkeeper_ingest_board_failures_total",
      "Script calls of a board that failed with a lasting error (the board's events stay "
      "pending; the other boards go on).");
  metrics::Family& failing_boards_gauge_ = registry_.gauge(
      "boardkeeper_ingest_failing_boards",
      "Boards whose keys refuse updates now (lasting errors), as this consumer saw them; "
      "/readyz lists them (the first 20).");
  metrics::Family& redis_errors_ = registry_.counter(
      "boardkeeper_redis_errors_total",
      "Redis failures met by the consumer loop (connection, timeout, error reply), each "
      "followed by a backoff.");
  metrics::Family& postgres_errors_ = registry_.counter(
      "boardkeeper_postgres_errors_total",
      "PostgreSQL failures met while applying events (the cold tier was unreachable or a "
      "statement failed).");
  metrics::Family& consecutive_failures_ = registry_.gauge(
      "boardkeeper_backend_consecutive_failures",
      "Failures of a backend in a row, as the consumer loop saw them; 0 once it works again.");
  metrics::Family& batch_seconds_ =
      registry_.histogram("boardkeeper_ingest_batch_duration_seconds",
                          "Time to apply and acknowledge one batch of stream entries.",
                          {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  metrics::Family& lag_ = registry_.gauge(
      "boardkeeper_ingest_lag_entries",
      "Entries of the stream not yet delivered to the consumer group (XINFO GROUPS lag), as "
      "this consumer last looked (about every second).");
  metrics::Family& pending_ = registry_.gauge(
      "boardkeeper_ingest_pending_entries",
      "Entries of the stream delivered to the consumer group and not yet acknowledged, at any "
      "of its consumers.");
  metrics::Family& length_ = registry_.gauge(
      "boardkeeper_ingest_stream_length_entries",
      "Entries in the stream (XLEN) after trimming; more than lag + pending means another "
      "consumer group holds trimming back (or ingest.trim is false).");
  metrics::Family& trimmed_ = registry_.counter(
      "boardkeeper_ingest_entries_trimmed_total",
      "Stream entries trimmed because every consumer group had acknowledged them.");
  metrics::Family& last_success_ =
      registry_.gauge("boardkeeper_ingest_last_redis_success_timestamp_seconds",
                      "When the consumer loop last completed a Redis round trip (Unix time).");

  std::chrono::nanoseconds stale_after_;   // /healthz: the loop turned within this
  std::chrono::nanoseconds fresh_within_;  // /readyz: a Redis round trip succeeded within this
  std::atomic<std::int64_t> last_turn_ns_{steady_ns()};
  std::atomic<std::int64_t> last_redis_ok_ns_{0};  // 0: never
  std::atomic<std::int64_t> redis_failures_{0};
  std::atomic<std::int64_t> postgres_failures_{0};
  static constexpr std::size_t kListed = 20;
  mutable std::mutex failing_mutex_;
  std::size_t failing_count_ = 0;
  std::string failing_listed_ = "[]";

  static std::string seconds(std::chrono::nanoseconds d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count());
  }

  // Why the consumer is not ready; empty when it is.
  std::string not_ready() const {
    const std::int64_t last_ok = last_redis_ok_ns_.load();
    if (last_ok == 0) return "no successful Redis round trip yet";
    if (const auto n = redis_failures_.load(); n > 0) {
      return "redis is failing: " + std::to_string(n) + " failures in a row";
    }
    // A frozen server fails nothing until the command timeout: silence says it sooner.
    const std::chrono::nanoseconds since{steady_ns() - last_ok};
    if (since > fresh_within_) {
      return "no successful Redis round trip for " + seconds(since) + " s";
    }
    if (const auto n = postgres_failures_.load(); n > 0) {
      return "postgresql is failing: " + std::to_string(n) + " failures in a row";
    }
    return "";
  }
};

// The config's ingest section with the flags that were given on top.
lifecycle::IngestOptions options_for(const IngestConfig& config, const IngestArgs& args,
                                     bool cluster) {
  lifecycle::IngestOptions o;
  o.streams = args.streams.empty() ? config.streams : args.streams;
  if (const auto problem = stream_list_problem(o.streams)) {
    throw UsageError("--stream: " + *problem);
  }
  for (const std::string& stream : cluster ? args.streams : std::vector<std::string>{}) {
    if (const auto problem = cluster_stream_problem(stream)) {
      throw UsageError("--stream: " + *problem);
    }
  }
  o.group = args.group.value_or(config.group);
  if (o.group.empty()) throw UsageError("--group must not be empty");
  o.reclaim_idle = args.reclaim_idle_ms ? Millis{*args.reclaim_idle_ms} : config.reclaim_idle;
  o.trim = config.trim;
  o.dead_maxlen = config.dead_maxlen;
  o.drain = args.drain;
  o.max_wait = args.max_wait_s ? Millis{*args.max_wait_s * 1000} : config.max_wait;
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  o.consumer = std::string(host) + "-" + std::to_string(getpid());
  return o;
}

void stop_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;  // a blocking read resumes; the loop checks the flag after it
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

// Before connecting, so probes answer (not ready) while Redis is being reached; none when
// there is no --listen.
std::unique_ptr<http::HttpServer> serve_probes(const IngestArgs& args, IngestMetrics& observed) {
  if (args.listen.empty()) return nullptr;
  http::HttpServer::Options options;
  options.inline_paths = {"/metrics", "/healthz", "/readyz"};  // none of them blocks
  options.probe_paths = options.inline_paths;  // answered also beyond max_connections
  auto server = std::make_unique<http::HttpServer>(
      args.listen,
      [&observed](const http::HttpServer::Request& request) {
        return observed.answer(request.path);
      },
      options);
  spdlog::info("ingest: serving /metrics, /healthz and /readyz on http://{}", server->address());
  return server;
}

// The run's figures as JSON fields (the log line's, and --format json's output).
JsonLine figures_of(const lifecycle::IngestStats& s) {
  JsonLine numbers;
  numbers.num("read", s.read)
      .num("applied", s.applied)
      .num("duplicates", s.duplicates)
      .num("dead", s.dead)
      .num("reclaimed", s.reclaimed)
      .num("unavailable", s.unavailable)
      .num("waiting", s.waiting)
      .num("dead_letter_failures", s.dead_letter_failures)
      .num("board_failed", s.board_failed)
      .num("board_failures", s.board_failures)
      .num("rehydrated", s.rehydrated)
      .num("trimmed", s.trimmed)
      .num("taken_over", s.taken_over);
  if (!s.stuck.empty()) {
    std::string left = "[";
    for (const std::string& why : s.stuck) left += (left.size() > 1 ? "," : "") + json_string(why);
    numbers.raw("stuck", left + "]");
  }
  return numbers;
}

// The summary of the run (log, and stdout with --format json); the exit code: 3 when a drain
// gave up (unavailable), saying what is left and why.
int report(const Context& ctx, const lifecycle::IngestOptions& o, const lifecycle::IngestStats& s) {
  const std::string message = fmt::format(
      "ingest: {} read, {} applied, {} duplicates, {} dead-lettered, {} reclaimed, {} left "
      "pending (cold tier unreachable), {} left pending (an earlier event held), {} left "
      "pending (dead letter refused), {} left pending (their board failing), {} rehydrated, {} "
      "trimmed, {} read ahead and taken over by another consumer{}",
      s.read, s.applied, s.duplicates, s.dead, s.reclaimed, s.unavailable, s.waiting,
      s.dead_letter_failures, s.board_failed, s.rehydrated, s.trimmed, s.taken_over,
      g_stop.load() ? " (stopped by signal)" : "");
  JsonLine numbers = figures_of(s);
  log_info_with_fields(message, numbers.fields());
  if (ctx.format() == Format::json) std::cout << numbers.done() << "\n";
  if (s.stuck.empty()) return 0;
  std::cerr << fmt::format(
      "ingest: --drain gave up after {:g} s without progress; left "
      "pending:\n",
      static_cast<double>(o.max_wait.count()) / 1000);
  for (const std::string& why : s.stuck) std::cerr << "  " << why << "\n";
  return 3;
}

}  // namespace

int ingest(Context& ctx, const IngestArgs& args) {
  stop_on_signals();
  const lifecycle::IngestOptions o =
      options_for(ctx.config().ingest, args, ctx.config().redis.cluster);

  IngestMetrics observed(o.block, o.streams);
  const std::unique_ptr<http::HttpServer> server = serve_probes(args, observed);
  spdlog::info("ingest: stream{} {} group {} consumer {}{}{}", o.streams.size() == 1 ? "" : "s",
               fmt::join(o.streams, ", "), o.group, o.consumer, o.trim ? "" : " (not trimming)",
               o.drain ? " (until drained)" : "");
  // A connection of its own, made by the loop (with backoff, like every reconnection), so
  // that an unreachable Redis at start is waited out too.
  const redis::Options options = service::redis_options(ctx.config().redis);
  spdlog::debug("ingest: redis at {}", redis::describe(options));
  redis::Connection redis(options, redis::Connect::later);
  service::Leaderboards boards(
      ctx.config(), redis, ctx.clock(),
      std::function<cold::ColdStore&()>(
          [&ctx, &redis]() -> cold::ColdStore& { return ctx.cold(redis); }));
  const lifecycle::IngestStats s = lifecycle::ingest(redis, boards, o, g_stop, &observed);
  return report(ctx, o, s);
}

}  // namespace bk::cli
