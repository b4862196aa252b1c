// The deployment marker: GET, and SET NX followed by GET in one pipeline; the cursor key's
// copy: GET and SET.
#include "hot/deployment.h"

#include "hot/keys.h"
#include "redis/error.h"

namespace bk::hot {

std::optional<std::string> read_deployment_marker(redis::Connection& conn,
                                                  std::string_view prefix) {
  const redis::Reply r = conn.command({"GET", deployment_key(prefix)});
  r.checked();
  if (r.is_nil()) return std::nullopt;
  return r.as_string();
}

std::string set_deployment_marker(redis::Connection& conn, std::string_view prefix,
                                  const std::string& id) {
  const std::string key = deployment_key(prefix);
  const auto replies = conn.pipeline({{"SET", key, id, "NX"}, {"GET", key}});
  replies.at(0).checked();
  const redis::Reply& now = replies.at(1).checked();
  if (now.is_nil()) {
    throw redis::ReplyError("redis: " + key + " vanished right after it was set");
  }
  return now.as_string();
}

std::optional<std::string> read_cursor_key_copy(redis::Connection& conn, std::string_view prefix) {
  const redis::Reply r = conn.command({"GET", cursor_key_copy_key(prefix)});
  r.checked();
  if (r.is_nil()) return std::nullopt;
  return r.as_string();
}

void keep_cursor_key_copy(redis::Connection& conn, std::string_view prefix,
                          const std::string& key) {
  conn.command({"SET", cursor_key_copy_key(prefix), key}).checked();
}

}  // namespace bk::hot
