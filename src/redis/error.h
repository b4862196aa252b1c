// Errors from talking to Redis, one tree under RedisError (redis-plus-plus' errors.h is the
// model), built where an I/O step fails (transport.cpp, connection.cpp) or from an error
// reply (error.cpp). A connection that cannot be used is "unavailable" (exit 3): reconnect and
// retry. A command the server refuses is a ReplyError (exit 1).
#pragma once
#include <string>
#include <string_view>

#include "core/error.h"

namespace bk::redis {

// Every Redis error: catch (const RedisError&) for "Redis failed, somehow".
class RedisError : public virtual Error {
 public:
  explicit RedisError(const std::string& what) : Error(what) {}
  Backend backend() const noexcept override { return Backend::redis; }
};

// The connection cannot be used: connecting failed, it broke (I/O), or the server cannot
// serve now (a transient reply: LOADING, BUSY, READONLY after a failover, OOM, ...; see
// classify_reply_error). Reconnecting, or waiting, may cure it.
class ConnectionError : public RedisError, public UnavailableError {
 public:
  explicit ConnectionError(const std::string& what)
      : Error(what), RedisError(what), UnavailableError(what) {}
};

// No reply within the command timeout (a frozen or overloaded server, a dead link).
class TimeoutError : public ConnectionError {
 public:
  explicit TimeoutError(const std::string& what) : Error(what), ConnectionError(what) {}
  bool hung() const noexcept override { return true; }
};

// The server closed the connection (restart, CLIENT KILL, timeout of an idle client).
class ClosedError : public ConnectionError {
 public:
  explicit ClosedError(const std::string& what) : Error(what), ConnectionError(what) {}
};

// What came back was not RESP: the connection is out of step and cannot be used again.
class ProtoError : public ConnectionError {
 public:
  explicit ProtoError(const std::string& what) : Error(what), ConnectionError(what) {}
};

// The server answered with an error reply ("-ERR ...", "-WRONGTYPE ...", "-OOM ..."), or a
// reply had a shape the caller did not expect.
class ReplyError : public RedisError {
 public:
  explicit ReplyError(const std::string& what) : Error(what), RedisError(what) {}
  bool is_noscript() const { return std::string(what()).rfind("NOSCRIPT", 0) == 0; }
};

// What an error reply says of the command that got it.
// transient: the server cannot serve now (LOADING, BUSY, MASTERDOWN, TRYAGAIN, CLUSTERDOWN,
//   READONLY after a failover, OOM at maxmemory, MISCONF when it cannot persist, NOREPLICAS,
//   a MOVED or ASK redirection the connection did not follow):
//   the same command may succeed later, on a new connection; retry with backoff.
// lasting: the command itself cannot succeed as things are (WRONGTYPE, a script's runtime
//   error "ERR user_script:...", an unknown command, NOSCRIPT, NOGROUP, ...): retrying does
//   not help until someone changes what it touched.
// Decided by the reply's first word (its error code) alone: an error raised by redis.call
// inside a script keeps the code of the command that failed ("WRONGTYPE ... script: ...").
// Connection loss and timeouts are no replies: they are ConnectionErrors where they happen.
enum class ErrorClass { transient, lasting };
ErrorClass classify_reply_error(std::string_view reply);

// An error reply: the transient ones are ConnectionErrors, the rest ReplyErrors. Never
// shows more than the server said.
[[noreturn]] void throw_reply_error(std::string_view reply);

}  // namespace bk::redis
