// Reset and drop on Redis (see board_reset.h): the two scripts' marshalling and one read.
#include "hot/board_reset.h"

#include <utility>

#include "embedded/hot_lua.h"

namespace bk::hot {

BoardReset::BoardReset(std::string key_prefix)
    : prefix_(std::move(key_prefix)),
      period_reset_(embedded::hot_lua::period_reset_lua),
      board_drop_(embedded::hot_lua::board_drop_lua) {}

PeriodPhase BoardReset::phase(redis::Connection& conn, const PeriodKeys& keys) {
  const redis::Reply r = conn.command({"HMGET", keys.meta, "closed", "archived"}).checked();
  const auto is_set = [&r](std::size_t i) {
    return !r.at(i).is_nil() && r.at(i).as_string() == "1";
  };
  if (is_set(1)) return PeriodPhase::archived;
  if (is_set(0)) return PeriodPhase::frozen;
  return PeriodPhase::live;
}

std::int64_t BoardReset::empty_period(redis::Connection& conn, const BoardKeys& board,
                                      const std::string& period, const std::string& period_id) {
  const PeriodKeys keys(board, period, period_id);
  return period_reset_
      .eval(conn, {keys.live, keys.stale, keys.meta, board.registry()},
            {registry_member(period, period_id)})
      .checked()
      .as_int();
}

BoardReset::DropKeys BoardReset::drop_board_keys(redis::Connection& conn, const BoardKeys& board,
                                                 const std::vector<std::string>& emptied) {
  const redis::Reply r = board_drop_
                             .eval(conn,
                                   {board.registry(), board.synced(), board.held(), board.busy(),
                                    board.names(), board.metadata(), board.divisions()},
                                   emptied)
                             .checked();
  DropKeys out;
  if (!r.elements.empty() && r.at(0).type == redis::Reply::Type::string &&
      r.at(0).as_string() == "again") {
    for (std::size_t i = 1; i < r.elements.size(); ++i) out.again.push_back(r.at(i).as_string());
    return out;
  }
  out.dropped.profiles = r.at(0).as_int();
  out.dropped.keys = r.at(1).as_int();
  return out;
}

bool BoardReset::forget_board(redis::Connection& conn, const std::string& board) {
  return conn.command({"SREM", boards_key(prefix_), board}).checked().as_int() == 1;
}

}  // namespace bk::hot
