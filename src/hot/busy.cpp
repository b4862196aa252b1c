// Busy streaks: plain hash commands. The key expires a week after the last busy tick, so a
// board that is no longer ticked leaves nothing behind.
#include "hot/busy.h"

#include <chrono>

namespace bk::hot {
namespace {

constexpr std::chrono::milliseconds kKeep = std::chrono::hours{24 * 7};

}  // namespace

std::map<std::string, std::int64_t> busy_streaks(redis::Connection& conn, const BoardKeys& keys) {
  const redis::Reply r = conn.command({"HGETALL", keys.busy()});
  r.checked();
  std::map<std::string, std::int64_t> out;
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    out[r.elements[i].as_string()] = r.elements[i + 1].as_int();
  }
  return out;
}

std::int64_t note_busy(redis::Connection& conn, const BoardKeys& keys,
                       const std::string& registry_member) {
  const std::string key = keys.busy();
  const auto replies = conn.pipeline(
      {{"HINCRBY", key, registry_member, "1"}, {"PEXPIRE", key, std::to_string(kKeep.count())}});
  replies.at(1).checked();
  return replies.at(0).as_int();
}

void end_busy(redis::Connection& conn, const BoardKeys& keys, const std::string& registry_member) {
  conn.command({"HDEL", keys.busy(), registry_member}).checked();
}

}  // namespace bk::hot
