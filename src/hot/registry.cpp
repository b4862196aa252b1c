// Board set and period registry: plain SET and ZSET commands (see registry.h).
#include "hot/registry.h"

namespace bk::hot {

void add_board(redis::Connection& conn, std::string_view prefix, const std::string& board) {
  conn.command({"SADD", boards_key(prefix), board}).checked();
}

std::vector<std::string> known_boards(redis::Connection& conn, std::string_view prefix) {
  const redis::Reply r = conn.command({"SMEMBERS", boards_key(prefix)}).checked();
  std::vector<std::string> out;
  out.reserve(r.elements.size());
  for (const redis::Reply& b : r.elements) out.push_back(b.as_string());
  return out;
}

LivePeriod split_registry_member(const std::string& member) {
  LivePeriod p;
  const std::size_t colon = member.find(':');
  p.period = member.substr(0, colon);
  if (colon != std::string::npos) p.period_id = member.substr(colon + 1);
  return p;
}

std::vector<LivePeriod> live_periods(redis::Connection& conn, const BoardKeys& keys) {
  const redis::Reply r =
      conn.command({"ZRANGE", keys.registry(), "0", "-1", "WITHSCORES"}).checked();
  std::vector<LivePeriod> out;
  out.reserve(r.elements.size() / 2);
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    LivePeriod p = split_registry_member(r.at(i).as_string());
    p.end = from_epoch_ms(r.at(i + 1).as_int());
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace bk::hot
