// Reads degrade by what they need. With PostgreSQL unreachable, what Redis alone can answer
// (hot members' ranks, around and ids= within the hot part, top pages within it) is answered,
// each record saying which profile fields it could not fetch; what needs the cold tier is a
// 503 (exit 3 in the CLI). With Redis stopped, archived periods are answered from PostgreSQL.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "harness.h"
#include "served.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;
using test::Served;

const char* kBoards = R"(  - name: pts
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-20T12:00:00Z";
// Nothing listens on port 1 of the loopback: PostgreSQL down, as reads meet it.
constexpr const char* kNoPostgres = "postgresql://boardkeeper@127.0.0.1:1/boards";

std::string member(int i) {
  return std::string("m") + (i < 10 ? "0" : "") + std::to_string(i);
}

class DegradeTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  std::string no_pg_path =
      test::write_text_config(prefix + "-nopg", test::config_text(prefix, kBoards, kNoPostgres));
  std::string log = "/tmp/" + prefix + "-serve.log";

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  test::RunResult cli(const std::string& config, std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config, "--now", kNow});
    return test::run_cli(args);
  }

  // m00..m19 with 100..81 points, each with a name and a metadata object; a tick spills
  // m05..m19 (their profiles move to PostgreSQL); then m10 scores 1000 without a profile: it
  // is hot again, first, and its profile is in PostgreSQL only. `late` joins with 1 point:
  // hot, but listed after every cold member.
  void fill() {
    const Config config = test::make_config(prefix, kBoards);
    redis::Connection conn = test::connect_redis();
    cold::ColdStore cold(test::postgres_url(), prefix);
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kNow)), &cold);
    std::vector<service::Update> updates;
    for (int i = 0; i < 20; ++i) {
      service::Update u{"pts", member(i), 100 - i, *parse_rfc3339("2026-11-20T01:00:00Z"), ""};
      u.name = "Name " + std::to_string(i);
      u.meta = json{{"i", i}}.dump();
      updates.push_back(u);
    }
    for (const auto& r : lb.apply(updates))
      ASSERT_EQ(r.status, service::UpdateStatus::applied) << r.reason;
    ASSERT_EQ(cli(config_path, {"tick"}).exit_code, 0);
    ASSERT_EQ(lb.apply(service::Update{"pts", "m10", 1000, *parse_rfc3339(kNow), ""}).status,
              service::UpdateStatus::applied);
    ASSERT_EQ(lb.apply(service::Update{"pts", "late", 1, *parse_rfc3339(kNow), ""}).status,
              service::UpdateStatus::applied);
  }
};

// What needs the cold tier (`third`: the cursor of a page past the hot part): 503, with an
// error.
void expect_cold_reads_unavailable(Served& s, const std::string& base, const std::string& third) {
  for (const std::string& target :
       {base + "/top?limit=2&cursor=" + test::enc(third), base + "/members/m07",
        base + "/members/m04/around?k=1", base + "/members?ids=m00,m07", base + "/top?limit=7",
        base + "/members/late", base + "/members?ids=m00,late"}) {
    const Answer a = s.get(target);
    EXPECT_EQ(a.status, 503) << target << " " << a.text;
    EXPECT_TRUE(a.body.contains("error")) << target;
  }
}

// With PostgreSQL up the same records are whole, cold ones ranked.
void expect_whole_reads(Served& up, const std::string& base) {
  const Answer a = up.get(base + "/members/m10");
  EXPECT_EQ(a.body["name"], "Name 10") << a.text;
  EXPECT_FALSE(a.body.contains("unavailable")) << a.text;
  EXPECT_EQ(up.get(base + "/members/m07").body["rank"], 9);
  EXPECT_EQ(up.get(base + "/members/late").body["rank"], 21);  // hot, after the cold ones
}

