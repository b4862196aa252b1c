// Windowed periods in the config: {name, period: weekly, starts: "sat 00:00", duration: 48h}
// and {name, cron: ..., duration: 1h}, and each mistake reported at its file:line:column.
#include <gtest/gtest.h>

#include "config_testing.h"

namespace bk {
namespace {

using namespace config_testing;  // NOLINT(google-build-using-namespace)

std::string board_with(const std::string& periods) {
  return "boards:\n  - name: b\n    periods:\n" + periods +
         "    max_points: 10\n    retention: {default: 9d}\n";
}

TEST(ConfigWindows, EachSpellingParses) {
  const Config c = parse(
      board_with(R"(      - {name: weekend, period: weekly, starts: "sat 00:00", duration: 48h}
      - {name: happy_hour, cron: "0 18 * * *", duration: 1h}
      - {name: evening, period: daily, starts: "18:30", duration: 3h}
      - {name: mid, period: monthly, starts: "15 12:00", duration: 2d}
      - {name: morning, period: daily, duration: 6h}
      - {name: cup, cron: "0 18 * * 5"}
)"));
  const auto& p = c.boards.at(0).periods;
  ASSERT_EQ(p.size(), 6U);
  EXPECT_EQ(p[0].kind, PeriodKind::weekly);
  EXPECT_EQ(p[0].name, "weekend");
  ASSERT_TRUE(p[0].window);
  EXPECT_EQ(p[0].window->offset, Millis{hours{24 * 5}});
  EXPECT_EQ(p[0].window->length, Millis{hours{48}});
  EXPECT_EQ(p[1].kind, PeriodKind::custom);
  ASSERT_TRUE(p[1].window);
  EXPECT_EQ(p[1].window->offset, Millis{0});
  EXPECT_EQ(p[1].window->length, Millis{hours{1}});
  EXPECT_EQ(p[2].window->offset, Millis{hours{18}} + Millis{minutes{30}});
  EXPECT_EQ(p[3].window->offset, Millis{hours{24 * 14 + 12}});
  EXPECT_EQ(p[4].window->offset, Millis{0});
  EXPECT_FALSE(p[5].window);
}

TEST(ConfigWindows, MistakesAreNamedWhereTheyAre) {
  const auto p = problems_of(board_with(R"(      - {name: a, period: hourly, duration: 10m}
      - {name: b, period: weekly, starts: "sun 00:00"}
      - {name: c, period: daily, starts: "25:00", duration: 1h}
      - {name: d, period: weekly, starts: "sat", duration: 1h}
      - {name: e, period: daily, duration: 25h}
      - {name: f, cron: "0 18 * * *", starts: "18:00", duration: 1h}
      - {name: g, cron: "0 18 * * *", period: daily, duration: 1h}
      - {name: h, cron: "0 18 * * *", duration: 0s}
      - {name: i, period: monthly, starts: "30 00:00", duration: 1d}
      - {name: j, period: weekly, starts: "sat 00:00", duration: 8d}
      - {name: k, cron: "0 18 * * *", duration: soon}
)"));
  EXPECT_TRUE(
      HasProblem(p, 4, 27, "a window's period must be daily, weekly or monthly, not 'hourly'"));
  EXPECT_TRUE(HasProblem(p, 5, 9, "a window of a weekly period needs 'duration'"));
  EXPECT_TRUE(
      HasProblem(p, 6, 42, "starts '25:00' is not a start in a daily period; write \"HH:MM\""));
  EXPECT_TRUE(HasProblem(p, 7, 43, "write \"DAY HH:MM\""));
  EXPECT_TRUE(HasProblem(p, 8, 44, "duration 25h is longer than the shortest daily period (1d)"));
  EXPECT_TRUE(HasProblem(p, 9, 47, "'starts' is for a window of a fixed period"));
  EXPECT_TRUE(HasProblem(p, 10, 47, "either 'cron' or 'period', not both"));
  EXPECT_TRUE(HasProblem(p, 11, 49, "a window's duration must be above 0"));
  EXPECT_TRUE(HasProblem(p, 12, 44, "write \"D HH:MM\" (e.g. \"15 00:00\"; day 1 to 28)"));
  EXPECT_TRUE(HasProblem(p, 13, 66, "duration 8d is longer than the shortest weekly period (1w)"));
  EXPECT_TRUE(HasProblem(p, 14, 49, "duration 'soon' is not a duration"));
  EXPECT_EQ(p.size(), 11U);
}

TEST(ConfigWindows, AWindowNameFollowsTheCustomPeriodRules) {
  const auto p = problems_of(
      board_with("      - {name: weekly, period: weekly, starts: \"sat 00:00\", duration: 48h}\n"));
  EXPECT_TRUE(HasProblem(p, 4, 16, "custom period name 'weekly' is a built-in period"));
}

}  // namespace
}  // namespace bk
