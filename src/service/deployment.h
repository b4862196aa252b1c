// One deployment per data set (PRODUCT.md): a PostgreSQL schema belongs to the Redis data set
// that first used it. Cold and history rows are keyed by board and period only, so a second
// data set in the same schema would archive and delete the first one's rows; it is refused
// (exit 2) before it writes anything.
//
// The data set is named by a random id in Redis (<prefix>:deployment, hot/deployment.h), the
// owner by the same id in the schema (<schema>.deployment, sql/003_deployment.sql). When Redis
// loses the marker with the rest of its data (FLUSHALL, restart without persistence, failover
// to an empty replica), a process at the owner's Redis address and key prefix takes the id
// back from the schema, so the safety net keeps working; anywhere else it is refused with the
// SQL that hands the schema over on purpose.
#pragma once
#include <string>

#include "cold/cold_store.h"
#include "config/config.h"
#include "redis/connection.h"

namespace bk::service {

// Where `redis:` points: the URL's options, and with `cluster: true` the nodes as more seeds.
redis::Options redis_options(const RedisConfig& config);

// Where a Redis data set lives, as the schema records it and messages show it:
// "host:port/db" ("[v6]:port/db"), or "unix://<path>?db=N". Never the user or password.
std::string redis_address(const redis::Options& options);

// Makes sure `schema` belongs to this deployment (the data set behind `redis`, under
// `key_prefix`), claiming it when nobody has. Throws UsageError naming both deployments and
// what to change when it belongs to another, and when the schema is not migrated. Costs one
// GET and one SELECT when all is well: call it once per process, before PostgreSQL is used.
void verify_deployment(redis::Connection& redis, const std::string& key_prefix,
                       cold::ColdStore& cold, const std::string& schema);

}  // namespace bk::service
