// Windowed periods end to end (real Redis and PostgreSQL, the CLI with --now): events
// inside a window apply, events between windows are refused naming the next window's start,
// reads between windows answer the last one ("closed", then "archived"), and tick closes
// and archives a window at its end, not at its cycle's (also across midnight and across a
// DST change).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <string>
#include <vector>

#include "harness.h"
#include "served.h"

namespace bk {
namespace {

using json = nlohmann::json;

const char* kBoards = R"(  - name: hh
    periods: [{name: happy_hour, cron: "0 18 * * *", duration: 1h}]
    timezone: Europe/Berlin
    max_points: 1000
    retention: {default: 1000d}
  - name: wk
    periods: [{name: weekend, period: weekly, starts: "sat 00:00", duration: 48h}]
    timezone: Europe/Berlin
    max_points: 1000
    retention: {default: 1000d}
  - name: late
    periods: [{name: night, period: daily, starts: "22:00", duration: 4h}]
    timezone: Europe/Berlin
    max_points: 1000
    retention: {default: 1000d}
)";

// psql's answer without its line end.
std::string one_line(const std::string& sql) {
  std::string row = test::psql(sql);
  while (!row.empty() && std::isspace(static_cast<unsigned char>(row.back()))) row.pop_back();
  return row;
}

class WindowsTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  int serves = 0;

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  test::RunResult cli(const std::string& now, std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path, "--now", now});
    return test::run_cli(args);
  }
  // `add` at `at` (also the clock): its exit code, and its stderr on a refusal.
  test::RunResult add(const std::string& board, const std::string& member, int value,
                      const std::string& at) {
    return cli(at, {"add", board, member, std::to_string(value), "--at", at});
  }
  // The current (or last) window's top page from serve running at `now`.
  json top(const std::string& now, const std::string& board, const std::string& period) {
    const std::string log = "/tmp/" + prefix + "-serve" + std::to_string(++serves) + ".log";
    test::Served s(config_path, log, now);
    const test::Answer a = s.get("/v1/boards/" + board + "/" + period + "/top");
    EXPECT_EQ(a.status, 200) << a.text;
    return a.body;
  }
  // The close notice of one window: its members and whether tick published it.
  std::string notice(const std::string& board, const std::string& period, const std::string& id) {
    return one_line(
        "SELECT members || CASE WHEN published_at IS NULL THEN ' pending' ELSE ' published' END"
        " FROM " +
        prefix + ".period_closes WHERE board = '" + board + "' AND period = '" + period +
        "' AND period_id = '" + id + "'");
  }
  // The periods table's row of one window: status and end, or "" when there is none.
  std::string closed(const std::string& board, const std::string& period, const std::string& id) {
    return one_line(
        "SELECT status || ' ' || to_char(period_end AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD HH24:MI') FROM " +
        prefix + ".periods WHERE board = '" + board + "' AND period = '" + period +
        "' AND period_id = '" + id + "'");
  }
};

TEST_F(WindowsTest, EventsInsideApplyAndBetweenWindowsAreRefusedNamingTheNextStart) {
  EXPECT_EQ(add("hh", "alice", 5, "2026-11-20T18:30:00+01:00").exit_code, 0);
  EXPECT_EQ(add("hh", "alice", 2, "2026-11-20T18:59:59.999+01:00").exit_code, 0);
  for (const char* outside : {"2026-11-20T12:00:00+01:00", "2026-11-20T19:00:00+01:00"}) {
    const auto r = add("hh", "bob", 3, outside);
    EXPECT_EQ(r.exit_code, 1) << outside << ": " << r.out;
    const std::string next = std::string(outside).substr(11, 2) == "12"
                                 ? "2026-11-20T17:00:00.000Z"
                                 : "2026-11-21T17:00:00.000Z";
    EXPECT_NE(r.err.find("the next window starts at " + next), std::string::npos) << r.err;
  }
  const json t = top("2026-11-20T18:45:00+01:00", "hh", "happy_hour");
  EXPECT_EQ(t["period_id"], "2026-11-20T18:00");
  EXPECT_EQ(t["state"], "open");
  ASSERT_EQ(t["records"].size(), 1U) << t.dump();
  EXPECT_EQ(t["records"][0]["points"], 7);
}

