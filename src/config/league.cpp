// A board's `league:` (docs/architecture.md "Leagues"): the divisions, lowest first, the
// cohort size, how many of a cohort move up and down at a close, where a new member starts and
// what becomes of a member who did not play; then what a league board cannot also be (more
// than one period kind, alltime, tiers, a hot_keep: a league board is never spilled).
#include <algorithm>

#include "config/loader.h"

namespace bk::config_detail {
namespace {

const std::vector<std::string_view> kLeagueKeys{"divisions", "cohort_size", "promote",
                                                "relegate",  "start",       "inactive"};
constexpr std::size_t kMaxDivisionName = 32;

// Why a division name cannot be one; nullopt when it can. Cohort ids are "<division>-<n>" in
// URLs and SQL, so names are plain: letters, digits and _.
std::optional<std::string> division_name_problem(std::string_view name) {
  if (name.empty()) return "a division name is empty";
  if (name.size() > kMaxDivisionName) {
    return "a division name has at most " + std::to_string(kMaxDivisionName) + " bytes, not " +
           std::to_string(name.size());
  }
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  });
  if (!plain) return "a division name may only contain letters, digits and _";
  return std::nullopt;
}

}  // namespace

void Loader::parse_league(const Fields& f, BoardDraft& d) {
  const auto e = f.get("league");
  if (!e) return;
  const auto node = read_map(*e, "league");
  if (!node) return;
  const std::size_t before = problem_count();
  const Fields lf = fields(*node, "in league", kLeagueKeys);
  LeagueConfig league;
  if (const auto divisions = lf.get("divisions")) {
    parse_divisions(*divisions, league);
  } else {
    report(e->key,
           "league has no 'divisions'; list them lowest first, e.g. [bronze, silver, gold]");
  }
  parse_league_moves(lf, league);
  check_league_board(f, *e, d);
  if (problem_count() == before) d.board.league = std::move(league);
}

void Loader::parse_divisions(const Entry& entry, LeagueConfig& league) {
  if (!entry.value.is_sequence() || entry.value.size() < 2 || entry.value.size() > kMaxDivisions) {
    report(entry, "divisions must be a list of 2 to " + std::to_string(kMaxDivisions) +
                      " names, lowest first (e.g. [bronze, silver, gold]), not " +
                      kind_of(entry.value));
    return;
  }
  for (const auto item : entry.value.items()) {
    const std::string name = item.is_scalar() ? item.scalar() : std::string();
    const auto problem = item.is_scalar() ? division_name_problem(name)
                                          : std::optional<std::string>("a division is a name");
    if (problem) {
      report(item, *problem + (item.is_scalar() ? " (" + quoted(name) + ")" : ""));
    } else if (std::find(league.divisions.begin(), league.divisions.end(), name) !=
               league.divisions.end()) {
      report(item, "division " + quoted(name) + " is listed twice");
    } else {
      league.divisions.push_back(name);
    }
  }
}

// cohort_size, promote, relegate, start and inactive, each checked against the others.
void Loader::parse_league_moves(const Fields& f, LeagueConfig& league) {
  if (const auto e = f.get("cohort_size")) {
    const auto v = read_int(*e, "cohort_size");
    if (v && (*v < 2 || *v > kMaxCohortSize)) {
      report(*e, "cohort_size must be in [2, " + std::to_string(kMaxCohortSize) + "], not " +
                     std::to_string(*v));
    } else if (v) {
      league.cohort_size = *v;
    }
  }
  std::int64_t moves = 0;
  for (const std::string_view key : {"promote", "relegate"}) {
    const auto e = f.get(key);
    if (!e) continue;
    const auto v = read_int(*e, key);
    if (v && (*v < 0 || moves + *v > league.cohort_size)) {
      report(*e, std::string(key) + " must be >= 0 and promote + relegate at most cohort_size (" +
                     std::to_string(league.cohort_size) + "), not " + std::to_string(*v));
    } else if (v) {
      (key == "promote" ? league.promote : league.relegate) = *v;
      moves += *v;
    }
  }
  if (const auto e = f.get("start")) {
    const auto name = read_string(*e, "start");
    const auto at = std::find(league.divisions.begin(), league.divisions.end(), name.value_or(""));
    if (name && at == league.divisions.end() && !league.divisions.empty()) {
      report(*e, "start " + quoted(*name) + " is not one of the divisions");
    } else if (name) {
      league.start = at - league.divisions.begin();
    }
  }
  if (const auto e = f.get("inactive")) {
    const auto v = read_choice<bool>(*e, "inactive", {{"keep", false}, {"drop", true}});
    if (v) league.inactive_drop = *v;
  }
}

// One period kind, not alltime (a league closes), no tiers (the cohort's zones are its tiers),
// no hot_keep (every member of a league board stays in Redis: cohorts are ranked there).
void Loader::check_league_board(const Fields& f, const Entry& entry, const BoardDraft& d) {
  const BoardConfig& b = d.board;
  if (d.periods_ok && b.periods.size() != 1) {
    report(entry.key,
           d.label + " is a league: it has one period kind (its cohorts close with it), not " +
               std::to_string(b.periods.size()) + "; make another board for another period kind");
  } else if (d.periods_ok && b.periods.front().kind == PeriodKind::alltime) {
    report(entry.key,
           d.label + " is a league: its period must close (weekly, daily, ...), not alltime");
  }
  if (const auto t = f.get("tiers")) {
    report(t->key, d.label + " is a league: its cohorts' zones are its tiers; remove tiers");
  }
  if (const auto h = f.get("hot_keep")) {
    report(h->key, d.label +
                       " is a league: every member stays in Redis (cohorts are ranked "
                       "there); remove hot_keep");
  }
}

}  // namespace bk::config_detail
