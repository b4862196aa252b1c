// Lua scripts run by SHA1: loaded once per connection's server, loaded again on NOSCRIPT
// (after a restart or SCRIPT FLUSH). A NOSCRIPT reply means the script did not run, so
// retrying it is safe.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/connection.h"

namespace bk::redis {

class Script {
 public:
  explicit Script(std::string_view source) : source_(source) {}

  // EVALSHA with the given keys and arguments; loads the script when the server lacks it.
  Reply eval(Connection& conn, const Args& keys, const Args& args);
  // Many calls of this script in one pipeline; replies in the same order. `while_waiting`
  // runs once while the calls are at the server (see Connection::pipeline).
  std::vector<Reply> eval_pipelined(Connection& conn,
                                    const std::vector<std::pair<Args, Args>>& calls,
                                    const std::function<void()>& while_waiting = {});

 private:
  std::string_view source_;
  std::string sha_;

  void load(Connection& conn);
  Args evalsha_command(const Args& keys, const Args& args) const;
};

}  // namespace bk::redis
