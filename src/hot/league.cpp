// A league board's keys in Redis (see league.h).
#include "hot/league.h"

#include <algorithm>

#include "core/league.h"
#include "embedded/hot_lua.h"
#include "redis/error.h"

namespace bk::hot {
namespace {

constexpr std::size_t kChunk = 1000;  // fields / seats per command or script call

std::string text(std::int64_t n) {
  return std::to_string(n);
}

// The period's keys.
struct Keys {
  Keys(const std::string& prefix, const LeaguePeriod& p)
      : board(prefix, p.board),
        meta(board.meta(p.period, p.period_id)),
        seats(board.seats(p.period, p.period_id)),
        waiting(board.waiting(p.period, p.period_id)),
        live(board.live(p.period, p.period_id)) {}
  BoardKeys board;
  std::string meta, seats, waiting, live;
};

}  // namespace

League::League(std::string key_prefix)
    : prefix_(std::move(key_prefix)),
      open_(embedded::hot_lua::league_open_lua),
      restore_(embedded::hot_lua::league_restore_lua),
      cohort_(embedded::hot_lua::league_cohort_lua) {}

std::optional<std::int64_t> League::divisions_version(redis::Connection& conn,
                                                      const std::string& board) {
  const redis::Reply r =
      conn.command({"HGET", BoardKeys(prefix_, board).divisions(), ""}).checked();
  if (r.is_nil()) return std::nullopt;
  return std::stoll(r.as_string());
}

void League::clear_divisions(redis::Connection& conn, const std::string& board) {
  conn.command({"DEL", BoardKeys(prefix_, board).divisions()}).checked();
}

void League::add_divisions(redis::Connection& conn, const std::string& board,
                           const std::vector<std::pair<std::string, std::int64_t>>& divisions) {
  const std::string key = BoardKeys(prefix_, board).divisions();
  for (std::size_t i = 0; i < divisions.size(); i += kChunk) {
    redis::Args args{"HSET", key};
    for (std::size_t k = i; k < std::min(i + kChunk, divisions.size()); ++k) {
      args.push_back(divisions[k].first);
      args.push_back(text(divisions[k].second));
    }
    conn.command(args).checked();
  }
}

void League::mark_divisions(redis::Connection& conn, const std::string& board,
                            std::int64_t version) {
  conn.command({"HSET", BoardKeys(prefix_, board).divisions(), "", text(version)}).checked();
}

bool League::is_open(redis::Connection& conn, const LeaguePeriod& p, std::int64_t version) {
  const redis::Reply r = conn.command({"HGET", Keys(prefix_, p).meta, "league"}).checked();
  return !r.is_nil() && r.as_string() == text(version);
}

bool League::open(redis::Connection& conn, const LeaguePeriod& p, std::int64_t version,
                  std::int64_t start, Instant expire_at) {
  const Keys k(prefix_, p);
  const redis::Args keys{k.meta, k.seats, k.waiting, k.board.divisions()};
  for (;;) {
    const redis::Reply r =
        open_
            .eval(conn, keys,
                  {text(version), text(start), text(kChunk), text(to_epoch_ms(expire_at))})
            .checked();
    if (r.type != redis::Reply::Type::array) return false;  // -1: the cache moved
    if (r.elements.size() != 2) throw redis::ReplyError("league_open.lua: expected 2 elements");
    if (r.at(0).as_int() == 1) return true;
  }
}

void League::restore(redis::Connection& conn, const LeaguePeriod& p,
                     const std::vector<SeatRow>& seats, Instant expire_at) {
  const Keys k(prefix_, p);
  const redis::Args keys{k.meta, k.seats};
  for (std::size_t i = 0; i < seats.size(); i += kChunk) {
    redis::Args args{text(to_epoch_ms(expire_at))};
    for (std::size_t n = i; n < std::min(i + kChunk, seats.size()); ++n) {
      args.push_back(seats[n].member);
      args.push_back(text(seats[n].seat));
    }
    restore_.eval(conn, keys, args).checked();
  }
}

std::vector<SeatRow> League::seats_after(redis::Connection& conn, const LeaguePeriod& p,
                                         std::int64_t division, std::int64_t after,
                                         std::int64_t limit) {
  const std::int64_t base = division * kSeatShift;
  const redis::Reply r =
      conn.command({"ZRANGEBYSCORE", Keys(prefix_, p).seats, "(" + text(base + after),
                    text(base + kSeatShift - 1), "WITHSCORES", "LIMIT", "0", text(limit)})
          .checked();
  std::vector<SeatRow> out;
  out.reserve(r.elements.size() / 2);
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    out.push_back({r.at(i).as_string(), std::stoll(r.at(i + 1).as_string())});
  }
  return out;
}

std::optional<CohortRead> League::read_cohort(redis::Connection& conn, const LeaguePeriod& p,
                                              const redis::Args& args) {
  const Keys k(prefix_, p);
  const redis::Reply r = cohort_.eval(conn, {k.seats, k.live}, args).checked();
  if (r.elements.empty()) return std::nullopt;
  if (r.elements.size() != 4) throw redis::ReplyError("league_cohort.lua: expected 4 elements");
  CohortRead out{r.at(0).as_int(), r.at(1).as_int(), {}};
  const redis::Reply& members = r.at(2);
  const redis::Reply& scores = r.at(3);
  for (std::size_t i = 0; i < members.elements.size(); ++i) {
    const redis::Reply& s = scores.at(i);
    out.members.emplace_back(
        members.at(i).as_string(),
        s.is_nil() ? std::nullopt : std::optional<std::int64_t>(std::stoll(s.as_string())));
  }
  return out;
}

std::optional<CohortRead> League::cohort_of(redis::Connection& conn, const LeaguePeriod& p,
                                            const std::string& member, std::int64_t size) {
  return read_cohort(conn, p, {"m", member, "0", text(size)});
}

CohortRead League::cohort(redis::Connection& conn, const LeaguePeriod& p, std::int64_t division,
                          std::int64_t number, std::int64_t size) {
  auto r = read_cohort(conn, p, {"c", text(division), text(number), text(size)});
  return r ? std::move(*r) : CohortRead{division, number, {}};
}

bool League::waiting(redis::Connection& conn, const LeaguePeriod& p, const std::string& member) {
  return !conn.command({"ZSCORE", Keys(prefix_, p).waiting, member}).checked().is_nil();
}

}  // namespace bk::hot
