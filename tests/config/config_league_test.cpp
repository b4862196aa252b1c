// The config loader's checks of a league board (`league:`): the settings as read, and every
// refusal with the file, line and column at fault.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "config_testing.h"

namespace bk {
namespace {

using namespace config_testing;  // NOLINT(google-build-using-namespace)

// Line 6 is `league:`, line 7 the first key under it.
std::string league(const std::string& keys, const std::string& before = "") {
  return minimal(before + "    league:\n" + keys);
}

const std::string kDivisions = "      divisions: [bronze, silver, gold]\n";

TEST(ConfigLeague, ReadsTheSettingsAndTheirDefaults) {
  const Config c =
      parse(league(kDivisions + "      cohort_size: 30\n      promote: 7\n      relegate: 5\n"
                                "      start: silver\n      inactive: drop\n"));
  const auto& l = c.boards.at(0).league;
  ASSERT_TRUE(l);
  EXPECT_EQ(l->divisions, (std::vector<std::string>{"bronze", "silver", "gold"}));
  EXPECT_EQ(l->cohort_size, 30);
  EXPECT_EQ(l->promote, 7);
  EXPECT_EQ(l->relegate, 5);
  EXPECT_EQ(l->start, 1);
  EXPECT_TRUE(l->inactive_drop);
  const auto d = parse(league(kDivisions)).boards.at(0).league;
  ASSERT_TRUE(d);
  EXPECT_EQ(d->start, 0);
  EXPECT_FALSE(d->inactive_drop);
  EXPECT_FALSE(parse(minimal()).boards.at(0).league);
}

TEST(ConfigLeague, RefusesBadDivisionsAndSizes) {
  auto p = problems_of(league("      cohort_size: 30\n"));
  EXPECT_TRUE(HasProblem(p, 6, 5, "league has no 'divisions'"));
  p = problems_of(league("      divisions: [gold]\n"));
  EXPECT_TRUE(HasProblem(p, 7, 18, "divisions must be a list of 2 to 32 names"));
  p = problems_of(league("      divisions: [gold, gold]\n"));
  EXPECT_TRUE(HasProblem(p, 7, 25, "division 'gold' is listed twice"));
  p = problems_of(league("      divisions: [gold, \"si-lver\"]\n"));
  EXPECT_TRUE(HasProblem(p, 7, 25, "a division name may only contain letters, digits and _"));
  p = problems_of(league(kDivisions + "      cohort_size: 1\n"));
  EXPECT_TRUE(HasProblem(p, 8, 20, "cohort_size must be in [2, 1000], not 1"));
  p = problems_of(
      league(kDivisions + "      cohort_size: 10\n      promote: 6\n      relegate: 5\n"));
  EXPECT_TRUE(HasProblem(p, 10, 17, "promote + relegate at most cohort_size (10), not 5"));
  p = problems_of(league(kDivisions + "      start: platinum\n"));
  EXPECT_TRUE(HasProblem(p, 8, 14, "start 'platinum' is not one of the divisions"));
  p = problems_of(league(kDivisions + "      inactive: sleep\n"));
  EXPECT_TRUE(HasProblem(p, 8, 17, "inactive must be keep or drop"));
  p = problems_of(league(kDivisions + "      bonus: 1\n"));
  EXPECT_TRUE(HasProblem(p, 8, 7, "unknown key 'bonus' in league"));
}

TEST(ConfigLeague, RefusesWhatALeagueBoardCannotAlsoBe) {
  const std::string two =
      "boards:\n  - name: points\n    periods: [daily, weekly]\n"
      "    max_points: 1000\n    retention: {default: 2d}\n    league:\n" +
      kDivisions;
  EXPECT_TRUE(HasProblem(problems_of(two), 6, 5, "is a league: it has one period kind"));
  const std::string alltime =
      "boards:\n  - name: points\n    periods: [alltime]\n"
      "    max_points: 1000\n    retention: {default: 2d}\n    league:\n" +
      kDivisions;
  EXPECT_TRUE(HasProblem(problems_of(alltime), 6, 5, "its period must close"));
  auto p = problems_of(league(kDivisions, "    tiers: [{name: gold, top: 1}]\n"));
  EXPECT_TRUE(HasProblem(p, 6, 5, "its cohorts' zones are its tiers; remove tiers"));
  p = problems_of(league(kDivisions, "    hot_keep: 100\n"));
  EXPECT_TRUE(HasProblem(p, 6, 5, "every member stays in Redis"));
}

}  // namespace
}  // namespace bk
