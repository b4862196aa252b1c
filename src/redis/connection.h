// One connection to Redis: hiredis behind RAII, commands and pipelines returning owned
// replies. Not thread-safe: give each thread its own Connection.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "redis/reply.h"
#include "redis/url.h"

struct redisContext;

namespace bk::redis {

// Arguments of one command. Strings are sent as binary-safe bulk strings.
using Args = std::vector<std::string>;

// When a Connection first connects.
enum class Connect {
  now,    // in the constructor, which throws ConnectionError when that fails
  later,  // at the first reconnect(); commands fail with ConnectionError until then
};

class Connection {
 public:
  // Connects, authenticates, names the client and selects the database (Connect::now).
  explicit Connection(const Options& options, Connect when = Connect::now);
  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;
  ~Connection() = default;

  // Sends one command and returns its reply (an error reply is returned, not thrown).
  Reply command(const Args& args);
  // Sends every command, then reads every reply, in order, even when some are errors.
  // `while_waiting`, when given, runs once every command is written and before any reply is
  // read: work that overlaps the server's (it must not use this connection). Should it
  // throw, this connection is dropped (its replies are unread) and the exception goes on.
  std::vector<Reply> pipeline(const std::vector<Args>& commands,
                              const std::function<void()>& while_waiting = {});
  // Commands written now (in one write), their replies read later by receive(), one call
  // each, in the order of the commands sent.
  void send(const std::vector<Args>& commands);
  Reply receive();

  // Replaces the server connection in place, with the same options (AUTH, CLIENT SETNAME,
  // SELECT again), so everything holding this Connection keeps a valid one. Throws
  // ConnectionError when the server cannot be reached; the connection is then unusable
  // (connected() is false) until a later reconnect() succeeds.
  void reconnect();
  // A server connection exists and has not failed (a failed one is never used again).
  bool connected() const;
  // How many times a server connection was made: state cached per server connection
  // (registered boards, loaded scripts...) is stale when this changed.
  std::uint64_t generation() const { return generation_; }

  const Options& options() const { return options_; }

 private:
  struct Free {
    void operator()(redisContext* c) const;
  };
  Options options_;
  std::unique_ptr<redisContext, Free> ctx_;
  std::uint64_t generation_ = 0;

  void open();
  void set_timeout(Millis timeout);
  void authenticate();
  void name_client();
  void select_db();
  void append(const Args& args);
  void flush();
  Reply read_reply();
  [[noreturn]] void fail(std::string_view doing);
};

}  // namespace bk::redis
