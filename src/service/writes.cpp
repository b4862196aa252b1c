// Writes answered with standings (Leaderboards::write, write_batch): the update path's
// apply(); one write's standings come from what its script call read with it
// (Reads::update_standings), a batch's from one ranks() read per period touched.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "service/leaderboards.h"

namespace bk::service {
namespace {

// The board's periods that contain the update's time; none for a board the config lacks or
// a time apply() refuses (invalid_time: no arithmetic on it).
std::vector<PeriodRef> periods_at(const Config& config, const Update& update, Instant now) {
  std::vector<PeriodRef> out;
  const Instant at = update.at.value_or(now);
  const BoardConfig* c = config.board_for(update.board);
  if (c == nullptr || at < kEarliestEventTime || at > kLatestEventTime) return out;
  for (const PeriodSpec& spec : c->periods) {
    try {
      out.push_back(resolve_period(config, update.board, spec.name, std::nullopt, at));
    } catch (const UsageError&) {
      continue;  // no period of this kind contains the time
    }
  }
  return out;
}

bool touched(const UpdateResult& result, const PeriodRef& ref) {
  return std::any_of(result.points.begin(), result.points.end(), [&](const PeriodPoints& p) {
    return p.period == ref.spec->name && p.period_id == ref.period.id;
  });
}

// A standing that cannot be read right now is left out: the update is applied all the same.
template <class Read>
auto tolerant(Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const Error& e) {
    if (!e.transient()) throw;
  }
  return {};
}

// The member's standings in `ref` around the update `r`: from what the update script read
// with it (one round trip for the whole write while the member is within the hot part);
// where it gave nothing usable, the rank read after the update, without the one before.
// Either way `after` carries the member's tier on a tiered board.
BeforeAfter standings_in(Reads& reads, const PeriodRef& ref, const std::string& member,
                         const UpdateResult& r) {
  for (const PeriodFacts& f : r.standings) {
    if (f.period != ref.spec->name || f.period_id != ref.period.id) continue;
    if (auto s = tolerant([&] { return reads.update_standings(ref, member, f.hot); })) {
      return std::move(*s);
    }
    break;
  }
  return {std::nullopt, tolerant([&] { return reads.ranks({ref}, {member}).front(); })};
}

// A member's standing in `ref` before and after a write, with what the board says of it.
PeriodStanding period_standing(const PeriodRef& ref, std::optional<Standing> before,
                               std::optional<Standing> after) {
  return {ref.spec->name,
          ref.period.id,
          std::move(before),
          std::move(after),
          ref.config->policy == Policy::best,
          !ref.config->tiers.empty()};
}

}  // namespace

Written Leaderboards::write(const Update& update) {
  const std::vector<PeriodRef> refs = periods_at(config_, update, now());
  Written w{apply(std::vector<Update>{update}, Detail::standings).front(), {}};
  const bool applied = w.result.status == UpdateStatus::applied;
  if (!applied && w.result.status != UpdateStatus::duplicate) return w;
  for (const PeriodRef& ref : refs) {
    if (applied && !touched(w.result, ref)) continue;
    BeforeAfter s = standings_in(reads(), ref, update.member, w.result);
    w.periods.push_back(period_standing(ref, std::move(s.before), std::move(s.after)));
  }
  return w;
}

std::vector<Written> Leaderboards::write_batch(const std::vector<Update>& updates, bool standings) {
  if (standings) {  // bounded before anything is applied
    std::set<std::tuple<std::string, std::string, std::string>> periods;
    const Instant t = now();
    for (const Update& u : updates) {
      for (const PeriodRef& ref : periods_at(config_, u, t))
        periods.emplace(u.board, ref.spec->name, ref.period.id);
    }
    if (periods.size() > kMaxStandingPeriods) {
      throw UsageError("standings are read for at most " + std::to_string(kMaxStandingPeriods) +
                       " periods a batch; this one touches " + std::to_string(periods.size()));
    }
  }
  std::vector<Written> out;
  for (UpdateResult& r : apply(updates)) out.push_back({std::move(r), {}});
  if (!standings) return out;
  // Per period touched, the members to read there, then one ranks() read each.
  using Key = std::tuple<std::string, std::string, std::string>;  // board, period, period id
  std::map<Key, std::pair<PeriodRef, std::vector<std::string>>> reads_of;
  std::vector<std::vector<Key>> keys_of(updates.size());
  const Instant at = now();
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const UpdateStatus status = out[i].result.status;
    if (status != UpdateStatus::applied && status != UpdateStatus::duplicate) continue;
    for (const PeriodRef& ref : periods_at(config_, updates[i], at)) {
      if (status == UpdateStatus::applied && !touched(out[i].result, ref)) continue;
      const Key key{updates[i].board, ref.spec->name, ref.period.id};
      auto& entry = reads_of.try_emplace(key, ref, std::vector<std::string>{}).first->second;
      entry.second.push_back(updates[i].member);
      keys_of[i].push_back(key);
    }
  }
  std::map<Key, std::map<std::string, Standing>> read;
  for (auto& [key, entry] : reads_of) {
    std::vector<std::string>& members = entry.second;
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    const auto ranks = tolerant([&] { return reads().ranks({entry.first}, members); });
    for (std::size_t m = 0; m < ranks.size(); ++m) {
      if (ranks[m]) read[key].emplace(members[m], *ranks[m]);
    }
  }
  for (std::size_t i = 0; i < updates.size(); ++i) {
    for (const Key& key : keys_of[i]) {
      PeriodStanding p = period_standing(reads_of.at(key).first, std::nullopt, std::nullopt);
      const auto found = read.find(key);
      if (found != read.end()) {
        const auto m = found->second.find(updates[i].member);
        if (m != found->second.end()) p.after = m->second;
      }
      out[i].periods.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace bk::service
