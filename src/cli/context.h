// What every command gets: the loaded config, the service clock, and connections made on
// first use (check-config needs none).
#pragma once
#include <memory>
#include <string>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "config/config.h"
#include "core/time.h"
#include "redis/connection.h"
#include "service/leaderboards.h"
#include "service/reads.h"

namespace bk::cli {

enum class Format { text, json };

class Context {
 public:
  Context(Config config, Clock clock, Format format);

  const Config& config() const { return config_; }
  const Clock& clock() const { return clock_; }
  Format format() const { return format_; }

  redis::Connection& redis();  // throws UnavailableError when unreachable
  // Likewise for PostgreSQL; on first use it also checks (with Redis) that the schema belongs
  // to this deployment, and throws UsageError when not (service/deployment.h).
  cold::ColdStore& cold();
  // The same, checked through `via`: a long-running command's own connection, which it
  // reconnects (a connection of the context's own would stay broken after a cut).
  cold::ColdStore& cold(redis::Connection& via);
  // The same connection without that check, for `migrate` (which touches no rows).
  cold::ColdStore& schema_admin();
  // A second PostgreSQL connection, for archive writes (after cold(), which checks) and for
  // `history`, which only reads archived rows and answers with Redis down.
  cold::History& archive();
  // Reads and updates; PostgreSQL is connected only when a spilled period needs it.
  service::Leaderboards& leaderboards();
  // The reads of `top`, `rank`, `around` (those of the HTTP API): open periods live, ended
  // ones from the archive. With Redis down, what needs it fails (exit 3) and archived
  // periods are still read from PostgreSQL.
  service::Reads& reads();

 private:
  Config config_;
  Clock clock_;
  Format format_;
  std::unique_ptr<redis::Connection> redis_;
  std::unique_ptr<cold::ColdStore> cold_;
  bool deployment_verified_ = false;
  std::unique_ptr<cold::History> archive_;
  std::unique_ptr<service::Leaderboards> boards_;
  // redis(), or with Redis down a connection that fails each command (exit 3).
  redis::Connection& redis_if_reachable();
};

}  // namespace bk::cli
