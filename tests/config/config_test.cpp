// The config loader: typed values with defaults, and every problem reported with the file,
// line and column of the node at fault. The board entries' own checks (durations and
// retention, points, periods and cron, which entry a board matches) are in
// config_boards_test.cpp; the sections beside the boards (ingest, serve, history, Redis) in
// config_sections_test.cpp.
#include "config/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "config_testing.h"
#include "core/redact.h"
#include "core/score_codec.h"

namespace bk {
namespace {

using namespace config_testing;  // NOLINT(google-build-using-namespace)

// Every key of a config, each set to a value other than its default.
const char* const kFullConfig = R"(redis:
  url: redis://:s3cret@redis.internal:6380/2
  key_prefix: app:lb
postgres:
  url: postgres://bk@db.internal/boards
  schema: lb_history
boards:
  - name: "game:*"
    periods: [hourly, weekly, {name: cup, cron: "0 18 * * 5"}]
    timezone: Europe/Berlin
    order: asc
    tie_break: latest
    update: best
    time_resolution: s
    min_points: -500
    max_points: 100000
    hot_keep: 200
    display: 200
    max_clock_skew: 90s
    dedupe_window: 2h
    archive:
      grace: 1h
    retention:
      default: 3d
      weekly: 2w
)";

// The periods of kFullConfig's board: a built-in kind, another, and a custom cron period.
void expect_full_periods(const BoardConfig& b) {
  ASSERT_EQ(b.periods.size(), 3U);
  EXPECT_EQ(b.periods[0].kind, PeriodKind::hourly);
  EXPECT_EQ(b.periods[0].name, "hourly");
  EXPECT_EQ(b.periods[0].cron, nullptr);
  EXPECT_EQ(b.periods[1].kind, PeriodKind::weekly);
  EXPECT_EQ(b.periods[2].kind, PeriodKind::custom);
  EXPECT_EQ(b.periods[2].name, "cup");
  ASSERT_NE(b.periods[2].cron, nullptr);
  EXPECT_EQ(b.periods[2].cron->text(), "0 18 * * 5");
}

TEST(ConfigTest, FullConfigParsesEveryKey) {
  const Config c = parse(kFullConfig);
  EXPECT_EQ(c.path, kFile);
  EXPECT_EQ(c.redis.url, "redis://:s3cret@redis.internal:6380/2");
  EXPECT_EQ(c.redis.key_prefix, "app:lb");
  EXPECT_EQ(c.postgres.url, "postgres://bk@db.internal/boards");
  EXPECT_EQ(c.postgres.schema, "lb_history");
  ASSERT_EQ(c.boards.size(), 1U);
  const BoardConfig& b = c.boards[0];
  EXPECT_EQ(b.pattern, "game:*");
  ASSERT_NO_FATAL_FAILURE(expect_full_periods(b));
  EXPECT_EQ(b.timezone, "Europe/Berlin");
  ASSERT_NE(b.zone, nullptr);
  EXPECT_EQ(b.zone->name(), "Europe/Berlin");
  EXPECT_EQ(b.order, Order::asc);
  EXPECT_EQ(b.tie, TieBreak::latest);
  EXPECT_EQ(b.policy, Policy::best);
  EXPECT_EQ(b.resolution, Millis{1000});
  EXPECT_EQ(b.min_points, -500);
  EXPECT_EQ(b.max_points, 100000);
  EXPECT_EQ(b.hot_keep, 200);
  EXPECT_EQ(b.display, 200);
  EXPECT_EQ(b.max_clock_skew, std::chrono::seconds{90});
  EXPECT_EQ(b.dedupe_window, hours{2});
  EXPECT_EQ(b.grace, hours{1});
  // `default` is applied to the periods without their own entry, and not kept as a key.
  const std::map<std::string, Millis> retention{
      {"hourly", hours{72}}, {"weekly", hours{24 * 14}}, {"cup", hours{72}}};
  EXPECT_EQ(b.retention, retention);
  EXPECT_EQ(b.where, "test.yaml:8:5");
}

TEST(ConfigTest, DefaultsApplyToOmittedKeys) {
  const Config c = parse(minimal());
  EXPECT_EQ(c.redis.url, "redis://127.0.0.1:6379/0");
  EXPECT_EQ(c.redis.key_prefix, "lb");
  EXPECT_EQ(c.postgres.url, "postgresql://boardkeeper@127.0.0.1:5432/boards");
  EXPECT_EQ(c.postgres.schema, "boardkeeper");
  ASSERT_EQ(c.boards.size(), 1U);
  const BoardConfig& b = c.boards[0];
  EXPECT_EQ(b.timezone, "UTC");
  ASSERT_NE(b.zone, nullptr);
  EXPECT_EQ(b.zone->name(), "UTC");
  EXPECT_EQ(b.order, Order::desc);
  EXPECT_EQ(b.tie, TieBreak::earliest);
  EXPECT_EQ(b.policy, Policy::increment);
  EXPECT_EQ(b.resolution, Millis{1});
  EXPECT_EQ(b.min_points, 0);
  EXPECT_EQ(b.max_points, 1000);
  EXPECT_EQ(b.hot_keep, 1000);
  EXPECT_EQ(b.display, 100);
  EXPECT_EQ(b.max_clock_skew, minutes{5});
  EXPECT_EQ(b.dedupe_window, hours{24});
  EXPECT_EQ(b.grace, minutes{10});
  EXPECT_EQ(b.retention_for(b.periods.at(0)), hours{48});
  EXPECT_EQ(c.ingest.streams, std::vector<std::string>{"lb:events"});
  EXPECT_EQ(c.ingest.group, "boardkeeper");
  EXPECT_EQ(c.ingest.reclaim_idle, std::chrono::seconds{30});
  EXPECT_TRUE(c.ingest.trim);
  EXPECT_EQ(c.ingest.dead_maxlen, 100000);
  EXPECT_EQ(c.ingest.max_wait, std::chrono::seconds{60});
}

TEST(ConfigTest, EmptySectionsMeanDefaults) {
  const Config c = parse("redis:\npostgres:\n" + minimal("    archive:\n"));
  EXPECT_EQ(c.redis.key_prefix, "lb");
  EXPECT_EQ(c.postgres.schema, "boardkeeper");
  EXPECT_EQ(c.boards.at(0).grace, minutes{10});
}

TEST(ConfigTest, UnknownTopLevelKey) {
  const auto p = problems_of(minimal() + "extra: 1\n");
  EXPECT_TRUE(HasProblem(p, 6, 1, "unknown key 'extra' at the top level"));
  EXPECT_TRUE(
      HasProblem(p, 6, 1, "known keys are: redis, postgres, ingest, serve, history, boards"));
}

TEST(ConfigTest, UnknownBoardKeySuggestsTheClosest) {
  const auto p = problems_of(minimal("    max_point: 5\n"));
  ASSERT_EQ(p.size(), 1U);
  EXPECT_TRUE(HasProblem(p, 6, 5, "unknown key 'max_point' in board entry; known keys are: "));
  EXPECT_TRUE(HasProblem(p, 6, 5, "did you mean 'max_points'?"));
}

TEST(ConfigTest, UnknownKeysInSections) {
  const auto p = problems_of("redis:\n  host: x\npostgres:\n  password: y\n" +
                             minimal("    archive: {grace: 1m, delay: 2m}\n"));
  EXPECT_TRUE(HasProblem(p, 2, 3, "unknown key 'host' in the redis section"));
  EXPECT_TRUE(HasProblem(p, 4, 3, "unknown key 'password' in the postgres section"));
  EXPECT_TRUE(HasProblem(p, 10, 26, "unknown key 'delay' in the archive section"));
}

TEST(ConfigTest, DuplicateKey) {
  const auto p = problems_of(minimal("    max_points: 2000\n"));
  EXPECT_TRUE(
      HasProblem(p, 6, 5, "duplicate key 'max_points' in board entry (first at test.yaml:4:5)"));
}

TEST(ConfigTest, MapWhereStringExpected) {
  const auto p = problems_of("redis:\n  url: {host: x}\n" + minimal());
  EXPECT_TRUE(HasProblem(p, 2, 8, "redis.url must be a string, not a map"));
}

TEST(ConfigTest, TextWhereIntegerExpected) {
  const auto p = problems_of(minimal("    hot_keep: abc\n    min_points: 1.5\n"));
  EXPECT_TRUE(HasProblem(p, 6, 15, "hot_keep must be a whole number (e.g. 1000000), not 'abc'"));
  EXPECT_TRUE(HasProblem(p, 7, 17, "min_points must be a whole number"));
}

TEST(ConfigTest, IntegerOutOfRange) {
  const auto p = problems_of(minimal("    min_points: -99999999999999999999\n"));
  EXPECT_TRUE(HasProblem(p, 6, 17, "outside the 64-bit integer range"));
}

TEST(ConfigTest, EmptyValueIsReportedAtItsKey) {
  const auto p = problems_of(minimal("    timezone:\n    order: desc\n"));
  EXPECT_TRUE(HasProblem(p, 6, 5, "timezone must be a string, not nothing"));
}

TEST(ConfigTest, BadEnumValues) {
  const auto p = problems_of(
      minimal("    order: up\n    tie_break: first\n    update: add\n    time_resolution: us\n"));
  EXPECT_TRUE(HasProblem(p, 6, 12, "order must be desc or asc, not the scalar 'up'"));
  EXPECT_TRUE(HasProblem(p, 7, 16, "tie_break must be earliest, latest or none"));
  EXPECT_TRUE(HasProblem(p, 8, 13, "update must be increment, best or replace"));
  EXPECT_TRUE(HasProblem(p, 9, 22, "time_resolution must be ms or s"));
}

TEST(ConfigTest, ListWhereMapExpected) {
  const auto p = problems_of("redis: [a]\n" + minimal());
  EXPECT_TRUE(HasProblem(p, 1, 8, "redis must be a map"));
}

TEST(ConfigTest, TopLevelMustBeAMap) {
  const auto p = problems_of("- a\n- b\n");
  EXPECT_TRUE(HasProblem(p, 1, 1, "the config must be a map"));
}

// --- durations, zones, retention --------------------------------------------------------

TEST(ConfigTest, BadKeyPrefix) {
  EXPECT_TRUE(HasProblem(problems_of("redis: {key_prefix: \"a{b}\"}\n" + minimal()), 1, 21,
                         "redis.key_prefix 'a{b}' must be non-empty and contain no '{', '}'"));
  EXPECT_TRUE(HasProblem(problems_of("redis: {key_prefix: \"a b\"}\n" + minimal()), 1, 21,
                         "redis.key_prefix"));
  EXPECT_TRUE(HasProblem(problems_of("redis: {key_prefix: \"\"}\n" + minimal()), 1, 21,
                         "must be non-empty"));
}

TEST(ConfigTest, BadSchema) {
  EXPECT_TRUE(HasProblem(problems_of("postgres: {schema: Board-Keeper}\n" + minimal()), 1, 20,
                         "postgres.schema 'Board-Keeper' must be a plain SQL identifier"));
  EXPECT_TRUE(HasProblem(problems_of("postgres: {schema: 1abc}\n" + minimal()), 1, 20,
                         "plain SQL identifier"));
  EXPECT_TRUE(
      HasProblem(problems_of("postgres: {schema: " + std::string(64, 'a') + "}\n" + minimal()), 1,
                 20, "at most 63 bytes"));
  EXPECT_EQ(parse("postgres: {schema: " + std::string(63, 'a') + "}\n" + minimal())
                .postgres.schema.size(),
            63U);
}

TEST(ConfigTest, BadUrlsAreReportedWithoutPasswords) {
  const auto p = problems_of(
      "redis: {url: \"http://u:hunter2@host\"}\n"
      "postgres: {url: \"mysql://u:hunter2@host/db\"}\n" +
      minimal());
  EXPECT_TRUE(HasProblem(p, 1, 14, "redis.url is not a Redis URL (it starts with 'http://')"));
  EXPECT_TRUE(
      HasProblem(p, 2, 17, "postgres.url is not a PostgreSQL URL (it starts with 'mysql://')"));
  for (const std::string& problem : p) {
    EXPECT_EQ(problem.find("hunter2"), std::string::npos) << problem;
    EXPECT_EQ(problem.find("@host"), std::string::npos) << "the URL is echoed: " << problem;
  }
}

TEST(ConfigTest, MistypedSchemesAreNamedWithoutTheRestOfTheUrl) {
  const auto p = problems_of(
      "redis: {url: \"redis:/u:Sx9pw@h:1/0\"}\n"
      "postgres: {url: \"u:Sx8pw@h/db\"}\n" +
      minimal());
  EXPECT_TRUE(HasProblem(p, 1, 14, "redis.url is not a Redis URL (it starts with 'redis:/')"));
  EXPECT_TRUE(HasProblem(p, 2, 17, "postgres.url is not a PostgreSQL URL (it starts with 'u:')"));
  EXPECT_TRUE(HasProblem(problems_of("redis: {url: \"pw@h\"}\n" + minimal()), 1, 14,
                         "redis.url is not a Redis URL (it has no scheme)"));
  for (const std::string& problem : p) EXPECT_EQ(problem.find("Sx"), std::string::npos) << problem;
}

TEST(ConfigTest, AcceptedUrlSchemes) {
  EXPECT_EQ(parse("redis: {url: \"unix:///run/redis.sock?db=1\"}\n" + minimal()).redis.url,
            "unix:///run/redis.sock?db=1");
  EXPECT_EQ(parse("postgres: {url: \"postgresql://h/db\"}\n" + minimal()).postgres.url,
            "postgresql://h/db");
}

// --- overrides ------------------------------------------------------------------------

TEST(ConfigTest, OverridesReplaceUrls) {
  ConfigOverrides o;
  o.redis_url = "redis://:pw@cache:6379/3";
  o.postgres_url = "postgresql://app:pw@db/boards";
  const Config c = parse("redis: {url: \"redis://file:6379\"}\n" + minimal(), o);
  EXPECT_EQ(c.redis.url, "redis://:pw@cache:6379/3");
  EXPECT_EQ(c.postgres.url, "postgresql://app:pw@db/boards");
}

TEST(ConfigTest, OverriddenFileUrlMayBeAPlaceholder) {
  ConfigOverrides o;
  o.redis_url = "redis://cache";
  const Config c = parse("redis: {url: set-by-environment}\n" + minimal(), o);
  EXPECT_EQ(c.redis.url, "redis://cache");
  // Without the override the placeholder is an error.
  EXPECT_TRUE(HasProblem(problems_of("redis: {url: set-by-environment}\n" + minimal()), 1, 14,
                         "is not a Redis URL"));
}

TEST(ConfigTest, BadOverrideIsAnError) {
  ConfigOverrides o;
  o.postgres_url = "host=db password=secret";
  const auto p = problems_of(minimal(), o);
  ASSERT_EQ(p.size(), 1U);
  EXPECT_EQ(p[0].rfind("BOARDKEEPER_POSTGRES_URL is not a PostgreSQL URL (it has no scheme)", 0),
            0U)
      << p[0];
  EXPECT_EQ(p[0].find("secret"), std::string::npos) << p[0];
}

// --- board_for ------------------------------------------------------------------------

TEST(ConfigTest, CollectsEveryProblem) {
  try {
    parse("redis: {key_prefix: \"\"}\n" + minimal("    order: up\n    timezone: Nowhere\n"));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 3U);
    EXPECT_EQ(std::string(e.what()),
              e.problems()[0] + "\n" + e.problems()[1] + "\n" + e.problems()[2]);
    // In file order.
    EXPECT_EQ(e.problems()[0].rfind("test.yaml:1:", 0), 0U);
    EXPECT_EQ(e.problems()[1].rfind("test.yaml:7:", 0), 0U);
    EXPECT_EQ(e.problems()[2].rfind("test.yaml:8:", 0), 0U);
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
  }
}

