// R1, U2, tombstones and the bans generation (see moderation.h).
#include "hot/moderation.h"

#include "embedded/hot_lua.h"
#include "redis/error.h"

namespace bk::hot {

MemberRemoval parse_removal(const redis::Reply& reply, std::size_t periods) {
  const redis::Reply& r = reply.checked();
  if (r.type != redis::Reply::Type::array || r.elements.empty()) {
    throw redis::ReplyError("member_remove.lua: expected an array");
  }
  const std::string& status = r.at(0).as_string();
  MemberRemoval out;
  if (status == "again") {
    if (r.elements.size() < 2)
      throw redis::ReplyError("member_remove.lua: 'again' without periods");
    for (std::size_t i = 1; i < r.elements.size(); ++i) out.again.push_back(r.at(i).as_string());
    return out;
  }
  if (status != "ok" || r.elements.size() != 1 + 2 * periods) {
    throw redis::ReplyError("member_remove.lua: unexpected reply '" + status + "' with " +
                            std::to_string(r.elements.size()) + " elements for " +
                            std::to_string(periods) + " periods");
  }
  for (std::size_t j = 0; j < periods; ++j) {
    out.periods.push_back({r.at(1 + 2 * j).as_int() == 1, r.at(2 + 2 * j).as_int() == 1});
  }
  return out;
}

Moderation::Moderation(std::string key_prefix)
    : prefix_(std::move(key_prefix)),
      remove_(embedded::hot_lua::member_remove_lua),
      unban_(embedded::hot_lua::bans_unban_lua),
      tombstones_(embedded::hot_lua::tombstones_lua),
      clear_(embedded::hot_lua::tombstones_clear_lua) {}

MemberRemoval Moderation::remove(redis::Connection& conn, const RemovalRequest& request) {
  const BoardKeys board(prefix_, request.board);
  redis::Args keys{board.registry(), board.synced(), board.bans()};
  redis::Args args{request.member, request.ban ? "1" : "0", request.all ? "1" : "0",
                   std::to_string(request.ignored.size())};
  args.insert(args.end(), request.ignored.begin(), request.ignored.end());
  for (const RemovalPeriod& p : request.periods) {
    keys.push_back(board.live(p.period_name, p.period_id));
    keys.push_back(board.meta(p.period_name, p.period_id));
    keys.push_back(board.stale(p.period_name, p.period_id));
    args.push_back(registry_member(p.period_name, p.period_id));
    args.push_back(std::to_string(to_epoch_ms(p.expire_at)));
  }
  return parse_removal(remove_.eval(conn, keys, args), request.periods.size());
}

bool Moderation::unban(redis::Connection& conn, const std::string& board,
                       const std::string& member) {
  return unban_.eval(conn, {BoardKeys(prefix_, board).bans()}, {member}).checked().as_int() == 1;
}

void Moderation::touch_reads(redis::Connection& conn, const PeriodKeys& keys) {
  conn.command({"HINCRBY", keys.meta, "rgen", "1"}).checked();
}

std::vector<std::string> Moderation::tombstones(redis::Connection& conn, const PeriodKeys& keys) {
  const redis::Reply r = tombstones_.eval(conn, {keys.live, keys.stale}, {}).checked();
  std::vector<std::string> out;
  out.reserve(r.elements.size());
  for (const redis::Reply& m : r.elements) out.push_back(m.as_string());
  return out;
}

std::int64_t Moderation::clear_tombstones(redis::Connection& conn, const PeriodKeys& keys,
                                          const std::vector<std::string>& members) {
  if (members.empty()) return 0;
  return clear_.eval(conn, {keys.live, keys.stale, keys.meta}, members).checked().as_int();
}

std::string Moderation::bans_generation(redis::Connection& conn, const std::string& board) {
  const redis::Reply r = conn.command({"HGET", BoardKeys(prefix_, board).bans(), ""}).checked();
  return r.is_nil() ? std::string() : r.as_string();
}

}  // namespace bk::hot
