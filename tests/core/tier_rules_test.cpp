// Tiers: first match wins, the percentile cut-off (ceil, at least rank 1, ties on the cut-off
// in the better tier), when the member count is needed, percent parsing, and the static
// checks check-config runs.
#include "core/tiers.h"

#include <gtest/gtest.h>

#include <string>

namespace bk {
namespace {

const Tiers kIssueTiers{{"champion", TierKind::top, 1},
                        {"gold", TierKind::percent, 10'000},
                        {"silver", TierKind::min_points, 500}};

std::string tier(const Tiers& tiers, std::int64_t rank, std::int64_t points, std::int64_t members) {
  const TierRule* rule = tier_of(tiers, Placing{rank, points}, members);
  return rule == nullptr ? "(none)" : rule->name;
}

TEST(Tiers, FirstMatchWins) {
  EXPECT_EQ(tier(kIssueTiers, 1, 900, 1000), "champion");
  EXPECT_EQ(tier(kIssueTiers, 2, 900, 1000), "gold");  // 1% of 1000: ranks 1..10
  EXPECT_EQ(tier(kIssueTiers, 10, 900, 1000), "gold");
  EXPECT_EQ(tier(kIssueTiers, 11, 900, 1000), "silver");  // not in the 1%, points >= 500
  EXPECT_EQ(tier(kIssueTiers, 11, 500, 1000), "silver");  // the bound is inclusive
  EXPECT_EQ(tier(kIssueTiers, 12, 499, 1000), "(none)");
  EXPECT_EQ(tier({}, 1, 1000, 1), "(none)");
}

TEST(Tiers, PercentCutoffRoundsUpAndAdmitsTheBestRankOfATinyPeriod) {
  EXPECT_EQ(percent_cutoff(1000, 10'000), 10);
  EXPECT_EQ(percent_cutoff(1001, 10'000), 11);  // 10.01 -> 11
  EXPECT_EQ(percent_cutoff(1, 10'000), 1);      // one member: rank 1 is in the top 1%
  EXPECT_EQ(percent_cutoff(3, 1), 1);           // 0.0001% of 3 members: still rank 1
  EXPECT_EQ(percent_cutoff(7, kPercentScale), 7);
  EXPECT_EQ(percent_cutoff(0, 10'000), 0);  // no members: no rank qualifies
  EXPECT_EQ(percent_cutoff(200'000, 125'000), 25'000);
  EXPECT_EQ(percent_cutoff(9'000'000'000'000, kPercentScale), 9'000'000'000'000);
}

TEST(Tiers, BothMembersOfATieOnTheCutoffGetTheBetterTier) {
  // Ranks 1, 2, 2, 4: top 2 admits both members sharing rank 2 (competition ranks).
  const Tiers top2{{"podium", TierKind::top, 2}};
  EXPECT_EQ(tier(top2, 2, 10, 4), "podium");
  EXPECT_EQ(tier(top2, 4, 9, 4), "(none)");
  // 40 members, 5%: cut-off rank 2; a tie at rank 2 is in, whoever else it holds.
  const Tiers pct{{"gold", TierKind::percent, 50'000}};
  EXPECT_EQ(tier(pct, 2, 10, 40), "gold");
  EXPECT_EQ(tier(pct, 3, 10, 40), "(none)");
}

TEST(Tiers, PointsRulesOnDescAndAscBoards) {
  const Tiers desc{{"silver", TierKind::min_points, 500}};
  EXPECT_EQ(tier(desc, 40, 500, 100), "silver");
  EXPECT_EQ(tier(desc, 41, 499, 100), "(none)");
  const Tiers asc{{"fast", TierKind::max_points, 60}};  // e.g. seconds to solve
  EXPECT_EQ(tier(asc, 40, 60, 100), "fast");
  EXPECT_EQ(tier(asc, 41, 61, 100), "(none)");
}

TEST(Tiers, MembersAreNeededOnlyWhenAPercentRuleIsReached) {
  EXPECT_FALSE(needs_members(kIssueTiers, Placing{1, 0}));  // champion decides first
  EXPECT_TRUE(needs_members(kIssueTiers, Placing{2, 900}));
  const Tiers no_percent{{"a", TierKind::top, 3}, {"b", TierKind::min_points, 10}};
  EXPECT_FALSE(needs_members(no_percent, Placing{50, 0}));
  EXPECT_FALSE(needs_members({}, Placing{1, 0}));
}

TEST(Tiers, ParsesPercentages) {
  EXPECT_EQ(parse_percent("1%"), 10'000);
  EXPECT_EQ(parse_percent("12.5%"), 125'000);
  EXPECT_EQ(parse_percent("0.0001%"), 1);
  EXPECT_EQ(parse_percent("100%"), kPercentScale);
  EXPECT_EQ(parse_percent("100.0%"), kPercentScale);
  for (const char* bad : {"0%", "0.00%", "100.01%", "101%", "1", "%", "-1%", "1.%", ".5%",
                          "0.00001%", "1 %", "1e2%", "1000%", ""}) {
    EXPECT_EQ(parse_percent(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(format_percent(10'000), "1%");
  EXPECT_EQ(format_percent(125'000), "12.5%");
  EXPECT_EQ(format_percent(1), "0.0001%");
  EXPECT_EQ(format_percent(kPercentScale), "100%");
}

TEST(Tiers, NamesArePlain) {
  EXPECT_EQ(tier_name_problem("gold"), std::nullopt);
  EXPECT_EQ(tier_name_problem("Gold_League-2.b"), std::nullopt);
  EXPECT_NE(tier_name_problem(""), std::nullopt);
  EXPECT_NE(tier_name_problem("gold league"), std::nullopt);
  EXPECT_NE(tier_name_problem("or'1"), std::nullopt);
  EXPECT_NE(tier_name_problem(std::string(kMaxTierName + 1, 'a')), std::nullopt);
}

TEST(Tiers, ARuleOfTheSameKindThatAnEarlierCoversCanNeverMatch) {
  const auto shadowed = [](TierKind kind, std::int64_t first, std::int64_t then) {
    return shadowed_by(TierRule{"first", kind, first}, TierRule{"then", kind, then}).has_value();
  };
  EXPECT_TRUE(shadowed(TierKind::top, 100, 10));
  EXPECT_TRUE(shadowed(TierKind::top, 10, 10));
  EXPECT_FALSE(shadowed(TierKind::top, 10, 100));
  EXPECT_TRUE(shadowed(TierKind::percent, 50'000, 10'000));  // "1%" after "5%"
  EXPECT_FALSE(shadowed(TierKind::percent, 10'000, 50'000));
  EXPECT_TRUE(shadowed(TierKind::min_points, 500, 900));
  EXPECT_FALSE(shadowed(TierKind::min_points, 900, 500));
  EXPECT_TRUE(shadowed(TierKind::max_points, 60, 30));
  EXPECT_FALSE(shadowed(TierKind::max_points, 30, 60));
  // Different kinds depend on the period: not decided statically.
  EXPECT_FALSE(shadowed_by({"a", TierKind::top, 1000}, {"b", TierKind::percent, 10'000}));
  EXPECT_FALSE(shadowed_by({"a", TierKind::percent, 10'000}, {"b", TierKind::top, 1}));
  EXPECT_FALSE(shadowed_by({"a", TierKind::top, 1}, {"b", TierKind::min_points, 0}));
  const auto why = shadowed_by({"gold", TierKind::top, 100}, {"champion", TierKind::top, 10});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("tier 'champion' (top 10) can never match"), std::string::npos) << *why;
  EXPECT_NE(why->find("tier 'gold' (top 100)"), std::string::npos) << *why;
}

TEST(Tiers, RulesThatAdmitEveryoneOrNoOne) {
  EXPECT_TRUE(matches_everyone({"all", TierKind::percent, kPercentScale}, 0, 1000));
  EXPECT_TRUE(matches_everyone({"all", TierKind::min_points, 0}, 0, 1000));
  EXPECT_TRUE(matches_everyone({"all", TierKind::max_points, 1000}, 0, 1000));
  EXPECT_FALSE(matches_everyone({"some", TierKind::min_points, 1}, 0, 1000));
  EXPECT_FALSE(matches_everyone({"some", TierKind::top, 1'000'000}, 0, 1000));
  EXPECT_TRUE(matches_no_one({"none", TierKind::min_points, 1001}, 0, 1000));
  EXPECT_TRUE(matches_no_one({"none", TierKind::max_points, -1}, 0, 1000));
  EXPECT_FALSE(matches_no_one({"some", TierKind::min_points, 1000}, 0, 1000));
}

}  // namespace
}  // namespace bk
