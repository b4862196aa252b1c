// PING as a named function (redis/ping.h).
#include "redis/ping.h"

namespace bk::redis {

std::optional<std::string> ping(Connection& connection) {
  const Reply reply = connection.command({"PING"});
  if (reply.is_error()) return reply.str;
  return std::nullopt;
}

}  // namespace bk::redis
