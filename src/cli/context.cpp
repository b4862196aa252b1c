// Lazily made connections; logs say where they go (host, port, database), never the URL.
#include "cli/context.h"

#include "cli/commands.h"

#include <spdlog/spdlog.h>

#include "cold/conninfo.h"
#include "service/deployment.h"

namespace bk::cli {

Context::Context(Config config, Clock clock, Format format)
    : config_(std::move(config)), clock_(clock), format_(format) {}

redis::Connection& Context::redis() {
  if (!redis_) {
    const redis::Options options = service::redis_options(config_.redis);
    spdlog::debug("connecting to redis at {}", redis::describe(options));
    redis_ = std::make_unique<redis::Connection>(options);
  }
  return *redis_;
}

cold::ColdStore& Context::cold() {
  return cold(redis());
}

cold::ColdStore& Context::cold(redis::Connection& via) {
  cold::ColdStore& store = schema_admin();
  if (!deployment_verified_) {
    // Before anything is read or written in the schema (the archive connection only
    // connects): it must belong to this deployment's Redis data set.
    service::verify_deployment(via, config_.redis.key_prefix, store, config_.postgres.schema);
    deployment_verified_ = true;
  }
  return store;
}

cold::ColdStore& Context::schema_admin() {
  if (!cold_) {
    spdlog::debug("connecting to {}", cold::parse_conninfo(config_.postgres.url).where);
    cold_ = std::make_unique<cold::ColdStore>(config_.postgres.url, config_.postgres.schema);
  }
  return *cold_;
}

cold::History& Context::archive() {
  if (!archive_) {
    archive_ = std::make_unique<cold::History>(config_.postgres.url, config_.postgres.schema);
    archive_->set_large_period_rows(config_.history.large_period_rows);
  }
  return *archive_;
}

service::Leaderboards& Context::leaderboards() {
  if (!boards_) {
    boards_ = std::make_unique<service::Leaderboards>(
        config_, redis(), clock_,
        std::function<cold::ColdStore&()>([this]() -> cold::ColdStore& { return cold(); }));
    boards_->reads().read_history_from([this]() -> cold::History& { return archive(); });
  }
  return *boards_;
}

redis::Connection& Context::redis_if_reachable() {
  if (!redis_) {
    const redis::Options options = service::redis_options(config_.redis);
    spdlog::debug("connecting to redis at {}", redis::describe(options));
    auto conn = std::make_unique<redis::Connection>(options, redis::Connect::later);
    try {
      conn->reconnect();
    } catch (const UnavailableError& e) {
      // A read that needs Redis after all fails with this reason (the connection keeps it).
      spdlog::debug("redis is not reachable ({}): only reads that need no Redis can answer",
                    e.what());
    }
    redis_ = std::move(conn);
  }
  return *redis_;
}

service::Reads& Context::reads() {
  if (!boards_) {
    boards_ = std::make_unique<service::Leaderboards>(
        config_, redis_if_reachable(), clock_,
        std::function<cold::ColdStore&()>([this]() -> cold::ColdStore& { return cold(); }));
    boards_->reads().read_history_from([this]() -> cold::History& { return archive(); });
  }
  return boards_->reads();
}

void check_range(const char* flag, std::int64_t value, std::int64_t min, std::int64_t max,
                 const char* hint) {
  if (value >= min && value <= max) return;
  std::string message = std::string(flag) + " " + std::to_string(value) + " is outside [" +
                        std::to_string(min) + ", " + std::to_string(max) + "]";
  if (*hint != '\0') message += std::string(": ") + hint;
  throw UsageError(message);
}

}  // namespace bk::cli
