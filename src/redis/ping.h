// PING, the check that a Redis server answers, as a named function with a typed reply.
#pragma once
#include <optional>
#include <string>

#include "redis/connection.h"

namespace bk::redis {

// Sends PING: nullopt when the server answers it, else the error it replied with (e.g.
// "LOADING Redis is loading the dataset in memory"). Throws what Connection::command throws
// when the server cannot be reached.
std::optional<std::string> ping(Connection& connection);

}  // namespace bk::redis
