// Tick's steps on a league period (see league.h).
#include "lifecycle/league.h"

#include <algorithm>

#include "cold/league.h"
#include "hot/league.h"

namespace bk::lifecycle {
namespace {

constexpr std::int64_t kSeatsPerRead = 10000;

struct LeagueJob {
  const PeriodJob& job;
  const LeagueRules& rules = *job.target.config->league;
  const std::string& board = job.target.board;
  const std::string& period = job.target.spec->name;
  const std::string& period_id = job.target.period.id;
  const hot::LeaguePeriod at{board, period, period_id};
  hot::League redis_side{job.hot.key_prefix()};
  cold::LeagueStore store{job.cold.link()};
  Instant expire_at() const {
    return job.target.period.end + job.target.config->retention_for(*job.target.spec);
  }
};

// league_members copied into the Redis cache a page at a time (flat memory however many
// members), division names as indexes into the board's divisions (a name the config no longer
// lists counts as the start division), the cache marked complete at `version` last.
void copy_divisions(LeagueJob& l, std::int64_t version) {
  l.redis_side.clear_divisions(l.job.redis, l.board);
  std::string after;
  for (;;) {
    const auto page = l.store.divisions(l.board, after, kSeatsPerRead);
    std::vector<std::pair<std::string, std::int64_t>> indexes;
    indexes.reserve(page.size());
    for (const auto& [member, name] : page) {
      const auto at = std::find(l.rules.divisions.begin(), l.rules.divisions.end(), name);
      indexes.emplace_back(
          member, at == l.rules.divisions.end() ? l.rules.start : at - l.rules.divisions.begin());
    }
    l.redis_side.add_divisions(l.job.redis, l.board, indexes);
    if (static_cast<std::int64_t>(page.size()) < kSeatsPerRead) break;
    after = page.back().first;
  }
  l.redis_side.mark_divisions(l.job.redis, l.board, version);
}

// Seats Redis lost (it forgot its data) come back before anyone else is seated, a page at a
// time as the divisions are copied.
void restore_seats(LeagueJob& l) {
  std::string after;
  for (;;) {
    const auto page = l.store.seats({l.board, l.period, l.period_id}, after, kSeatsPerRead);
    std::vector<hot::SeatRow> seats;
    seats.reserve(page.size());
    for (const cold::LeagueSeat& s : page) {
      seats.push_back({s.member, s.division * kSeatShift + s.place});
    }
    l.redis_side.restore(l.job.redis, l.at, seats, l.expire_at());
    if (static_cast<std::int64_t>(page.size()) < kSeatsPerRead) break;
    after = page.back().member;
  }
}

}  // namespace

void open_cohorts(const PeriodJob& job) {
  LeagueJob l{job};
  const std::int64_t version = l.store.version(l.board);
  if (l.redis_side.is_open(job.redis, l.at, version) &&
      l.redis_side.divisions_version(job.redis, l.board) == version) {
    return;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (l.redis_side.divisions_version(job.redis, l.board) != version) {
      copy_divisions(l, version);
    }
    restore_seats(l);
    if (l.redis_side.open(job.redis, l.at, version, l.rules.start, l.expire_at())) {
      return;
    }
  }
}

std::int64_t checkpoint_seats(const PeriodJob& job) {
  LeagueJob l{job};
  const cold::PeriodKey key{l.board, l.period, l.period_id};
  std::map<std::int64_t, std::int64_t> after = l.store.checkpointed(key);
  std::int64_t saved = 0;
  const auto divisions = static_cast<std::int64_t>(l.rules.divisions.size());
  for (std::int64_t d = 0; d < divisions; ++d) {
    for (;;) {
      const std::vector<hot::SeatRow> rows =
          l.redis_side.seats_after(job.redis, l.at, d, after[d], kSeatsPerRead);
      std::vector<cold::LeagueSeat> seats;
      seats.reserve(rows.size());
      for (const hot::SeatRow& r : rows) {
        const Seat s = decode_seat(r.seat);
        seats.push_back({r.member, s.division, s.place});
        after[d] = std::max(after[d], s.place);
      }
      l.store.save_seats(key, seats);
      saved += static_cast<std::int64_t>(seats.size());
      if (static_cast<std::int64_t>(rows.size()) < kSeatsPerRead) break;
    }
  }
  return saved;
}

}  // namespace bk::lifecycle
