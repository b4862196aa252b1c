// A league board's cohort reads (see cohorts.h and Reads::cohort_of).
#include <algorithm>

#include "core/score_codec.h"
#include "service/live_reads.h"
#include "service/reads.h"
#include "service/tiers.h"

namespace bk::service {

// Only a Redis tier holds leagues (tier_adapters.cpp); any other is a caller's mistake.
std::optional<hot::CohortRead> HotTier::cohort_of(const hot::LeaguePeriod&, const std::string&,
                                                  std::int64_t) {
  throw Error("this hot tier holds no league cohorts");
}
hot::CohortRead HotTier::cohort(const hot::LeaguePeriod&, std::int64_t, std::int64_t,
                                std::int64_t) {
  throw Error("this hot tier holds no league cohorts");
}
bool HotTier::waiting(const hot::LeaguePeriod&, const std::string&) {
  return false;
}

namespace {

const LeagueRules& league_of(const PeriodRef& ref) {
  if (!ref.config->league) {
    throw NotFoundError("board '" + ref.board + "' is not a league (" + ref.config->where +
                        "): it has no cohorts");
  }
  return *ref.config->league;
}

std::string where(const PeriodRef& ref) {
  return "board '" + ref.board + "' " + ref.spec->name + " " + ref.period.id;
}

// A live cohort as Redis holds it: ranked by encoded score (smaller ranks higher; equal scores
// share a rank), members without a score (removed) left out, zones by the current standing.
Cohort live_cohort(const PeriodRef& ref, const hot::CohortRead& read) {
  const LeagueRules& league = *ref.config->league;
  std::vector<std::pair<std::int64_t, std::string>> ranked;
  for (const auto& [member, encoded] : read.members) {
    if (encoded) ranked.emplace_back(*encoded, member);
  }
  std::sort(ranked.begin(), ranked.end());
  const ScoreCodec codec(ref.config->layout_for(*ref.spec));
  Cohort out{league.divisions.at(static_cast<std::size_t>(read.division)),
             cohort_name(league, {read.division, read.number}),
             {},
             false};
  // Each run of equal scores: the members before it are better, those after it worse.
  for (auto run = ranked.begin(); run != ranked.end();) {
    const auto end =
        std::find_if(run, ranked.end(), [&](const auto& r) { return r.first != run->first; });
    const std::int64_t better = run - ranked.begin();
    const std::int64_t worse = ranked.end() - end;
    const Decoded d = codec.decode(run->first, ref.period.start);
    const Zone zone = zone_of(league, read.division, better, worse);
    for (auto it = run; it != end; ++it) {
      out.rows.push_back({better + 1, it->second, d.points, d.achieved_at, zone});
    }
    run = end;
  }
  return out;
}

Zone zone_of_move(const std::string& move) {
  return move == "promoted" ? Zone::promote : move == "relegated" ? Zone::relegate : Zone::stay;
}

Cohort archived_cohort(const std::vector<cold::LeagueResult>& rows) {
  Cohort out{rows.front().division, rows.front().cohort, {}, true};
  for (const cold::LeagueResult& r : rows) {
    out.rows.push_back({r.cohort_rank, r.member, r.points, std::nullopt, zone_of_move(r.move)});
  }
  return out;
}

}  // namespace

Cohort Reads::cohort_of(const PeriodView& view, const std::string& member) {
  const LeagueRules& league = league_of(view.ref);
  const PeriodRef& ref = view.ref;
  if (view.state == PeriodState::archived) {
    const auto rows =
        archive().league_cohort({ref.board, ref.spec->name, ref.period.id}, "", member);
    if (rows.empty())
      throw NothingToReadError("member '" + member + "' ranked in no cohort of " + where(ref));
    return archived_cohort(rows);
  }
  const hot::LeaguePeriod p{ref.board, ref.spec->name, ref.period.id};
  const auto read = live_.hot().cohort_of(p, member, league.cohort_size);
  if (!read) {
    throw NothingToReadError(
        "member '" + member + "' has no cohort in " + where(ref) +
        (live_.hot().waiting(p, member)
             ? ": it waits for the period's cohorts to open (the next tick, once the previous "
               "period closed)"
             : ": it has no event in this period"));
  }
  return live_cohort(ref, *read);
}

Cohort Reads::cohort(const PeriodView& view, const std::string& cohort) {
  const LeagueRules& league = league_of(view.ref);
  const PeriodRef& ref = view.ref;
  const auto id = parse_cohort(league, cohort);
  if (!id) {
    throw NotFoundError("no cohort '" + cohort + "' on board '" + ref.board +
                        "': a cohort id is <division>-<n>, e.g. " +
                        cohort_name(league, {league.start, 1}));
  }
  Cohort out;
  if (view.state == PeriodState::archived) {
    const auto rows =
        archive().league_cohort({ref.board, ref.spec->name, ref.period.id}, cohort, "");
    if (!rows.empty()) out = archived_cohort(rows);
  } else {
    const hot::LeaguePeriod p{ref.board, ref.spec->name, ref.period.id};
    out = live_cohort(ref, live_.hot().cohort(p, id->division, id->number, league.cohort_size));
  }
  if (out.rows.empty())
    throw NothingToReadError("cohort '" + cohort + "' of " + where(ref) + " has nobody ranked");
  return out;
}

}  // namespace bk::service
