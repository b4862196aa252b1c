// The one place where Redis failures become types: hiredis context errors and error replies.
#include "redis/error.h"

#include <hiredis/hiredis.h>

#include <cerrno>

namespace bk::redis {

void throw_context_error(int code, int saved_errno, const std::string& message) {
  switch (code) {
    case REDIS_ERR_EOF:
      throw ClosedError(message);
    case REDIS_ERR_PROTOCOL:
      throw ProtoError(message);
    case REDIS_ERR_IO:
      // hiredis 0.14 reports a read or write that hit the socket timeout as an I/O error
      // with errno EAGAIN.
      if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK) {
        throw TimeoutError(message + " (timed out)");
      }
      throw ConnectionError(message);
    default:  // REDIS_ERR_OOM, REDIS_ERR_OTHER (a name that does not resolve, ...)
      throw ConnectionError(message);
  }
}

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
