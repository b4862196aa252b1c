// The config loader's checks of board entries: durations and retention, the points budget,
// sizes and names, periods and custom cron periods, and which entry a board name matches.
// Every problem is reported with the file, line and column of the node at fault.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "config_testing.h"

namespace bk {
namespace {

using namespace config_testing;  // NOLINT(google-build-using-namespace)

TEST(ConfigTest, BoardAccessors) {
  const Config c = parse(minimal("    time_resolution: s\n    tie_break: none\n"));
  const BoardConfig& b = c.boards.at(0);
  ASSERT_NE(b.period("daily"), nullptr);
  EXPECT_EQ(b.period("daily")->kind, PeriodKind::daily);
  EXPECT_EQ(b.period("weekly"), nullptr);
  const ScoreLayout l = b.layout_for(*b.period("daily"));
  EXPECT_EQ(l.min_points, 0);
  EXPECT_EQ(l.max_points, 1000);
  EXPECT_EQ(l.order, Order::desc);
  EXPECT_EQ(l.tie, TieBreak::none);
  EXPECT_EQ(l.resolution, Millis{1000});
  EXPECT_EQ(l.span_units, 0);
}

TEST(ConfigTest, LayoutUsesLongestPeriodAtResolution) {
  const Config c = parse(minimal());
  const BoardConfig& b = c.boards.at(0);
  const ScoreLayout l = b.layout_for(*b.period("daily"));
  // A day plus 3 hours of DST slack, in milliseconds.
  EXPECT_EQ(l.span_units, 27LL * 3600 * 1000);
}

// --- unknown keys and wrong types ---------------------------------------------------------

TEST(ConfigTest, BadDuration) {
  const auto p = problems_of(minimal("    max_clock_skew: 5 minutes\n"));
  EXPECT_TRUE(HasProblem(p, 6, 21, "max_clock_skew '5 minutes' is not a duration"));
  const auto w = problems_of(minimal("    dedupe_window: 500ms\n"));
  EXPECT_TRUE(HasProblem(w, 6, 20, "dedupe_window (500ms) must be at least 1s"));
  EXPECT_TRUE(HasProblem(p, 6, 21, "<n>ms, <n>s, <n>m, <n>h, <n>d or <n>w"));
}

TEST(ConfigTest, BadRetentionDuration) {
  const auto p = problems_of(
      "boards:\n  - name: b\n    periods: [daily]\n    max_points: 10\n"
      "    retention:\n      daily: 2 days\n");
  EXPECT_TRUE(HasProblem(p, 6, 14, "retention.daily '2 days' is not a duration"));
}

TEST(ConfigTest, UnknownTimeZone) {
  const auto p = problems_of(minimal("    timezone: Mars/Olympus\n"));
  EXPECT_TRUE(HasProblem(p, 6, 15, "unknown time zone 'Mars/Olympus'"));
}

TEST(ConfigTest, RetentionMustExceedGrace) {
  const auto p = problems_of(
      "boards:\n  - name: b\n    periods: [daily, weekly]\n    max_points: 10\n"
      "    archive: {grace: 2h}\n"
      "    retention:\n      daily: 1h\n      weekly: 2h\n");
  EXPECT_TRUE(HasProblem(p, 7, 14,
                         "retention.daily (1h) must be longer than archive.grace (2h): a hot "
                         "key must not expire before its period is archived"));
  EXPECT_TRUE(HasProblem(p, 8, 15, "retention.weekly (2h) must be longer than archive.grace"));
}

TEST(ConfigTest, DefaultRetentionMustExceedDefaultGrace) {
  const auto p = problems_of(
      "boards:\n  - name: b\n    periods: [daily, weekly]\n    max_points: 10\n"
      "    retention: {default: 10m}\n");
  ASSERT_EQ(p.size(), 1U);  // reported once, not once per period
  EXPECT_TRUE(
      HasProblem(p, 5, 26, "retention.default (10m) must be longer than archive.grace (10m)"));
}

TEST(ConfigTest, MissingRetention) {
  const auto p = problems_of(
      "boards:\n  - name: b\n    periods: [daily, monthly]\n    max_points: 10\n"
      "    retention:\n      daily: 2d\n");
  EXPECT_TRUE(HasProblem(p, 5, 5, "board 'b' has no retention for period 'monthly'"));
  EXPECT_TRUE(HasProblem(p, 5, 5, "'default: <duration>'"));
}

TEST(ConfigTest, MissingRetentionSection) {
  const auto p = problems_of("boards:\n  - name: b\n    periods: [daily]\n    max_points: 10\n");
  EXPECT_TRUE(HasProblem(p, 2, 5, "board 'b' has no retention for period 'daily'"));
}

TEST(ConfigTest, DefaultRetentionSuppliesMissingPeriods) {
  const Config c = parse(
      "boards:\n  - name: b\n    periods: [daily, monthly]\n    max_points: 10\n"
      "    retention: {default: 40d, daily: 2d}\n");
  const BoardConfig& b = c.boards.at(0);
  EXPECT_EQ(b.retention_for(*b.period("daily")), hours{48});
  EXPECT_EQ(b.retention_for(*b.period("monthly")), hours{24 * 40});
  EXPECT_EQ(b.retention.count("default"), 0U);
}

TEST(ConfigTest, RetentionForUnusedPeriod) {
  const auto p =
      problems_of(minimal().replace(minimal().find("{daily: 2d}"), 11, "{daily: 2d, weekly: 8d}"));
  EXPECT_TRUE(HasProblem(p, 5, 28, "retention.weekly names a period board 'points' does not use"));
}

// --- points, hot buffer, budget --------------------------------------------------------

TEST(ConfigTest, MaxPointsIsRequired) {
  const auto p =
      problems_of("boards:\n  - name: b\n    periods: [daily]\n    retention: {daily: 2d}\n");
  EXPECT_TRUE(HasProblem(p, 2, 5, "board 'b' has no 'max_points'"));
}

TEST(ConfigTest, MaxPointsBelowMinPoints) {
  const auto p = problems_of(minimal("    min_points: 5000\n"));
  EXPECT_TRUE(HasProblem(p, 4, 17, "max_points (1000) must be >= min_points (5000)"));
}

TEST(ConfigTest, NegativeMinPointsAllowed) {
  const Config c = parse(minimal("    min_points: -1000\n"));
  EXPECT_EQ(c.boards.at(0).min_points, -1000);
}

TEST(ConfigTest, BudgetOverflowIsRefusedAtMaxPoints) {
  const auto p = problems_of(
      "boards:\n  - name: big\n    periods: [monthly]\n"
      "    max_points: 1000000000000\n    retention: {default: 40d}\n");
  ASSERT_EQ(p.size(), 1U);
  EXPECT_TRUE(
      HasProblem(p, 4, 17, "board 'big' period 'monthly': points range [0, 1000000000000]"));
  EXPECT_TRUE(HasProblem(p, 4, 17, "more than the 53 a score holds exactly"));
  EXPECT_TRUE(HasProblem(p, 4, 17, "time_resolution: s"));
}

TEST(ConfigTest, ProductExampleFitsTheBudget) {
  // max_points 1,000,000 at ms resolution over a month (31d + 3h slack): 52 bits.
  const Config c = parse(
      "boards:\n  - name: points\n    periods: [daily, weekly, monthly]\n"
      "    max_points: 1000000\n    retention: {default: 40d}\n");
  const BoardConfig& b = c.boards.at(0);
  const ScoreLayout l = b.layout_for(*b.period("monthly"));
  EXPECT_EQ(l.span_units, (31LL * 24 + 3) * 3600 * 1000);
  EXPECT_EQ(bits_needed(l), 52);
}

TEST(ConfigTest, AlltimeAtMillisecondsNeedsSeconds) {
  const std::string yaml =
      "boards:\n  - name: all\n    periods: [alltime]\n    max_points: 1000000\n"
      "    retention: {alltime: 1d}\n";
  EXPECT_TRUE(HasProblem(problems_of(yaml), 4, 17, "period 'alltime'"));
  const Config c = parse(yaml + "    time_resolution: s\n");
  EXPECT_EQ(c.boards.at(0).resolution, Millis{1000});
}

TEST(ConfigTest, HotKeepBelowDisplay) {
  const auto p = problems_of(minimal("    hot_keep: 50\n    display: 100\n"));
  EXPECT_TRUE(HasProblem(p, 6, 15, "hot_keep (50) must be >= display (100)"));
}

TEST(ConfigTest, HotKeepBelowDefaultDisplay) {
  const auto p = problems_of(minimal("    hot_keep: 10\n"));
  EXPECT_TRUE(HasProblem(p, 6, 15, "hot_keep (10) must be >= display (100)"));
}

TEST(ConfigTest, SizesMustBePositive) {
  const auto p = problems_of(minimal("    hot_keep: 0\n    display: -1\n"));
  EXPECT_TRUE(HasProblem(p, 6, 15, "hot_keep must be at least 1"));
  EXPECT_TRUE(HasProblem(p, 7, 14, "display must be at least 1"));
}

// --- names and periods ----------------------------------------------------------------

TEST(ConfigTest, BadBoardName) {
  const auto p = problems_of(
      "boards:\n  - name: \"has space\"\n    periods: [daily]\n    max_points: 10\n"
      "    retention: {daily: 2d}\n");
  EXPECT_TRUE(HasProblem(p, 2, 11, "board name has the character ' '"));
}

TEST(ConfigTest, MissingRequiredBoardKeys) {
  const auto p = problems_of("boards:\n  - timezone: UTC\n");
  EXPECT_TRUE(HasProblem(p, 2, 5, "board entry has no 'name'"));
  EXPECT_TRUE(HasProblem(p, 2, 5, "has no 'periods'"));
  EXPECT_TRUE(HasProblem(p, 2, 5, "has no 'max_points'"));
}

TEST(ConfigTest, BoardsRequiredAndNonEmpty) {
  EXPECT_TRUE(HasProblem(problems_of("redis: {key_prefix: x}\n"), 1, 1, "no 'boards'"));
  EXPECT_TRUE(HasProblem(problems_of(""), 1, 1, "no 'boards'"));
  EXPECT_TRUE(HasProblem(problems_of("boards: []\n"), 1, 9, "boards is empty"));
  EXPECT_TRUE(HasProblem(problems_of("boards: {a: 1}\n"), 1, 9, "boards must be a list"));
}

TEST(ConfigTest, UnknownPeriod) {
  const auto p =
      problems_of(minimal().replace(minimal().find("[daily]"), 7, "[daily, fortnightly]"));
  EXPECT_TRUE(HasProblem(p, 3, 22, "unknown period 'fortnightly'; expected hourly, daily"));
}

TEST(ConfigTest, PeriodsMustBeANonEmptyList) {
  const std::string base = minimal();
  const std::size_t at = base.find("[daily]");
  EXPECT_TRUE(HasProblem(problems_of(std::string(base).replace(at, 7, "daily")), 3, 14,
                         "periods must be a list such as [daily, weekly]"));
  EXPECT_TRUE(
      HasProblem(problems_of(std::string(base).replace(at, 7, "[]")), 3, 14, "periods is empty"));
}

TEST(ConfigTest, DuplicatePeriod) {
  const auto p = problems_of(minimal().replace(minimal().find("[daily]"), 7, "[daily, daily]"));
  EXPECT_TRUE(HasProblem(p, 3, 22, "period 'daily' is listed twice (first at test.yaml:3:15)"));
}

TEST(ConfigTest, CustomPeriodNames) {
  const auto p = problems_of(R"(boards:
  - name: b
    periods:
      - {name: daily, cron: "0 0 * * *"}
      - {name: Cup!, cron: "0 0 * * *"}
      - {name: default, cron: "0 0 * * *"}
      - {cron: "0 0 * * *"}
      - {name: cup, cron: "0 0 * * *", every: 1}
      - {name: final, cron: "0 0 * * 1"}
      - {name: final, cron: "0 0 * * 2"}
    max_points: 10
    retention: {default: 2d}
)");
  EXPECT_TRUE(HasProblem(p, 4, 16, "custom period name 'daily' is a built-in period"));
  EXPECT_TRUE(HasProblem(p, 5, 16, "may only contain lower-case letters, digits, _ and -"));
  EXPECT_TRUE(HasProblem(p, 6, 16, "'default' is reserved"));
  EXPECT_TRUE(HasProblem(p, 7, 9, "custom period has no 'name'"));
  EXPECT_TRUE(HasProblem(p, 8, 40, "unknown key 'every' in a custom period"));
  EXPECT_TRUE(HasProblem(p, 10, 9, "period 'final' is listed twice (first at test.yaml:9:9)"));
}

// /v1/boards/{b}/bans/{m} is the admin API's: a period named bans would make
// /v1/boards/{b}/bans/top mean two things.
TEST(ConfigTest, ACustomPeriodNamedBansIsRefused) {
  const auto p = problems_of(R"(boards:
  - name: b
    periods:
      - {name: bans, cron: "0 0 * * *"}
    max_points: 10
    retention: {default: 2d}
)");
  EXPECT_TRUE(HasProblem(p, 4, 16, "custom period name 'bans' is reserved"));
}

TEST(ConfigTest, BadCronReportedAtTheCronValue) {
  const auto p = problems_of(R"(boards:
  - name: b
    periods: [daily, {name: cup, cron: "0 25 * * 5"}]
    max_points: 10
    retention: {default: 2d}
)");
  ASSERT_EQ(p.size(), 1U);
  EXPECT_TRUE(HasProblem(p, 3, 40, "bad cron expression"));
  EXPECT_TRUE(HasProblem(p, 3, 40, "0 25 * * 5"));
}

TEST(ConfigTest, CronThatNeverFiresIsRefused) {
  const auto p = problems_of(R"(boards:
  - name: b
    periods: [daily, {name: leap, cron: "0 0 31 2 *"}]
    max_points: 10
    retention: {default: 2d}
)");
  ASSERT_EQ(p.size(), 1U);
  EXPECT_TRUE(HasProblem(p, 3, 22, "cron '0 0 31 2 *' never fires")) << p[0];
}

TEST(ConfigTest, OtherPeriodsAreStillCheckedWhenOneIsBad) {
  const auto p = problems_of(R"(boards:
  - name: b
    periods: [daily, {name: cup, cron: "nonsense"}]
    max_points: 10
    retention: {daily: 5m}
)");
  ASSERT_EQ(p.size(), 2U);
  EXPECT_TRUE(HasProblem(p, 3, 40, "bad cron expression"));
  EXPECT_TRUE(HasProblem(p, 5, 24, "retention.daily (5m) must be longer than archive.grace (10m)"));
}

TEST(ConfigTest, CronMissing) {
  const auto p = problems_of(
      "boards:\n  - name: b\n    periods: [{name: cup}]\n    max_points: 10\n"
      "    retention: {default: 2d}\n");
  EXPECT_TRUE(HasProblem(p, 3, 15, "custom period has no 'cron'"));
}

TEST(ConfigTest, CustomPeriodLayoutUsesTheLongestGap) {
  const Config c = parse(R"(boards:
  - name: b
    periods: [{name: cup, cron: "0 18 * * 5"}]
    time_resolution: s
    max_points: 10
    retention: {cup: 8d}
)");
  const BoardConfig& b = c.boards.at(0);
  const ScoreLayout l = b.layout_for(*b.period("cup"));
  // A week between firings plus DST slack, in seconds.
  EXPECT_GE(l.span_units, 7LL * 24 * 3600);
  EXPECT_LE(l.span_units, (7LL * 24 + 4) * 3600);
}

// --- redis and postgres sections ------------------------------------------------------

TEST(ConfigTest, BoardForPicksTheFirstMatchingEntry) {
  const Config c = parse(R"(boards:
  - name: "game:chess"
    periods: [daily]
    max_points: 10
    retention: {daily: 2d}
  - name: "game:*"
    periods: [weekly]
    max_points: 10
    retention: {weekly: 8d}
  - name: "*"
    periods: [monthly]
    max_points: 10
    retention: {monthly: 32d}
)");
  ASSERT_EQ(c.boards.size(), 3U);
  EXPECT_EQ(c.board_for("game:chess"), &c.boards[0]);
  EXPECT_EQ(c.board_for("game:go"), &c.boards[1]);
  EXPECT_EQ(c.board_for("steps"), &c.boards[2]);
  EXPECT_EQ(c.boards[1].where, "test.yaml:6:5");
}

TEST(ConfigTest, BoardForReturnsNullWithoutMatch) {
  const Config c = parse(minimal());
  EXPECT_EQ(c.board_for("points"), &c.boards[0]);
  EXPECT_EQ(c.board_for("points2"), nullptr);
}

TEST(ConfigTest, EntriesThatCanNeverMatchAreErrors) {
  const auto p = problems_of(R"(boards:
  - name: "game:*"
    periods: [daily]
    max_points: 10
    retention: {daily: 2d}
  - name: "game:chess"
    periods: [daily]
    max_points: 10
    retention: {daily: 2d}
  - name: "game:*"
    periods: [daily]
    max_points: 10
    retention: {daily: 2d}
)");
  EXPECT_TRUE(HasProblem(
      p, 6, 5, "board 'game:chess' is never used: the earlier entry 'game:*' at test.yaml:2:5"));
  EXPECT_TRUE(HasProblem(p, 10, 5, "board 'game:*' is defined twice (first at test.yaml:2:5)"));
}

// 50,000 entries load (the check of each against the earlier ones is a map look-up and a
// match against the earlier globs, not a scan of every earlier entry: the quadratic check
// took 5 s for 20,000 and never finished 200,000), and a duplicate or a shadowed name among
// them is still found.
TEST(ConfigTest, ManyBoardEntriesLoadAndTheirConflictsAreStillFound) {
  std::string yaml = "boards:\n";
  const auto entry = [&](const std::string& name) {
    yaml +=
        "  - {name: \"" + name + "\", periods: [daily], max_points: 10, retention: {daily: 2d}}\n";
  };
  entry("team:*");
  for (int i = 0; i < 50000; ++i) entry("b" + std::to_string(i));
  const Config c = parse(yaml);
  EXPECT_EQ(c.boards.size(), 50001U);
  entry("b12345");    // line 50003
  entry("team:red");  // line 50004
  const auto p = problems_of(yaml);
  ASSERT_EQ(p.size(), 2U);
  EXPECT_TRUE(
      HasProblem(p, 50003, 5, "board 'b12345' is defined twice (first at test.yaml:12348:5)"));
  EXPECT_TRUE(
      HasProblem(p, 50004, 5, "board 'team:red' is never used: the earlier entry 'team:*'"));
}

// --- close notices ---------------------------------------------------------------------

TEST(ConfigTest, CloseNoticesDefaultToThePrefixStreamAndTenStandings) {
  const Config plain = parse(minimal());
  const BoardConfig& b = plain.boards.at(0);
  EXPECT_EQ(b.closes_stream, "");  // <key_prefix>:closes
  EXPECT_EQ(b.notice_top, 10);
  const Config configured =
      parse(minimal("    closes_stream: \"game:{rewards}\"\n    notice_top: 1000\n"));
  const BoardConfig& set = configured.boards.at(0);
  EXPECT_EQ(set.closes_stream, "game:{rewards}");
  EXPECT_EQ(set.notice_top, 1000);
}

TEST(ConfigTest, NoticeTopOutsideOneToAThousandAndAnEmptyStreamAreRefusedWhereWritten) {
  EXPECT_TRUE(HasProblem(problems_of(minimal("    notice_top: 0\n")), 6, 17,
                         "notice_top must be between 1 and 1000"));
  EXPECT_TRUE(HasProblem(problems_of(minimal("    notice_top: 1001\n")), 6, 17, "not 1001"));
  EXPECT_TRUE(HasProblem(problems_of(minimal("    notice_top: ten\n")), 6, 17, "notice_top"));
  EXPECT_TRUE(HasProblem(problems_of(minimal("    closes_stream: \"\"\n")), 6, 20,
                         "closes_stream must be a Redis key name"));
}

// --- whole files ----------------------------------------------------------------------

}  // namespace
}  // namespace bk