TEST_F(DegradeTest, WithPostgresDownHotReadsAnswerAndSayWhichProfileFieldsTheyLack) {
  fill();
  {
    // serve ran while PostgreSQL was up: the deployment's cursor key was made and Redis
    // keeps a copy, so pages can hand out cursors while it is down.
    Served up(config_path, log + "-up", kNow);
    ASSERT_EQ(up.get("/v1/boards/pts/daily/top?limit=1").status, 200);
  }
  Served s(no_pg_path, log, kNow);
  const std::string base = "/v1/boards/pts/daily";
  // The first member is hot again; its profile moved to PostgreSQL while it was cold.
  Answer a = s.get(base + "/members/m10");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body, json::parse(R"({"rank": 1, "member": "m10", "points": 1090,
      "achieved_at": "2026-11-20T12:00:00.000Z", "unavailable": ["name", "metadata"]})"));
  a = s.get(base + "/members/m00");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body, json::parse(R"({"rank": 2, "member": "m00", "points": 100,
      "achieved_at": "2026-11-20T01:00:00.000Z", "name": "Name 0", "metadata": {"i": 0}})"));
  // around and ids within the hot part.
  a = s.get(base + "/members/m00/around?k=2");
  ASSERT_EQ(a.status, 200) << a.text;
  std::vector<std::string> listed;
  for (const auto& r : a.body["records"]) listed.push_back(r["member"]);
  EXPECT_EQ(listed, (std::vector<std::string>{"m10", "m00", "m01", "m02"}));
  a = s.get(base + "/members?ids=m01,m10");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["records"].size(), 2U);
  EXPECT_EQ(a.body["records"][0]["member"], "m10");
  EXPECT_EQ(a.body["not_found"], json::array());
  // top pages within the hot part; the total needs the cold tier's count: null.
  a = s.get(base + "/top?limit=2");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_TRUE(a.body["total"].is_null()) << a.text;
  EXPECT_EQ(a.body["records"][1]["member"], "m00");
  a = s.get(base + "/top?limit=2&cursor=" + test::enc(a.body["next_cursor"].get<std::string>()));
  ASSERT_EQ(a.status, 200) << a.text;
  ASSERT_EQ(a.body["records"].size(), 2U);
  EXPECT_EQ(a.body["records"][0]["member"], "m01");
  EXPECT_EQ(a.body["records"][0]["rank"], 3);
  const std::string third = a.body["next_cursor"];
  expect_cold_reads_unavailable(s, base, third);
  // The CLI: the same reads, the same answers (exit 3 where PostgreSQL is needed).
  test::RunResult r = cli(no_pg_path, {"rank", "pts", "daily", "m10", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("unavailable":["name","metadata"])"), std::string::npos) << r.out;
  r = cli(no_pg_path, {"rank", "pts", "daily", "m10"});
  EXPECT_NE(r.out.find("(unavailable)"), std::string::npos) << r.out;
  r = cli(no_pg_path, {"top", "pts", "daily", "-n", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::json_lines(r).size(), 3U);
  EXPECT_EQ(cli(no_pg_path, {"rank", "pts", "daily", "m07"}).exit_code, 3);
  // With PostgreSQL up the same record is whole.
  Served up(config_path, log + "2", kNow);
  expect_whole_reads(up, base);
}

// Archived periods need PostgreSQL only: with Redis stopped they are still answered, over
// HTTP and in the CLI; the current period is a 503 (exit 3).
TEST_F(DegradeTest, WithRedisStoppedArchivedPeriodsAnswerFromPostgres) {
  test::RedisServer redis;
  const std::string path =
      test::write_text_config(prefix + "-own", test::config_text_for(redis.url(), prefix, kBoards));
  {
    redis::Connection conn = redis.connect();
    const Config config = parse_config(test::read_file(path), path, {});
    cold::ColdStore cold(test::postgres_url(), prefix);
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339("2026-11-19T12:00:00Z")), &cold);
    for (int i = 0; i < 8; ++i) {
      service::Update u{"pts", member(i), 50 - i, {}, ""};
      u.name = "Name " + std::to_string(i);
      ASSERT_EQ(lb.apply(u).status, service::UpdateStatus::applied);
    }
  }
  ASSERT_EQ(test::run_cli({"--config", path, "--now", kNow, "tick"}).exit_code, 0);  // archives
  Served s(path, log, kNow);
  const std::string day = "/v1/boards/pts/daily";
  const std::string q = "?period_id=2026-11-19";
  const Answer top = s.get(day + "/top" + q);
  ASSERT_EQ(top.status, 200) << top.text;
  EXPECT_EQ(top.body["state"], "archived");
  const Answer one = s.get(day + "/members/m03" + q);
  ASSERT_EQ(one.status, 200) << one.text;
  const std::vector<std::string> cli_top{"--config",   path,    "--now", kNow,
                                         "top",        "pts",   "daily", "--period-id",
                                         "2026-11-19", "--json"};
  const test::RunResult before = test::run_cli(cli_top);
  ASSERT_EQ(before.exit_code, 0) << before.err;

  redis.stop();
  const Answer down = s.get(day + "/top" + q);
  EXPECT_EQ(down.status, 200) << down.text;
  EXPECT_EQ(down.body, top.body);
  EXPECT_EQ(s.get(day + "/members/m03" + q).body, one.body);
  EXPECT_EQ(s.get(day + "/members/m03/around" + q + "&k=1").status, 200);
  EXPECT_EQ(s.get(day + "/top").status, 503);  // the current period lives in Redis
  const test::RunResult after = test::run_cli(cli_top);
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  EXPECT_EQ(test::run_cli({"--config", path, "--now", kNow, "top", "pts", "daily"}).exit_code, 3);
}

}  // namespace
}  // namespace bk