TEST(ConfigTest, YamlSyntaxErrorHasAPosition) {
  const auto p = problems_of("boards:\n  - name: [points\n    periods: daily\n");
  ASSERT_EQ(p.size(), 1U);
  EXPECT_NE(p[0].find("YAML syntax error"), std::string::npos) << p[0];
  EXPECT_EQ(p[0].rfind("test.yaml:", 0), 0U) << p[0];
}

TEST(ConfigTest, YamlSyntaxErrorLineAndColumn) {
  const auto p = problems_of("boards:\n  - name: b\n   bad: [1\n");
  ASSERT_EQ(p.size(), 1U);
  EXPECT_EQ(p[0].rfind("test.yaml:3:", 0), 0U) << p[0];
}

TEST(ConfigTest, SecondDocumentIsAnError) {
  const auto p = problems_of(minimal() + "---\nboards: []\n");
  EXPECT_TRUE(HasProblem(p, 7, 1, "single YAML document"));
}

TEST(ConfigTest, UnreadableFileNamesPathAndReason) {
  const std::string path = "/nonexistent/dir/boardkeeper.yaml";
  try {
    load_config(path, {});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
}

TEST(ConfigTest, LoadConfigReadsAFileAndNamesItInProblems) {
  const std::string path = ::testing::TempDir() + "config_test_load.yaml";
  {
    std::ofstream out(path);
    out << minimal("    bogus: 1\n");
  }
  try {
    load_config(path, {});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":6:5: unknown key 'bogus'", 0), 0U) << e.what();
  }
  {
    std::ofstream out(path);
    out << minimal();
  }
  const Config c = load_config(path, {});
  EXPECT_EQ(c.path, path);
  EXPECT_EQ(c.boards.at(0).where, path + ":2:5");
  std::remove(path.c_str());
}

