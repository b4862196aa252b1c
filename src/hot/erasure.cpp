// The right to erasure in Redis (see erasure.h).
#include "hot/erasure.h"

#include "core/error.h"
#include "embedded/hot_lua.h"

namespace bk::hot {

Eraser::Eraser()
    : forget_(embedded::hot_lua::erase_finish_lua),
      dead_letters_(embedded::hot_lua::dead_letter_erase_lua) {}

BoardForgotten Eraser::forget(redis::Connection& conn, const BoardKeys& keys,
                              const std::vector<LivePeriod>& periods, const std::string& member,
                              bool dry_run, bool cold_ban) {
  redis::Args k{keys.names(), keys.metadata(), keys.held(), keys.bans()};
  for (const LivePeriod& p : periods) {
    k.push_back(keys.live(p.period, p.period_id));
    k.push_back(keys.stale(p.period, p.period_id));
    k.push_back(keys.meta(p.period, p.period_id));
  }
  const redis::Reply reply =
      forget_.eval(conn, k, {member, dry_run ? "1" : "0", cold_ban ? "1" : "0"});
  const auto& e = reply.checked().elements;
  if (e.size() != 3 + 2 * periods.size()) {
    throw Error("erase_finish.lua answered " + std::to_string(e.size()) + " values for " +
                std::to_string(periods.size()) + " periods");
  }
  if (!dry_run) {  // a league board's seats and cached division (hot/league.h); else none
    conn.command({"HDEL", keys.divisions(), member}).checked();
    for (const LivePeriod& p : periods) {
      conn.command({"ZREM", keys.seats(p.period, p.period_id), member}).checked();
      conn.command({"ZREM", keys.waiting(p.period, p.period_id), member}).checked();
    }
  }
  BoardForgotten out;
  out.profiles = e[0].as_int();
  out.held = e[1].as_int();
  out.bans = e[2].as_int();
  for (std::size_t i = 3; i < e.size(); i += 2) {
    out.hot.push_back(e[i].as_int());
    out.tombstones.push_back(e[i + 1].as_int());
  }
  return out;
}

std::int64_t Eraser::dead_letters(redis::Connection& conn, const std::string& dead,
                                  const std::string& member, const LetterBoards& boards,
                                  bool dry_run, std::int64_t chunk) {
  std::string cursor = "-";
  std::int64_t found = 0;
  // Each call reads `chunk` entries past the cursor: the loop ends at the stream's end, and
  // entries added meanwhile (ids after the cursor) are read too.
  while (!cursor.empty()) {
    redis::Args args{member, cursor, std::to_string(chunk), dry_run ? "1" : "0",
                     boards.any ? "*" : ""};
    if (!boards.any) args.insert(args.end(), boards.boards.begin(), boards.boards.end());
    const redis::Reply reply = dead_letters_.eval(conn, {dead}, args);
    const auto& e = reply.checked().elements;
    if (e.size() != 2) throw Error("dead_letter_erase.lua answered an unexpected reply");
    cursor = e[0].as_string();
    found += e[1].as_int();
  }
  return found;
}

}  // namespace bk::hot
