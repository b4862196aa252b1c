// One answer everywhere: `top`, `rank` and `around` in the CLI answer an archived period from
// history exactly as the HTTP API does, a period that has not begun is the same error in both
// (exit 1 / 404), and a member's metadata is the same text whether it comes from Redis, from
// the cold tier or from history.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness.h"
#include "served.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;
using test::Served;

const char* kBoards = R"(  - name: pts
    periods: [daily]
    max_points: 1000000
    hot_keep: 3
    display: 3
    retention: {default: 30d}
)";

constexpr const char* kDay = "2026-11-19T12:00:00Z";
constexpr const char* kNextDay = "2026-11-20T01:00:00Z";  // 2026-11-19 is archived by then

// What a member's metadata is sent as (spaces, keys out of order) and the one text every read
// returns for it.
std::string sent_meta(int i) {
  return R"({"team": "green", "level": )" + std::to_string(i) +
         R"(, "x": [1.5, {"b": 0, "a": -0.0}]})";
}
std::string compact_meta(int i) {
  return R"({"level":)" + std::to_string(i) + R"(,"team":"green","x":[1.5,{"a":0.0,"b":0}]})";
}

class OneAnswerTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  std::string log = "/tmp/" + prefix + "-serve.log";

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  test::RunResult cli(std::vector<std::string> args, const std::string& now) {
    args.insert(args.begin(), {"--config", config_path, "--now", now});
    return test::run_cli(args);
  }
  // a0..a7 with 80, 70, ... points and a metadata object each; a tick spills a3..a7 (their
  // profiles move to PostgreSQL).
  void fill() {
    for (int i = 0; i < 8; ++i) {
      const test::RunResult r = cli({"add", "pts", "a" + std::to_string(i),
                                     std::to_string(80 - 10 * i), "--meta", sent_meta(i)},
                                    kDay);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ASSERT_EQ(cli({"tick"}, kDay).exit_code, 0);
  }
};

TEST_F(OneAnswerTest, MetadataIsTheSameTextFromRedisTheColdTierAndHistory) {
  fill();
  const auto expect_text = [&](const std::string& text, int i, const std::string& where) {
    EXPECT_NE(text.find(R"("metadata":)" + compact_meta(i)), std::string::npos)
        << where << ": " << text;
  };
  {
    Served s(config_path, log, kDay);
    for (const int i : {0, 5}) {  // hot (Redis), spilled (PostgreSQL's profiles)
      const std::string m = "a" + std::to_string(i);
      expect_text(s.get("/v1/boards/pts/daily/members/" + m).text, i, "HTTP " + m);
      expect_text(cli({"rank", "pts", "daily", m, "--json"}, kDay).out, i, "CLI " + m);
    }
  }
  ASSERT_EQ(cli({"tick"}, kNextDay).exit_code, 0);  // archives 2026-11-19
  Served s(config_path, log + "2", kNextDay);
  for (const int i : {0, 5}) {
    const std::string m = "a" + std::to_string(i);
    expect_text(s.get("/v1/boards/pts/daily/members/" + m + "?period_id=2026-11-19").text, i,
                "HTTP archived " + m);
    expect_text(cli({"history", "pts", "daily", "2026-11-19", "--json"}, kNextDay).out, i,
                "history");
  }
}

TEST_F(OneAnswerTest, TheCliAnswersAnArchivedPeriodAsHttpDoes) {
  fill();
  ASSERT_EQ(cli({"tick"}, kNextDay).exit_code, 0);  // archives 2026-11-19
  Served s(config_path, log, kNextDay);
  const std::string base = "/v1/boards/pts/daily";
  const std::string q = "?period_id=2026-11-19";
  const std::vector<std::string> id{"--period-id", "2026-11-19", "--json"};
  const auto cli_records = [&](std::vector<std::string> args) {
    args.insert(args.end(), id.begin(), id.end());
    const test::RunResult r = cli(args, kNextDay);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json out = json::array();
    for (const json& line : test::json_lines(r)) out.push_back(test::record_of(line));
    return out;
  };
  const Answer top = s.get(base + "/top" + q + "&limit=100");
  ASSERT_EQ(top.status, 200) << top.text;
  ASSERT_EQ(top.body["records"].size(), 8U);
  EXPECT_EQ(cli_records({"top", "pts", "daily", "-n", "100"}), top.body["records"]);
  EXPECT_EQ(
      cli_records({"top", "pts", "daily", "-n", "3", "--offset", "2"}),
      json(std::vector<json>(top.body["records"].begin() + 2, top.body["records"].begin() + 5)));
  EXPECT_EQ(cli_records({"rank", "pts", "daily", "a5"}).at(0),
            s.get(base + "/members/a5" + q).body);
  EXPECT_EQ(cli_records({"around", "pts", "daily", "a4", "-k", "2"}),
            s.get(base + "/members/a4/around" + q + "&k=2").body["records"]);
  // A member not on the archived period: exit 1 / 404.
  const test::RunResult r =
      cli({"rank", "pts", "daily", "nobody", "--period-id", "2026-11-19"}, kNextDay);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("is not on pts daily 2026-11-19"), std::string::npos) << r.err;
  EXPECT_EQ(s.get(base + "/members/nobody" + q).status, 404);
}

TEST_F(OneAnswerTest, APeriodThatHasNotBegunIsTheSameErrorInTheCliAndOverHttp) {
  fill();
  Served s(config_path, log, kDay);
  const Answer a = s.get("/v1/boards/pts/daily/top?period_id=2026-11-25");
  ASSERT_EQ(a.status, 404) << a.text;
  const std::string message = a.body["error"];
  EXPECT_NE(message.find("has not begun"), std::string::npos) << message;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"top", "pts", "daily"},
        std::vector<std::string>{"rank", "pts", "daily", "a0"},
        std::vector<std::string>{"around", "pts", "daily", "a0"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--period-id", "2026-11-25"});
    const test::RunResult r = cli(full, kDay);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.out;
    EXPECT_NE(r.err.find(message), std::string::npos) << args[0] << ": " << r.err;
  }
  // A malformed period id stays a usage error (exit 2 / 400).
  EXPECT_EQ(cli({"top", "pts", "daily", "--period-id", "2026-11-32"}, kDay).exit_code, 2);
  EXPECT_EQ(s.get("/v1/boards/pts/daily/top?period_id=2026-11-32").status, 400);
}

}  // namespace
}  // namespace bk
