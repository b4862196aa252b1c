// One connection to Redis: hiredis behind RAII, commands and pipelines returning owned
// replies. Not thread-safe: give each thread its own Connection.
#pragma once
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

class Connection {
 public:
  // Connects, authenticates and selects the database. Throws ConnectionError.
  explicit Connection(const Options& options);
  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;
  ~Connection() = default;

  // Sends one command and returns its reply (an error reply is returned, not thrown).
  Reply command(const Args& args);
  // Sends every command, then reads every reply, in order, even when some are errors.
  std::vector<Reply> pipeline(const std::vector<Args>& commands);

  const Options& options() const { return options_; }

 private:
  struct Free {
    void operator()(redisContext* c) const;
  };
  Options options_;
  std::unique_ptr<redisContext, Free> ctx_;

  void append(const Args& args);
  Reply read_reply();
  [[noreturn]] void fail(std::string_view doing);
};

}  // namespace bk::redis
