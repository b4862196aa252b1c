// Errors from talking to Redis: a connection that fails is "unavailable" (exit 3); a
// command the server refuses is a ReplyError.
#pragma once
#include <string>

#include "core/error.h"

namespace bk::redis {

// Connecting failed, the connection broke, timed out, or the protocol went wrong.
class ConnectionError : public UnavailableError {
 public:
  using UnavailableError::UnavailableError;
};

class TimeoutError : public ConnectionError {
 public:
  using ConnectionError::ConnectionError;
};

// The server answered with an error reply ("-ERR ...", "-NOSCRIPT ...").
class ReplyError : public Error {
 public:
  using Error::Error;
  bool is_noscript() const { return std::string(what()).rfind("NOSCRIPT", 0) == 0; }
};

}  // namespace bk::redis