TEST(ConfigTest, ExampleFileLoads) {
  const std::string path = std::string(BK_SOURCE_DIR) + "/config/boardkeeper.yaml";
  Config c;
  ASSERT_NO_THROW(c = load_config(path, {})) << [&] {
    try {
      load_config(path, {});
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_EQ(c.redis.url, "redis://127.0.0.1:6379/0");
  EXPECT_EQ(c.redis.key_prefix, "lb");
  EXPECT_EQ(c.postgres.schema, "boardkeeper");
  EXPECT_EQ(c.ingest.streams, std::vector<std::string>{"lb:events"});
  EXPECT_EQ(c.ingest.group, "boardkeeper");
  EXPECT_EQ(c.ingest.reclaim_idle, std::chrono::seconds{30});
  EXPECT_TRUE(c.ingest.trim);
  EXPECT_EQ(c.ingest.dead_maxlen, 100000);
  ASSERT_GE(c.boards.size(), 1U);
  const BoardConfig& points = c.boards[0];
  EXPECT_EQ(points.pattern, "points");
  ASSERT_EQ(points.periods.size(), 3U);
  EXPECT_EQ(points.timezone, "Asia/Shanghai");
  EXPECT_EQ(points.max_points, 1000000);
  EXPECT_EQ(points.retention_for(*points.period("monthly")), hours{24 * 32});
  EXPECT_EQ(c.board_for("points"), &points);
  const BoardConfig* game = c.board_for("game:chess");
  ASSERT_NE(game, nullptr);
  ASSERT_NE(game->period("cup"), nullptr);
  EXPECT_EQ(game->period("cup")->kind, PeriodKind::custom);
}

}  // namespace
}  // namespace bk
