// The config loader's checks of a board's tiers: the rules as read, and every refusal with the
// file, line and column of the rule at fault (unknown keys, names, criteria, the board's
// order, rules that can never match).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "config_testing.h"

namespace bk {
namespace {

using namespace config_testing;  // NOLINT(google-build-using-namespace)

std::string tiered(const std::string& rules, const std::string& extra = "") {
  return minimal(extra + "    tiers:\n" + rules);
}

TEST(ConfigTiers, ReadsTheRulesInOrder) {
  const Config c =
      parse(tiered("      - {name: champion, top: 1}\n"
                   "      - {name: gold, top: \"1.5%\"}\n"
                   "      - name: silver\n"
                   "        min_points: 500\n"));
  const Tiers& t = c.boards.at(0).tiers;
  ASSERT_EQ(t.size(), 3U);
  EXPECT_EQ(t[0].name, "champion");
  EXPECT_EQ(t[0].kind, TierKind::top);
  EXPECT_EQ(t[0].value, 1);
  EXPECT_EQ(t[1].kind, TierKind::percent);
  EXPECT_EQ(t[1].value, 15'000);
  EXPECT_EQ(t[2].kind, TierKind::min_points);
  EXPECT_EQ(t[2].value, 500);
  EXPECT_TRUE(parse(minimal()).boards.at(0).tiers.empty());
}

TEST(ConfigTiers, AscBoardsSpellPointsAsMaxPoints) {
  const Config c = parse(tiered("      - {name: fast, max_points: 60}\n", "    order: asc\n"));
  EXPECT_EQ(c.boards.at(0).tiers.at(0).kind, TierKind::max_points);
  const auto p = problems_of(tiered("      - {name: fast, min_points: 60}\n", "    order: asc\n"));
  EXPECT_TRUE(HasProblem(p, 8, 22, "min_points does not fit board 'points', ordered asc"));
  EXPECT_TRUE(HasProblem(p, 8, 22, "write max_points"));
  const auto q = problems_of(tiered("      - {name: rich, max_points: 60}\n"));
  EXPECT_TRUE(HasProblem(q, 7, 22, "max_points does not fit board 'points', ordered desc"));
}

TEST(ConfigTiers, RefusesUnknownKeysAndMalformedRules) {
  auto p = problems_of(tiered("      - {name: gold, top: 1, bonus: 5}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 30, "unknown key 'bonus' in a tier"));
  p = problems_of(tiered("      - {name: gold}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 9, "a tier needs one criterion: top, min_points or max_points"));
  p = problems_of(tiered("      - {name: gold, top: 1, min_points: 5}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 30, "a tier has one criterion, not both top and min_points"));
  p = problems_of(tiered("      - {top: 1}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 9, "a tier has no 'name'"));
  p = problems_of(tiered("      - gold\n"));
  EXPECT_TRUE(HasProblem(p, 7, 9, "a tier must be a map"));
  p = problems_of(minimal("    tiers: {name: gold, top: 1}\n"));
  EXPECT_TRUE(HasProblem(p, 6, 12, "tiers must be a list of rules"));
  p = problems_of(minimal("    tiers: []\n"));
  EXPECT_TRUE(HasProblem(p, 6, 12, "tiers is empty"));
}

TEST(ConfigTiers, RefusesEmptyBadAndDuplicateNames) {
  auto p = problems_of(tiered("      - {name: \"\", top: 1}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 16, "a tier name is empty"));
  p = problems_of(tiered("      - {name: \"gold league\", top: 1}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 16, "a tier name may only contain letters, digits"));
  p = problems_of(tiered("      - {name: gold, top: 1}\n      - {name: gold, top: 5}\n"));
  EXPECT_TRUE(HasProblem(p, 8, 9, "tier 'gold' is listed twice (first at test.yaml:7:9)"));
}

TEST(ConfigTiers, RefusesPercentilesOutsideTheRangeAndRanksBelowOne) {
  for (const char* bad : {"0%", "100.5%", "-1%", "abc%", "1.23456%"}) {
    const auto p = problems_of(tiered("      - {name: gold, top: \"" + std::string(bad) + "\"}\n"));
    EXPECT_TRUE(HasProblem(p, 7, 27, "is not a percentile in (0%, 100%]")) << bad;
  }
  auto p = problems_of(tiered("      - {name: gold, top: 0}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 27, "top must be at least 1 (a rank), not 0"));
  p = problems_of(tiered("      - {name: gold, top: ten}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 27, "top must be a whole number"));
}

TEST(ConfigTiers, RefusesARuleThatCanNeverMatchAfterAnEarlierOne) {
  auto p = problems_of(tiered("      - {name: gold, top: 100}\n      - {name: champ, top: 10}\n"));
  EXPECT_TRUE(HasProblem(p, 8, 9, "tier 'champ' (top 10) can never match"));
  EXPECT_TRUE(HasProblem(p, 8, 9, "tier 'gold' (top 100) listed before it"));
  p = problems_of(tiered("      - {name: a, top: \"5%\"}\n      - {name: b, top: \"1%\"}\n"));
  EXPECT_TRUE(HasProblem(p, 8, 9, "tier 'b' (top 1%) can never match"));
  p = problems_of(
      tiered("      - {name: a, min_points: 500}\n      - {name: b, min_points: 900}\n"));
  EXPECT_TRUE(HasProblem(p, 8, 9, "tier 'b' (min_points 900) can never match"));
  p = problems_of(tiered("      - {name: a, max_points: 60}\n      - {name: b, max_points: 30}\n",
                         "    order: asc\n"));
  EXPECT_TRUE(HasProblem(p, 9, 9, "tier 'b' (max_points 30) can never match"));
  // After a rule that admits every member, nothing can match.
  p = problems_of(tiered("      - {name: all, top: \"100%\"}\n      - {name: b, top: 1}\n"));
  EXPECT_TRUE(HasProblem(p, 8, 9, "tier 'b' can never match: tier 'all' (top 100%) admits"));
  p = problems_of(tiered("      - {name: all, min_points: 0}\n      - {name: b, top: 1}\n"));
  EXPECT_TRUE(HasProblem(p, 8, 9, "tier 'b' can never match"));
  // Beyond the board's points range.
  p = problems_of(tiered("      - {name: a, min_points: 1001}\n"));
  EXPECT_TRUE(HasProblem(p, 7, 9, "tier 'a' (min_points 1001) can never match"));
  // Mixed kinds depend on the period: both orders load.
  parse(tiered("      - {name: a, top: 1000}\n      - {name: b, top: \"1%\"}\n"));
  parse(tiered("      - {name: a, top: \"1%\"}\n      - {name: b, top: 1}\n"));
  parse(tiered("      - {name: a, min_points: 900}\n      - {name: b, top: 1}\n"));
}

}  // namespace
}  // namespace bk
