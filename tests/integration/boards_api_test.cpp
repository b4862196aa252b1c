// Discovery: GET /v1/boards lists the boards the config names and those Redis holds, each
// once, by name, a page at a time: what the web console's start page shows. A glob entry is
// no board; a board Redis holds that no entry covers any more is listed as not configured.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness.h"
#include "hot/registry.h"
#include "served.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;

const char* kBoards = R"(  - name: pts
    periods: [daily, weekly]
    max_points: 1000
    retention: {default: 30d}
  - name: "game:*"
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
  - name: zz
    periods: [monthly]
    max_points: 1000
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-10T12:00:00Z";
const std::string kReadToken = "read-token-b0a4d";
const std::string kWriteToken = "write-token-77e1c";

class BoardsApiTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  std::string log = "/tmp/" + prefix + "-serve.log";

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
    for (const char* board : {"pts", "game:a", "game:b"}) {
      const test::RunResult r =
          test::run_cli({"--config", config_path, "--now", kNow, "add", board, "m1", "5"});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
    // A board Redis holds whose entry has left the config (as the update path registers one).
    redis::Connection conn = test::connect_redis();
    hot::add_board(conn, prefix, "gone");
  }
};

// The whole list, as the pages hand it out.
json listed(test::Served& s, const std::string& query, const httplib::Headers& headers = {}) {
  json all = json::array();
  std::string target = "/v1/boards" + query;
  for (int page = 0; page < 20; ++page) {
    const Answer a = s.get(target, headers);
    EXPECT_EQ(a.status, 200) << target << " " << a.text;
    if (a.status != 200) break;
    for (const json& b : a.body["boards"]) all.push_back(b);
    if (a.body["next_cursor"].is_null()) break;
    target = "/v1/boards" + query + (query.empty() ? "?" : "&") +
             "cursor=" + test::enc(a.body["next_cursor"].get<std::string>());
  }
  return all;
}

TEST_F(BoardsApiTest, ListsNamedAndRedisBoardsOnceByNameAPageAtATime) {
  test::Served s(config_path, log, kNow);
  const Answer a = s.get("/v1/boards");
  ASSERT_EQ(a.status, 200) << a.text;
  const json want = json::parse(R"([
    {"board": "game:a", "configured": true, "entry": "game:*", "periods": ["daily"],
     "in_redis": true},
    {"board": "game:b", "configured": true, "entry": "game:*", "periods": ["daily"],
     "in_redis": true},
    {"board": "gone", "configured": false, "entry": null, "periods": [], "in_redis": true},
    {"board": "pts", "configured": true, "entry": "pts", "periods": ["daily", "weekly"],
     "in_redis": true},
    {"board": "zz", "configured": true, "entry": "zz", "periods": ["monthly"],
     "in_redis": false}])");
  EXPECT_EQ(a.body["boards"], want) << a.text;
  EXPECT_TRUE(a.body["next_cursor"].is_null()) << a.text;
  // Pages of 2 and of 1 hand out the same list; the last page has no cursor.
  const Answer first = s.get("/v1/boards?limit=2");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body["boards"].size(), 2U);
  EXPECT_TRUE(first.body["next_cursor"].is_string()) << first.text;
  EXPECT_EQ(listed(s, "?limit=2"), want);
  EXPECT_EQ(listed(s, "?limit=1"), want);
  EXPECT_EQ(listed(s, "?limit=5"), want);
  // Every board listed as configured answers its periods route.
  for (const json& b : want) {
    const std::string board = b["board"].get<std::string>();
    const int status = s.get("/v1/boards/" + test::enc(board) + "/periods").status;
    EXPECT_EQ(status, b["configured"].get<bool>() ? 200 : 404) << board;
  }
}

TEST_F(BoardsApiTest, BadParametersAre400sAndOtherMethods405) {
  test::Served s(config_path, log, kNow);
  for (const std::string& bad :
       std::vector<std::string>{"?limit=0", "?limit=1001", "?limit=x", "?cursor=%%%", "?cursor=!!",
                                "?cursor=", "?offset=2", "?board=pts"}) {
    const Answer a = s.get("/v1/boards" + bad);
    EXPECT_EQ(a.status, 400) << bad << " " << a.text;
    EXPECT_FALSE(test::error_of(a).empty()) << bad;
  }
  const Answer post = s.post("/v1/boards", "{}");
  EXPECT_EQ(post.status, 405) << post.text;
  // A made-up cursor only starts the list elsewhere: after "p" ("cA").
  const Answer after_p = s.get("/v1/boards?cursor=cA");
  ASSERT_EQ(after_p.status, 200) << after_p.text;
  ASSERT_EQ(after_p.body["boards"].size(), 2U) << after_p.text;
  EXPECT_EQ(after_p.body["boards"][0]["board"], "pts");
  EXPECT_EQ(s.get("/v1/boards/").status, 404);
}

TEST_F(BoardsApiTest, TheListNeedsAReadToken) {
  test::Served s(
      config_path, log, kNow,
      {{"BOARDKEEPER_SERVE_TOKENS", kReadToken}, {"BOARDKEEPER_SERVE_WRITE_TOKENS", kWriteToken}});
  EXPECT_EQ(s.get("/v1/boards").status, 401);
  EXPECT_EQ(s.get("/v1/boards", {{"Authorization", "Bearer wrong"}}).status, 401);
  EXPECT_EQ(s.get("/v1/boards", {{"Authorization", "Bearer " + kWriteToken}}).status, 403);
  const Answer a = s.get("/v1/boards?limit=1", {{"Authorization", "Bearer " + kReadToken}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["boards"][0]["board"], "game:a");
}

}  // namespace
}  // namespace bk
