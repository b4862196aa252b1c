// The deployment marker in Redis: a random id kept under <prefix>:deployment that names this
// Redis data set. The PostgreSQL schema records the id of the data set it belongs to (see
// service/deployment.h). Beside it, a copy of the deployment's cursor key.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "redis/connection.h"

namespace bk::hot {

// The marker, or nullopt when this data set has none (never made, or Redis lost it).
std::optional<std::string> read_deployment_marker(redis::Connection& conn, std::string_view prefix);

// Sets the marker to `id` unless it exists, and returns the marker as it now is: `id`, or
// the one another process set first.
std::string set_deployment_marker(redis::Connection& conn, std::string_view prefix,
                                  const std::string& id);

// A copy of the deployment's cursor key (its home is PostgreSQL's serve_keys), so that `serve`
// can sign and check page cursors while PostgreSQL is down. nullopt when there is none.
std::optional<std::string> read_cursor_key_copy(redis::Connection& conn, std::string_view prefix);
void keep_cursor_key_copy(redis::Connection& conn, std::string_view prefix, const std::string& key);

}  // namespace bk::hot
