// serve's sessions: one worker's connections and service objects (none is thread-safe), made
// on first use and kept in a pool per lane (api::lane_of); the Redis lane's share one
// pipelined connection (redis/shared_link.h).
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "api/api.h"
#include "cold/cold_store.h"
#include "cold/history.h"
#include "config/config.h"
#include "redis/connection.h"
#include "redis/shared_link.h"
#include "service/cold_index.h"
#include "service/deployment.h"
#include "service/leaderboards.h"
#include "service/replica.h"

namespace bk::http {

// How long an admin removal or ban waits for a spill or archive holding a period's lock
// before it answers 503 (the member is hidden already; a retry finishes it): a worker is not
// held for the whole of a long spill.
constexpr std::chrono::seconds kAdminLockWait{5};

// Redis as reads need it: no command (the handshake included) waits past the read's
// deadline, so a frozen server costs a read serve.read_timeout, not the 10 s of a command;
// and one shun for every worker's connection, so that it costs one read, not each.
inline redis::Options read_redis_options(const Config& c) {
  redis::Options o = service::redis_options(c.redis);
  o.command_timeout = c.serve.read_timeout;
  o.connect_timeout = std::min(o.connect_timeout, c.serve.read_timeout);
  o.shuns = std::make_shared<Shuns>();
  return o;
}

// One worker's connections and services, made on first use and kept.
struct Session {
  Session(const Config& c, redis::Connection redis_connection, Clock clock,
          std::atomic<bool>& deployment_verified,
          const std::shared_ptr<service::ColdIndexes>& cold_ranks,
          const std::shared_ptr<service::ReplicaReads>& replica_reads)
      : config(c),
        redis(std::move(redis_connection)),
        boards(c, redis, clock,
               std::function<cold::ColdStore&()>([this]() -> cold::ColdStore& { return cold(); })),
        verified(deployment_verified) {
    boards.moderation().wait_for_locks_at_most(kAdminLockWait);
    service::Reads& reads = boards.reads();
    reads.read_history_from([this]() -> cold::History& { return archive(); });
    if (cold_ranks) reads.share_cold_ranks(cold_ranks);
    if (replica_reads) {
      replica_reads_ = replica_reads;
      reads.read_from_replica([this]() -> cold::ColdStore& { return replica(); }, replica_reads);
    }
  }

  // Before a request: a connection that failed is made again.
  void ready() {
    if (!redis.connected()) redis.reconnect();
  }

  cold::ColdStore& cold() {
    if (!cold_)
      cold_ = std::make_unique<cold::ColdStore>(config.postgres.url, config.postgres.schema);
    if (!verified.load()) {
      service::verify_deployment(redis, config.redis.key_prefix, *cold_, config.postgres.schema);
      verified.store(true);
    }
    return *cold_;
  }
  // A streaming replica of the cold store (postgres.read_url), connected when first asked.
  cold::ColdStore& replica() {
    if (!replica_)
      replica_ =
          std::make_unique<cold::ColdStore>(config.postgres.read_url, config.postgres.schema);
    return *replica_;
  }
  // The history on the replica when it has replayed what the primary had written by now
  // (service/replica.h), else on the primary.
  cold::History& archive() {
    cold::ColdStore& primary = cold();  // the schema must belong to this deployment first
    if (replica_reads_ && service::fresh_replica(
                              primary, [this]() -> cold::ColdStore& { return replica(); },
                              *replica_reads_) != nullptr) {
      if (!replica_archive_) {
        replica_archive_ =
            std::make_unique<cold::History>(config.postgres.read_url, config.postgres.schema);
      }
      return *replica_archive_;
    }
    if (!archive_)
      archive_ = std::make_unique<cold::History>(config.postgres.url, config.postgres.schema);
    return *archive_;
  }

  const Config& config;
  redis::Connection redis;
  service::Leaderboards boards;
  std::atomic<bool>& verified;
  std::unique_ptr<cold::ColdStore> cold_;
  std::unique_ptr<cold::History> archive_;
  std::shared_ptr<service::ReplicaReads> replica_reads_;  // null: no replica
  std::unique_ptr<cold::ColdStore> replica_;
  std::unique_ptr<cold::History> replica_archive_;
};

// Sessions not in use. A worker holds at most one at a time, so there are never more than
// --workers of them.
class Sessions {
 public:
  Sessions(const Config& config, Clock clock)
      : config_(config), redis_(read_redis_options(config)), clock_(clock) {
    // The Redis lane's reads (a round trip or two each) share one pipelined connection
    // (redis/shared_link.h); the PostgreSQL lane's, which take several steps each deciding
    // the next, keep a connection per worker, and so do all on a cluster (routed by slot).
    if (!redis_.cluster) {
      links_[index(api::Lane::redis)] = std::make_shared<redis::SharedLink>(redis_);
    }
    if (config.serve.cold_rank_memory_mb > 0 && !config.postgres.url.empty()) {
      cold_ranks_ = std::make_shared<service::ColdIndexes>(
          static_cast<std::size_t>(config.serve.cold_rank_memory_mb) << 20);
    }
    if (!config.postgres.read_url.empty())
      replica_reads_ = std::make_shared<service::ReplicaReads>();
  }

  struct Lease {
    std::unique_ptr<Session> session;
    bool reused = false;  // taken idle from the pool: its connections may have died meanwhile
  };
  // A session of `lane` (api::lane_of), which shares that lane's Redis connection.
  Lease take(api::Lane lane) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      auto& idle = free_[index(lane)];
      if (!idle.empty()) {
        Lease lease{std::move(idle.back()), true};
        idle.pop_back();
        return lease;
      }
    }
    return fresh(lane);
  }
  Lease fresh(api::Lane lane) {
    const auto& link = links_[index(lane)];
    // A session over the shared link is as old as the link's connection: a request that
    // meets a restart on it is retried like one on a session taken idle.
    return {std::make_unique<Session>(
                config_,
                link ? redis::Connection(link) : redis::Connection(redis_, redis::Connect::later),
                clock_, verified_, cold_ranks_, replica_reads_),
            link != nullptr};
  }
  // Null when serve.cold_rank_memory_mb is 0 (or there is no cold tier).
  const std::shared_ptr<service::ColdIndexes>& cold_ranks() const { return cold_ranks_; }
  // Null without postgres.read_url.
  const std::shared_ptr<service::ReplicaReads>& replica_reads() const { return replica_reads_; }
  // The Redis lane's connection; null on a cluster.
  const std::shared_ptr<redis::SharedLink>& shared_link() const {
    return links_[index(api::Lane::redis)];
  }
  void give_back(api::Lane lane, std::unique_ptr<Session> s) {
    const std::lock_guard<std::mutex> lock(mu_);
    free_[index(lane)].push_back(std::move(s));
  }

 private:
  const Config& config_;
  static constexpr std::size_t kLanes = 2;  // api::Lane
  static std::size_t index(api::Lane lane) { return static_cast<std::size_t>(lane); }
  const redis::Options redis_;                                    // one shun for all
  std::array<std::shared_ptr<redis::SharedLink>, kLanes> links_;  // null: one per worker
  Clock clock_;
  std::atomic<bool> verified_{false};
  std::shared_ptr<service::ColdIndexes> cold_ranks_;
  std::shared_ptr<service::ReplicaReads> replica_reads_;
  std::mutex mu_;
  std::array<std::vector<std::unique_ptr<Session>>, kLanes> free_;
};

}  // namespace bk::http
