// EVALSHA with reload on NOSCRIPT.
#include "redis/script.h"

#include "redis/error.h"

namespace bk::redis {

void Script::load(Connection& conn) {
  sha_ = conn.command({"SCRIPT", "LOAD", std::string(source_)}).as_string();
}

Args Script::evalsha_command(const Args& keys, const Args& args) const {
  Args cmd;
  cmd.reserve(3 + keys.size() + args.size());
  cmd.push_back("EVALSHA");
  cmd.push_back(sha_);
  cmd.push_back(std::to_string(keys.size()));
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

Reply Script::eval(Connection& conn, const Args& keys, const Args& args) {
  if (sha_.empty()) load(conn);
  Reply r = conn.command(evalsha_command(keys, args));
  if (r.is_error() && r.str.rfind("NOSCRIPT", 0) == 0) {
    load(conn);
    r = conn.command(evalsha_command(keys, args));
  }
  return r;
}

std::vector<Reply> Script::eval_pipelined(Connection& conn,
                                          const std::vector<std::pair<Args, Args>>& calls,
                                          const std::function<void()>& while_waiting) {
  if (sha_.empty()) load(conn);
  std::vector<Args> commands;
  commands.reserve(calls.size());
  for (const auto& [keys, args] : calls) commands.push_back(evalsha_command(keys, args));
  std::vector<Reply> replies = conn.pipeline(commands, while_waiting);
  bool reloaded = false;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error() && replies[i].str.rfind("NOSCRIPT", 0) == 0) {
      if (!reloaded) {
        load(conn);
        reloaded = true;
      }
      replies[i] = conn.command(commands[i]);
    }
  }
  return replies;
}

}  // namespace bk::redis
