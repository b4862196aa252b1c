// serve's /metrics: requests by route, cold ranks in memory (service/cold_index.h), reads on
// the PostgreSQL replica (service/replica.h) and its lag, the shared Redis connection
// (redis/shared_link.h), requests refused by the rate limits (api/rate_limits.h), and the
// process.
#pragma once
#include <memory>
#include <string>

#include "api/rate_limits.h"
#include "core/metrics.h"
#include "http/readiness.h"
#include "redis/shared_link.h"
#include "service/cold_index.h"
#include "service/replica.h"

namespace bk::http {

class ServeMetrics {
 public:
  // `cold_ranks`, `replica_reads`, `link`: null when off.
  ServeMetrics(std::shared_ptr<service::ColdIndexes> cold_ranks,
               std::shared_ptr<service::ReplicaReads> replica_reads,
               std::shared_ptr<redis::SharedLink> link, const Readiness& readiness,
               std::shared_ptr<const api::RateLimits> limits = nullptr);
  void observe(const std::string& route, int status, double seconds);
  // A score write that reached the service: its outcome and, refused, its reason.
  void observe_write(const std::string& outcome, const std::string& reason);
  // A reload of the tokens on SIGHUP: taken, or refused (the old tokens kept).
  void observe_token_reload(bool ok);
  std::string render();

 private:
  std::shared_ptr<service::ColdIndexes> cold_ranks_;
  service::ColdIndexes::Stats reported_;  // cold ranks' counters as last rendered
  std::shared_ptr<service::ReplicaReads> replica_reads_;
  std::int64_t replica_reported_[3] = {0, 0, 0};  // replica, behind, failed as last rendered
  std::shared_ptr<redis::SharedLink> link_;
  redis::SharedLink::Stats link_reported_;  // as last rendered
  const Readiness& readiness_;
  std::shared_ptr<const api::RateLimits> limits_;
  std::int64_t limited_reported_[api::kLimitClasses] = {0, 0, 0, 0};  // as last rendered
  metrics::Registry registry_;
  metrics::Family& requests_;
  metrics::Family& latency_;
  metrics::Family& writes_;
  metrics::Family& token_reloads_;

  void render_cold_ranks();
  void render_replica();
  void render_link();
  void render_rate_limited();
};

}  // namespace bk::http
