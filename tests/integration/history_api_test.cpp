// Discovery: GET /v1/boards/{board}/{period}/history lists the archived period ids of a board
// and period, newest first, with their bounds, member counts and archive times, a page at a
// time; pruned (history.retention) and lost periods are not listed. `periods --archived`
// lists the same.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "harness.h"
#include "hot/keys.h"
#include "served.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;
using test::Served;

const char* kBoards = R"(  - name: pts
    periods: [daily, monthly]
    max_points: 1000000
    hot_keep: 3
    display: 3
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-10T01:00:00Z";

class HistoryApiTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  // Daily history is kept 3 days after a day ends: 2026-11-06 (ended 11-07) is removed now.
  std::string config_path = test::write_text_config(
      prefix, test::config_text(prefix, kBoards) + "history:\n  retention: {daily: 3d}\n");
  std::string log = "/tmp/" + prefix + "-serve.log";

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  test::RunResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path, "--now", kNow});
    return test::run_cli(args);
  }

  // Day 2026-11-0d gets d - 3 members. The hot key
  // of 11-05 vanishes before it is archived (recorded lost); ticks archive the rest and
  // remove 11-06's rows.
  void archive_days() {
    const Config config = parse_config(test::read_file(config_path), config_path, {});
    redis::Connection conn = test::connect_redis();
    cold::ColdStore cold(test::postgres_url(), prefix);
    for (int day = 5; day <= 9; ++day) {
      const Instant noon = *parse_rfc3339("2026-11-0" + std::to_string(day) + "T12:00:00Z");
      service::Leaderboards lb(config, conn, Clock(noon), &cold);
      for (int i = 0; i < day - 3; ++i) {
        ASSERT_EQ(
            lb.apply(service::Update{"pts", "p" + std::to_string(i), 10 + i, noon, ""}).status,
            service::UpdateStatus::applied);
      }
    }
    conn.command({"DEL", hot::BoardKeys(prefix, "pts").live("daily", "2026-11-05")}).checked();
    test::RunResult r = cli({"tick"});
    ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // a lost period fails its board's pass
    ASSERT_NE(r.out.find("daily 2026-11-05: LOST"), std::string::npos) << r.out;
    r = cli({"tick"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  // The CLI lists the same periods as `history` does, in text and as JSON lines.
  void expect_cli_lists_the_same(Served& s, const std::string& history) {
    test::RunResult r = cli({"periods", "pts", "--archived", "--period", "daily", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = test::json_lines(r);
    ASSERT_EQ(lines.size(), 3U) << r.out;
    const json all = s.get(history).body["periods"];
    for (std::size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i]["board"], "pts");
      EXPECT_EQ(lines[i]["period"], "daily");
      json without = lines[i];
      without.erase("board");
      without.erase("period");
      EXPECT_EQ(without, all[i]);
    }
    r = cli(
        {"periods", "pts", "--archived", "--period", "daily", "-n", "1", "--before", "2026-11-09"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2026-11-08"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("2026-11-07  "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--before 2026-11-08"), std::string::npos) << r.out;
    r = cli({"periods", "pts", "--archived"});  // every period kind of the board
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("pts monthly"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(none)"), std::string::npos) << r.out;
    EXPECT_EQ(cli({"periods", "pts", "--archived", "--period", "daily", "--before", "x"}).exit_code,
              2);
  }

  // Bad input: 400; unknown board or period: 404.
  static void expect_bad_requests_refused(Served& s, const std::string& history) {
    for (const std::string& bad : std::vector<std::string>{
             "?limit=0", "?limit=1001", "?limit=x", "?cursor=%%%", "?cursor=!!",
             "?cursor=bm90LWEtZGF5" /* "not-a-day" */, "?cursor=", "?offset=2"}) {
      const Answer a = s.get(history + bad);
      EXPECT_EQ(a.status, 400) << bad << " " << a.text;
      EXPECT_TRUE(a.body.contains("error")) << bad;
    }
    EXPECT_EQ(s.get("/v1/boards/nope/daily/history").status, 404);
    EXPECT_EQ(s.get("/v1/boards/pts/weekly/history").status, 404);
  }
};

TEST_F(HistoryApiTest, ArchivedPeriodsAreListedNewestFirstPageByPage) {
  archive_days();
  Served s(config_path, log, kNow);
  const std::string history = "/v1/boards/pts/daily/history";
  Answer a = s.get(history + "?limit=2");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["board"], "pts");
  EXPECT_EQ(a.body["period"], "daily");
  ASSERT_EQ(a.body["periods"].size(), 2U) << a.text;
  const json& newest = a.body["periods"][0];
  EXPECT_EQ(newest["period_id"], "2026-11-09");
  EXPECT_EQ(newest["period_start"], "2026-11-09T00:00:00.000Z");
  EXPECT_EQ(newest["period_end"], "2026-11-10T00:00:00.000Z");
  EXPECT_EQ(newest["members"], 6);
  EXPECT_TRUE(parse_rfc3339(newest["archived_at"].get<std::string>())) << a.text;
  EXPECT_EQ(a.body["periods"][1]["period_id"], "2026-11-08");
  EXPECT_EQ(a.body["periods"][1]["members"], 5);
  ASSERT_TRUE(a.body["next_cursor"].is_string()) << a.text;
  // The last page: 11-07; 11-06 was pruned and 11-05 lost, so neither is listed.
  a = s.get(history + "?limit=2&cursor=" + test::enc(a.body["next_cursor"].get<std::string>()));
  ASSERT_EQ(a.status, 200) << a.text;
  ASSERT_EQ(a.body["periods"].size(), 1U) << a.text;
  EXPECT_EQ(a.body["periods"][0]["period_id"], "2026-11-07");
  EXPECT_TRUE(a.body["next_cursor"].is_null()) << a.text;
  // The default page holds all three; a period kind with nothing archived lists nothing.
  a = s.get(history);
  EXPECT_EQ(a.body["periods"].size(), 3U) << a.text;
  EXPECT_TRUE(a.body["next_cursor"].is_null());
  a = s.get("/v1/boards/pts/monthly/history");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["periods"], json::array());
  // Every period listed is readable.
  for (const char* id : {"2026-11-09", "2026-11-08", "2026-11-07"}) {
    EXPECT_EQ(s.get(std::string("/v1/boards/pts/daily/top?period_id=") + id).body["state"],
              "archived")
        << id;
  }
  expect_bad_requests_refused(s, history);

  ASSERT_NO_FATAL_FAILURE(expect_cli_lists_the_same(s, history));
}

}  // namespace
}  // namespace bk
