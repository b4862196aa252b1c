// serve's /metrics (http/serve_metrics.h). Counters kept elsewhere (the cold ranks' and the
// replica's) are added by what they grew since the last scrape.
#include "http/serve_metrics.h"

#include <tuple>

#include "http/metrics_io.h"

namespace bk::http {

ServeMetrics::ServeMetrics(std::shared_ptr<service::ColdIndexes> cold_ranks,
                           std::shared_ptr<service::ReplicaReads> replica_reads,
                           std::shared_ptr<redis::SharedLink> link, const Readiness& readiness,
                           std::shared_ptr<const api::RateLimits> limits)
    : cold_ranks_(std::move(cold_ranks)),
      replica_reads_(std::move(replica_reads)),
      link_(std::move(link)),
      readiness_(readiness),
      limits_(std::move(limits)),
      requests_(registry_.counter("boardkeeper_http_requests_total",
                                  "HTTP requests answered, by route and status code.")),
      latency_(registry_.histogram(
          "boardkeeper_http_request_duration_seconds", "Time to answer an HTTP request, by route.",
          {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5})),
      writes_(registry_.counter("boardkeeper_http_writes_total",
                                "Score writes that reached the update path, by outcome (applied, "
                                "duplicate, refused, unavailable, failed) and refusal reason.")),
      token_reloads_(registry_.counter("boardkeeper_token_reloads_total",
                                       "Reloads of serve's tokens on SIGHUP, by result: ok, or "
                                       "failed (a source was bad: the old tokens stay).")) {
  for (const char* result : {"ok", "failed"}) token_reloads_.touch({{"result", result}});
}

void ServeMetrics::observe(const std::string& route, int status, double seconds) {
  requests_.add(1, {{"route", route}, {"code", std::to_string(status)}});
  latency_.observe(seconds, {{"route", route}});
}

void ServeMetrics::observe_write(const std::string& outcome, const std::string& reason) {
  writes_.add(1, {{"outcome", outcome}, {"reason", reason}});
}

void ServeMetrics::observe_token_reload(bool ok) {
  token_reloads_.add(1, {{"result", ok ? "ok" : "failed"}});
}

std::string ServeMetrics::render() {
  update_process_metrics(registry_);
  if (cold_ranks_) render_cold_ranks();
  if (replica_reads_) render_replica();
  if (link_) render_link();
  if (limits_) render_rate_limited();
  return registry_.render();
}

void ServeMetrics::render_rate_limited() {
  metrics::Family& limited = registry_.counter(
      "boardkeeper_http_rate_limited_total",
      "Requests refused with 429 by serve.rate_limits (this process's buckets), by the limit "
      "that was spent: read, write, admin, write_per_member.");
  for (std::size_t i = 0; i < api::kLimitClasses; ++i) {
    const auto c = static_cast<api::LimitClass>(i);
    const std::int64_t now = limits_->refused(c);
    limited.add(static_cast<double>(now - limited_reported_[i]), {{"class", api::label(c)}});
    limited_reported_[i] = now;
  }
}

void ServeMetrics::render_link() {
  const redis::SharedLink::Stats now = link_->stats();
  registry_
      .counter("boardkeeper_redis_shared_calls_total",
               "Calls of the Redis lane's workers on their shared Redis connection.")
      .add(static_cast<double>(now.calls - link_reported_.calls));
  registry_
      .counter("boardkeeper_redis_shared_writes_total",
               "Writes that carried those calls' commands (calls / writes: calls per write).")
      .add(static_cast<double>(now.writes - link_reported_.writes));
  registry_
      .gauge("boardkeeper_redis_shared_deepest",
             "The most calls waiting at Redis at once on the shared connection.")
      .set(static_cast<double>(now.deepest));
  link_reported_ = now;
}

void ServeMetrics::render_cold_ranks() {
  const service::ColdIndexes::Stats now = cold_ranks_->stats();
  registry_
      .gauge("boardkeeper_cold_rank_bytes",
             "Memory held by cold ranks (serve.cold_rank_memory_mb).")
      .set(static_cast<double>(now.bytes));
  registry_
      .gauge("boardkeeper_cold_rank_periods", "Spilled periods whose cold ranks are in memory.")
      .set(static_cast<double>(now.periods));
  metrics::Family& events = registry_.counter("boardkeeper_cold_rank_events_total",
                                              "Cold reads answered from memory (hit) or PostgreSQL "
                                              "(miss); loads, evictions, failed loads.");
  for (const auto& [event, was, is] : {std::tuple{"hit", reported_.hits, now.hits},
                                       {"miss", reported_.misses, now.misses},
                                       {"load", reported_.loads, now.loads},
                                       {"eviction", reported_.evictions, now.evictions},
                                       {"failure", reported_.failures, now.failures}}) {
    events.add(static_cast<double>(is - was), {{"event", event}});
  }
  reported_ = now;
}

void ServeMetrics::render_replica() {
  metrics::Family& reads = registry_.counter(
      "boardkeeper_postgres_replica_reads_total",
      "Reads of cold rows, profiles and history by where they went: replica, primary_behind (the "
      "replica had not replayed far enough), primary_failed (it failed or did not answer).");
  const std::int64_t now[3] = {replica_reads_->replica.load(), replica_reads_->behind.load(),
                               replica_reads_->failed.load()};
  const char* to[3] = {"replica", "primary_behind", "primary_failed"};
  for (int i = 0; i < 3; ++i) {
    reads.add(static_cast<double>(now[i] - replica_reported_[i]), {{"to", to[i]}});
    replica_reported_[i] = now[i];
  }
  const std::int64_t lag = readiness_.replica_lag_bytes();
  if (lag >= 0) {
    registry_
        .gauge("boardkeeper_postgres_replica_lag_bytes",
               "WAL the replica had not replayed at the last readiness check.")
        .set(static_cast<double>(lag));
  }
  registry_.gauge("boardkeeper_postgres_replica_up", "1 when the replica answered its last check.")
      .set(readiness_.replica() == Readiness::State::ok ? 1 : 0);
}

}  // namespace bk::http
