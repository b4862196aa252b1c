// The real binary: commands, output forms and the exit codes of the contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "harness.h"
#include "hot/keys.h"

namespace bk {
namespace {

using test::run_cli;

const char* kBoards = R"(  - name: "game:*"
    periods: [daily, weekly]
    timezone: Asia/Shanghai
    max_points: 1000
    retention: {daily: 3650d, weekly: 3660d}
)";

class CliTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config = test::write_config(prefix, kBoards);
  std::string now = "--now=2026-11-22T12:00:00+08:00";

  test::RunResult bk(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config, now});
    return run_cli(args);
  }
  // The first update of a board asks the cold tier which periods have rows (the safety net),
  // so the schema is migrated first, as in every deployment.
  void SetUp() override { ASSERT_EQ(bk({"migrate"}).exit_code, 0); }
};

TEST_F(CliTest, AddThenReadInTextAndJson) {
  auto r = bk({"add", "game:1", "ann", "30", "--at", "2026-11-22T10:00:00+08:00"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("daily 2026-11-22 = 30"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("weekly 2026-W47 = 30"), std::string::npos) << r.out;
  ASSERT_EQ(bk({"add", "game:1", "bob", "30", "--at", "2026-11-22T09:00:00+08:00"}).exit_code, 0);
  ASSERT_EQ(bk({"add", "game:1", "cy", "-5"}).exit_code, 1);  // below min_points 0

  r = bk({"top", "game:1", "daily", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "{\"board\":\"game:1\",\"period\":\"daily\",\"period_id\":\"2026-11-22\","
      "\"period_start\":\"2026-11-21T16:00:00.000Z\",\"period_end\":\"2026-11-22T16:00:00.000Z\","
      "\"rank\":1,\"member\":\"bob\",\"points\":30,\"achieved_at\":\"2026-11-22T01:00:00.000Z\"}\n"
      "{\"board\":\"game:1\",\"period\":\"daily\",\"period_id\":\"2026-11-22\","
      "\"period_start\":\"2026-11-21T16:00:00.000Z\",\"period_end\":\"2026-11-22T16:00:00.000Z\","
      "\"rank\":2,\"member\":\"ann\",\"points\":30,\"achieved_at\":\"2026-11-22T02:00:00.000Z\"}"
      "\n");
  r = bk({"rank", "game:1", "weekly", "ann"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("game:1 weekly 2026-W47"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("     2  ann"), std::string::npos) << r.out;
  r = bk({"around", "game:1", "daily", "bob", "-k", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
  // A past period nobody scored in: nothing to read (as HTTP's 404).
  r = bk({"top", "game:1", "daily", "--period-id", "2026-11-21"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("has nothing to read"), std::string::npos) << r.err;
  r = bk({"periods", "game:1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"period\":\"daily\",\"period_id\":\"2026-11-22\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"members\":2,\"hot_members\":2,\"cold_members\":0,\"live\":1"),
            std::string::npos)
      << r.out;
}

TEST_F(CliTest, ExitCodesOfTheContract) {
  // 1: a refused update (closed period: the day ended 2026-11-21T16:00Z, grace 10m).
  auto r = bk({"add", "game:1", "ann", "1", "--at", "2026-11-21T23:00:00+08:00"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("closed for writes"), std::string::npos) << r.err;
  r = bk({"add", "game:1", "ann", "1001"});  // beyond max_points
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("outside [0, 1000]"), std::string::npos) << r.err;
  r = bk({"rank", "game:1", "daily", "nobody"});
  EXPECT_EQ(r.exit_code, 1);
  // A repeated event id is not an error: it was applied once.
  EXPECT_EQ(bk({"add", "game:1", "ann", "1", "--id", "x1"}).exit_code, 0);
  r = bk({"add", "game:1", "ann", "1", "--id", "x1"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("not applied again"), std::string::npos) << r.out;
  EXPECT_EQ(bk({"rank", "game:1", "daily", "ann", "--json"}).out.find("\"points\":1,") !=
                std::string::npos,
            true);

  // 2: usage and configuration errors.
  EXPECT_EQ(bk({"add", "game:1", "ann", "ten"}).exit_code, 2);
  EXPECT_EQ(bk({"add", "chess", "ann", "1"}).exit_code, 2);  // no board entry matches
  EXPECT_EQ(bk({"top", "game:1", "monthly"}).exit_code, 2);  // not a period of the board
  EXPECT_EQ(bk({"top", "game:1", "daily", "--period-id", "2026-13-01"}).exit_code, 2);
  EXPECT_EQ(bk({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_cli({"--config", "/nonexistent.yaml", "check-config"}).exit_code, 2);
  const std::string bad = "/tmp/bk-bad-" + prefix + ".yaml";
  std::ofstream(bad)
      << "redis:\n  url: redis://127.0.0.1:1/0\nboards:\n  - name: x\n    periods: [daily]\n    "
         "max_points: 10\n    retention: {default: 1d}\n    colour: blue\n";
  r = run_cli({"--config", bad, "check-config"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(bad + ":8:5"), std::string::npos) << r.err;

  // Reads are bounded: a huge -n, --offset or -k is a usage error naming the flag.
  ASSERT_EQ(bk({"add", "game:1", "bea", "3"}).exit_code, 0);
  r = bk({"top", "game:1", "daily", "-n", "9223372036854775807"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-n 9223372036854775807 is outside [1, 100000]"), std::string::npos)
      << r.err;
  r = bk({"top", "game:1", "daily", "--offset", "9223372036854775800"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--offset 9223372036854775800 is outside [0, 1000000000000]"),
            std::string::npos)
      << r.err;
  r = bk({"around", "game:1", "daily", "bea", "-k", "9223372036854775807"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-k 9223372036854775807 is outside [0, 50000]"), std::string::npos) << r.err;
  EXPECT_EQ(bk({"history", "game:1", "daily", "2026-11-21", "-n", "0"}).exit_code, 2);
  r = bk({"top", "game:1", "daily", "-n", "100000", "--offset", "1000000000000"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(no members)"), std::string::npos) << r.out;

  // 3: Redis unreachable (port 1 on loopback refuses), through the env override too.
  r = run_cli({"--config", config, "top", "game:1", "daily"},
              {"BOARDKEEPER_REDIS_URL=redis://:s3cret@127.0.0.1:1/0"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.find("s3cret"), std::string::npos) << "password leaked: " << r.err;
}

// What an operator scripts against: options after the command, --help and --version, and
// fatal errors as JSON when logs or output are JSON.
TEST_F(CliTest, OptionsAfterTheCommandHelpVersionAndJsonErrors) {
  auto r = run_cli({"check-config", "--config", config});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_cli({"top", "game:1", "daily", "--config", config, now, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  r = run_cli({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* text :
       {"Exit codes: 0 done; 1 failed", "3 Redis or PostgreSQL unreachable", "BOARDKEEPER_CONFIG",
        "BOARDKEEPER_REDIS_URL", "BOARDKEEPER_POSTGRES_URL", "BOARDKEEPER_SERVE_TOKENS"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  r = run_cli({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("boardkeeper 0.", 0), 0U) << r.out;
  EXPECT_NE(r.out.find("(revision "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" build, GNU "), std::string::npos) << r.out;

  // A fatal error: one JSON log line with --log-format json, {"error", "exit_code"} with
  // --json, text otherwise; the exit code is the same.
  r = bk({"--log-format", "json", "top", "chess", "daily"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("{\"time\":\"", 0), 0U) << r.err;
  EXPECT_NE(r.err.find("\"level\":\"error\",\"msg\":\"boardkeeper: no board entry in "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("\"exit_code\":2}\n"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = bk({"top", "chess", "daily", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("{\"error\":\"no board entry in ", 0), 0U) << r.err;
  EXPECT_NE(r.err.find("\"exit_code\":2}"), std::string::npos) << r.err;
  r = bk({"--log-format", "json", "frobnicate"});  // the command line itself
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("{\"time\":\"", 0), 0U) << r.err;
  r = run_cli({"--config", config, "top", "game:1", "daily", "--json"},
              {"BOARDKEEPER_REDIS_URL=redis://:s3cret@127.0.0.1:1/0"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("{\"error\":", 0), 0U) << r.err;
  EXPECT_EQ(r.err.find("s3cret"), std::string::npos) << "password leaked: " << r.err;
  r = bk({"top", "chess", "daily"});
  EXPECT_EQ(r.err.rfind("boardkeeper: no board entry", 0), 0U) << r.err;
}

// Event ids are bounded like member ids, and event times lie in 1970-9999.
TEST_F(CliTest, OversizedEventIdsAndTimesOutsideTheCalendarAreRefused) {
  auto r = bk({"add", "game:1", "ann", "1", "--id", std::string(513, 'i')});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("event id is 513 bytes, more than 512"), std::string::npos) << r.err;
  EXPECT_EQ(bk({"add", "game:1", "ann", "1", "--id", std::string(512, 'i')}).exit_code, 0);
  r = bk({"add", "game:1", "ann", "1", "--at", "1969-12-31T23:59:59Z"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("event time -1000 ms since 1970 is outside 1970-01-01T00:00:00Z .. "
                       "9999-12-31T23:59:59.999Z (board 'game:1' member 'ann')"),
            std::string::npos)
      << r.err;
}

// A board whose key holds another type is that board's lasting error: `add` exits 1 with
// Redis's error and the board named (not 3, "retry later": retrying cannot help).
TEST_F(CliTest, AddToABoardWhoseKeyHasTheWrongTypeExitsOneNamingTheBoard) {
  redis::Connection conn = test::connect_redis();
  const std::string live = hot::BoardKeys(prefix, "game:7").live("daily", "2026-11-22");
  conn.command({"SET", live, "not a board"}).checked();
  const auto r = bk({"add", "game:7", "ann", "30", "--at", "2026-11-22T10:00:00+08:00"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("game:7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("WRONGTYPE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(live), std::string::npos) << r.err;  // the key the board keeps there
}

TEST_F(CliTest, CheckConfigReportsTheBudget) {
  const auto r = run_cli({"--config", config, "check-config"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OK"), std::string::npos);
  EXPECT_NE(r.out.find("of 53 bits"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace bk
