// The deployment marker in Redis: a random id kept under <prefix>:deployment that names this
// Redis data set. The PostgreSQL schema records the id of the data set it belongs to (see
// service/deployment.h).
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

}  // namespace bk::hot
