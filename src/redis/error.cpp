// Error replies become types here; I/O failures are typed where they happen (transport.cpp).
#include "redis/error.h"

namespace bk::redis {

void throw_reply_error(std::string_view reply) {
  // The server cannot serve right now: loading its data set, running a long script, a
  // replica that lost its master or that a failover demoted, a cluster reconfiguring.
  for (const std::string_view transient :
       {"LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY"}) {
    if (reply.substr(0, transient.size()) == transient) {
      throw ConnectionError("redis: " + std::string(reply));
    }
  }
  throw ReplyError(std::string(reply));
}

}  // namespace bk::redis
