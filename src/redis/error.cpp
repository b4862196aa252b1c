// Error replies become types here; I/O failures are typed where they happen (transport.cpp).
#include "redis/error.h"

namespace bk::redis {

ErrorClass classify_reply_error(std::string_view reply) {
  const std::string_view code = reply.substr(0, reply.find(' '));
  // The server cannot serve right now: loading its data set, running a long script, a
  // replica that lost its master or that a failover demoted, a cluster reconfiguring, out
  // of memory at maxmemory, unable to persist, too few replicas for min-replicas-to-write;
  // a redirection the connection could not follow (slots moving faster than it followed).
  for (const std::string_view transient :
       {"LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY", "OOM", "MISCONF",
        "NOREPLICAS", "MOVED", "ASK"}) {
    if (code == transient) return ErrorClass::transient;
  }
  return ErrorClass::lasting;
}

void throw_reply_error(std::string_view reply) {
  if (classify_reply_error(reply) == ErrorClass::transient) {
    throw ConnectionError("redis: " + std::string(reply));
  }
  throw ReplyError(std::string(reply));
}

}  // namespace bk::redis
