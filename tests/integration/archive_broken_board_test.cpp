// A tick with one broken board against real Redis and PostgreSQL: that board fails alone.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "archive_fixture.h"
#include "hot/keys.h"

namespace bk {
namespace {

using namespace archive_test;  // NOLINT(google-build-using-namespace): the suite's fixture

// A tick with one broken board: the board whose keys are of the wrong type (an operator's
// SET, a stray tool) fails alone, exit 1, named with Redis's error in the report (text and
// --json) and in the summary; the other boards' closed periods are archived and their open
// ones spilled (boards are visited by name: "broken" comes between them); the metrics file is
// written; the broken keys are left as they are (never recorded lost, never deleted).
const char* kThreeBoards = R"(  - name: alpha
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 3650d}
  - name: broken
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 3650d}
  - name: charlie
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 3650d}
)";

class TickWithABrokenBoardTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kThreeBoards);
  Config config = test::make_config(prefix, kThreeBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};
  std::string metrics_file = "/tmp/bk-tick-broken-" + prefix + ".prom";
  const hot::BoardKeys broken{prefix, "broken"};

  void SetUp() override { cold.migrate(); }
  void TearDown() override { std::remove(metrics_file.c_str()); }

  // Every board: 12 members on Jan 4 (closed by the tick's time: to archive) and 9 on
  // Jan 5 (open: 4 past hot_keep to spill).
  void fill() {
    for (const char* board : {"alpha", "charlie", "broken"}) {
      for (const auto& [day, n] :
           {std::pair{"2027-01-04T09:00:00Z", 12}, std::pair{"2027-01-05T09:00:00Z", 9}}) {
        Leaderboards lb(config, conn, Clock(at(day)), &cold);
        std::vector<Update> updates;
        for (int i = 0; i < n; ++i) {
          updates.push_back({board, "m" + std::to_string(i), 1 + i, at(day), ""});
        }
        for (const auto& r : lb.apply(updates)) ASSERT_EQ(r.status, UpdateStatus::applied);
      }
    }
  }

  test::RunResult tick(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path, "--now", "2027-01-05T12:00:00Z"});
    return test::run_cli(args);
  }

  // The value of an unlabelled sample in the metrics file (NaN when it is missing).
  double metric(const std::string& name) {
    std::istringstream lines(test::read_file(metrics_file));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
    }
    ADD_FAILURE() << name << " is not in " << metrics_file;
    return std::nan("");
  }

  // What a tick with `broken` broken must do, whichever of its keys is of the wrong type.
  void expect_only_the_broken_board_fails() {
    auto r = tick({"--log-format", "json", "tick", "--json", "--metrics-file", metrics_file});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    // The report (--json): the broken board's error line, naming it and Redis's reason.
    std::string error_line;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);) {
      if (line.find("\"board\":\"broken\"") != std::string::npos) {
        EXPECT_TRUE(error_line.empty()) << "more than one line for board broken:\n" << r.out;
        error_line = line;
      }
    }
    EXPECT_NE(error_line.find("\"error\":"), std::string::npos) << r.out;
    EXPECT_NE(error_line.find("WRONGTYPE"), std::string::npos) << r.out;
    // ... and the other boards' periods: Jan 4 archived, Jan 5 spilled.
    for (const char* board : {"alpha", "charlie"}) {
      const std::string b = std::string("{\"board\":\"") + board + "\"";
      EXPECT_NE(r.out.find(b + ",\"period\":\"daily\",\"period_id\":\"2027-01-04\""),
                std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find(b + ",\"period\":\"daily\",\"period_id\":\"2027-01-05\",\"hot_before\":"
                               "9,\"spilled\":4"),
                std::string::npos)
          << r.out;
    }
    // The summary line (JSON log on stderr).
    EXPECT_NE(r.err.find("\"boards\":3,\"boards_failed\":1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"archived\":2,\"rows_archived\":24"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\"exit_code\":1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("broken"), std::string::npos) << r.err;  // the error is logged
    // The pass's metrics file.
    EXPECT_EQ(metric("boardkeeper_tick_exit_code"), 1);
    EXPECT_EQ(metric("boardkeeper_tick_boards"), 3);
    EXPECT_EQ(metric("boardkeeper_tick_boards_failed"), 1);
    EXPECT_EQ(metric("boardkeeper_tick_redis_errors"), 1);
    EXPECT_EQ(metric("boardkeeper_tick_postgres_errors"), 0);
    EXPECT_EQ(metric("boardkeeper_tick_periods_archived"), 2);
    EXPECT_EQ(metric("boardkeeper_tick_members_spilled"), 8);
    // In PostgreSQL: the healthy boards' Jan 4 in history, 12 rows each; the broken board's
    // neither archived nor recorded lost.
    for (const char* board : {"alpha", "charlie"}) {
      EXPECT_EQ(archive.status({board, "daily", "2027-01-04"}), cold::PeriodStatus::archived)
          << board;
      EXPECT_EQ(archive.history({board, "daily", "2027-01-04"}, 100).size(), 12u) << board;
    }
    EXPECT_EQ(archive.status({"broken", "daily", "2027-01-04"}), cold::PeriodStatus::open);

    // Again, text report: the board is named FAILED with the error; nothing else to do.
    r = tick({"tick", "--metrics-file", metrics_file});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    const auto failed = r.out.find("broken  FAILED: ");
    ASSERT_NE(failed, std::string::npos) << r.out;
    EXPECT_NE(r.out.find("WRONGTYPE", failed), std::string::npos) << r.out;
    EXPECT_EQ(metric("boardkeeper_tick_boards_failed"), 1);
    EXPECT_EQ(metric("boardkeeper_tick_periods_archived"), 0);
    EXPECT_EQ(archive.status({"broken", "daily", "2027-01-04"}), cold::PeriodStatus::open);
  }
};

TEST_F(TickWithABrokenBoardTest, ARegistryOfTheWrongTypeFailsItsBoardAlone) {
  fill();
  conn.command({"DEL", broken.registry()}).checked();
  conn.command({"SET", broken.registry(), "not a registry"}).checked();
  expect_only_the_broken_board_fails();
  EXPECT_EQ(conn.command({"TYPE", broken.registry()}).checked().as_string(), "string");
}

TEST_F(TickWithABrokenBoardTest, AClosedPeriodOfTheWrongTypeFailsItsBoardAlone) {
  fill();
  const std::string live = broken.live("daily", "2027-01-04");
  conn.command({"DEL", live}).checked();
  conn.command({"SET", live, "not a board"}).checked();
  expect_only_the_broken_board_fails();
  EXPECT_EQ(conn.command({"TYPE", live}).checked().as_string(), "string");
  EXPECT_EQ(conn.command({"GET", live}).checked().as_string(), "not a board");
}

}  // namespace
}  // namespace bk
