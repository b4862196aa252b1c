// A league's pure rules (core/league.h): seats, cohort ids and zones, ties at the cut-offs,
// the top and bottom divisions. The close's SQL applies the same zone rule: the integration
// suite (tests/integration/league_test.cpp) checks the moves it writes against these zones.
#include "core/league.h"

#include <gtest/gtest.h>

namespace bk {
namespace {

LeagueRules rules() {
  LeagueRules l;
  l.divisions = {"bronze", "silver", "gold"};
  l.cohort_size = 30;
  l.promote = 7;
  l.relegate = 5;
  return l;
}

TEST(League, SeatsAndCohortNumbers) {
  const Seat s = decode_seat(2 * kSeatShift + 61);
  EXPECT_EQ(s.division, 2);
  EXPECT_EQ(s.place, 61);
  EXPECT_EQ(cohort_number(1, 30), 1);
  EXPECT_EQ(cohort_number(30, 30), 1);
  EXPECT_EQ(cohort_number(31, 30), 2);
  EXPECT_EQ(cohort_number(61, 30), 3);
}

TEST(League, CohortIdsRoundTripAndRefuseOthers) {
  const LeagueRules l = rules();
  EXPECT_EQ(cohort_name(l, {1, 12}), "silver-12");
  const auto id = parse_cohort(l, "silver-12");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->division, 1);
  EXPECT_EQ(id->number, 12);
  for (const char* bad : {"silver", "silver-", "silver-0", "silver-01", "platinum-1", "silver-1x",
                          "-1", "silver-9999999999"}) {
    EXPECT_FALSE(parse_cohort(l, bad)) << bad;
  }
}

TEST(League, ZonesWithTiesAtTheCutOffsAndTheEndDivisions) {
  const LeagueRules l = rules();
  EXPECT_EQ(zone_of(l, 1, 0, 29), Zone::promote);
  EXPECT_EQ(zone_of(l, 1, 6, 23), Zone::promote);  // 6 better: the 7th place
  EXPECT_EQ(zone_of(l, 1, 7, 22), Zone::stay);
  EXPECT_EQ(zone_of(l, 1, 20, 5), Zone::stay);
  EXPECT_EQ(zone_of(l, 1, 20, 4), Zone::relegate);  // 4 worse: among the worst 5
  EXPECT_EQ(zone_of(l, 1, 29, 0), Zone::relegate);
  // Ties: eight share 1st (0 better each): all promoted; ten share last (0 worse): all down.
  EXPECT_EQ(zone_of(l, 1, 0, 22), Zone::promote);
  EXPECT_EQ(zone_of(l, 1, 20, 0), Zone::relegate);
  // Nobody leaves the top upwards or the bottom downwards.
  EXPECT_EQ(zone_of(l, 2, 0, 29), Zone::stay);
  EXPECT_EQ(zone_of(l, 0, 29, 0), Zone::stay);
  // A small cohort: promotion is decided first.
  EXPECT_EQ(zone_of(l, 1, 0, 0), Zone::promote);
  EXPECT_EQ(zone_name(Zone::relegate), "relegate");
}

}  // namespace
}  // namespace bk