TEST_F(WindowsTest, BetweenWindowsReadsAnswerTheLastOneAndTickArchivesItAtItsEnd) {
  ASSERT_EQ(add("hh", "alice", 5, "2026-11-20T18:30:00+01:00").exit_code, 0);
  ASSERT_EQ(add("hh", "bob", 3, "2026-11-20T18:40:00+01:00").exit_code, 0);
  json t = top("2026-11-20T21:00:00+01:00", "hh", "happy_hour");
  EXPECT_EQ(t["period_id"], "2026-11-20T18:00");
  EXPECT_EQ(t["period_end"], "2026-11-20T18:00:00.000Z");
  EXPECT_EQ(t["state"], "closed");
  EXPECT_EQ(t["records"].size(), 2U);
  // Within archive.grace (10m) of the window's end: still live.
  ASSERT_EQ(cli("2026-11-20T19:09:00+01:00", {"tick"}).exit_code, 0);
  EXPECT_EQ(closed("hh", "happy_hour", "2026-11-20T18:00"), "");
  ASSERT_EQ(cli("2026-11-20T19:11:00+01:00", {"tick"}).exit_code, 0);
  EXPECT_EQ(closed("hh", "happy_hour", "2026-11-20T18:00"), "archived 2026-11-20 18:00");
  // Its close notice went out with the archive, at the window's end.
  EXPECT_EQ(notice("hh", "happy_hour", "2026-11-20T18:00"), "2 published");
  t = top("2026-11-21T12:00:00+01:00", "hh", "happy_hour");
  EXPECT_EQ(t["period_id"], "2026-11-20T18:00");
  EXPECT_EQ(t["state"], "archived");
  EXPECT_EQ(t["records"].size(), 2U);
}

TEST_F(WindowsTest, AWeekendAcrossTheFallBackClosesAtItsEnd) {
  // Saturday 2026-10-24 00:00 CEST to Monday 2026-10-26 00:00 CET: 49 hours.
  ASSERT_EQ(add("wk", "alice", 5, "2026-10-25T12:00:00Z").exit_code, 0);
  const auto monday = add("wk", "bob", 1, "2026-10-26T00:30:00+01:00");
  EXPECT_EQ(monday.exit_code, 1);
  EXPECT_NE(monday.err.find("next window starts at 2026-10-30T23:00:00.000Z"), std::string::npos)
      << monday.err;
  ASSERT_EQ(cli("2026-10-26T00:05:00+01:00", {"tick"}).exit_code, 0);
  EXPECT_EQ(closed("wk", "weekend", "2026-W43"), "");
  ASSERT_EQ(cli("2026-10-26T00:11:00+01:00", {"tick"}).exit_code, 0);
  EXPECT_EQ(closed("wk", "weekend", "2026-W43"), "archived 2026-10-25 23:00");
  EXPECT_EQ(notice("wk", "weekend", "2026-W43"), "1 published");
}

TEST_F(WindowsTest, AWindowAcrossMidnightBelongsToTheDayItStarted) {
  ASSERT_EQ(add("late", "alice", 4, "2026-11-20T23:30:00+01:00").exit_code, 0);
  ASSERT_EQ(add("late", "alice", 6, "2026-11-21T01:30:00+01:00").exit_code, 0);
  EXPECT_EQ(add("late", "alice", 1, "2026-11-21T02:00:00+01:00").exit_code, 1);
  const json t = top("2026-11-21T01:45:00+01:00", "late", "night");
  EXPECT_EQ(t["period_id"], "2026-11-20");
  EXPECT_EQ(t["period_start"], "2026-11-20T21:00:00.000Z");
  EXPECT_EQ(t["period_end"], "2026-11-21T01:00:00.000Z");
  ASSERT_EQ(t["records"].size(), 1U);
  EXPECT_EQ(t["records"][0]["points"], 10);
}

}  // namespace
}  // namespace bk
