// `serve`'s admin routes against the real binary, Redis and PostgreSQL: each route answers 401
// without a token, 403 with a read token and 200 with an admin token (and does what it says);
// without admin tokens every admin route answers 403 (fail closed); hostile inputs each get
// their status and a JSON error, and serve answers others afterwards; admin tokens never
// reach the log; a token that is both a read and an admin token stops serve (exit 2); a
// removal waiting for a period's lock answers 503 in time.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cold/board_reset.h"
#include "cold/cold_store.h"
#include "harness.h"
#include "served.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;
using test::error_of;

const char* kBoards = R"(  - name: points
    periods: [daily]
    max_points: 1000000
    hot_keep: 100
    display: 5
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-25T12:00:00Z";
const std::string kReadToken = "read-token-7f3a";
const std::string kAdminToken = "admin-token-c41d9e";
const httplib::Headers kNone;
const httplib::Headers kReader{{"Authorization", "Bearer " + kReadToken}};
const httplib::Headers kAdmin{{"Authorization", "Bearer " + kAdminToken}};

// A running `serve` with BOARDKEEPER_SERVE_TOKENS and BOARDKEEPER_SERVE_ADMIN_TOKENS.
class Served : public test::Served {
 public:
  Served(const std::string& config_path, const std::string& log, const std::string& admin_tokens)
      : test::Served(config_path, log, kNow,
                     {{"BOARDKEEPER_SERVE_TOKENS", kReadToken},
                      {"BOARDKEEPER_SERVE_ADMIN_TOKENS", admin_tokens}},
                     {"--log-level", "debug"}) {}
};

const std::string kTop = "/v1/boards/points/daily/top";
const std::string kBans = "/v1/boards/points/bans";

class ServeAdminTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  std::string log = "/tmp/" + prefix + "-serve";

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
    const Config config = test::make_config(prefix, kBoards);
    redis::Connection conn = test::connect_redis();
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kNow)));
    for (const std::string m : {"alice", "bob", "carol", "dave"}) {
      ASSERT_EQ(lb.apply({"points", m, 100 + static_cast<std::int64_t>(m.size()), {}, ""}).status,
                service::UpdateStatus::applied);
    }
  }
  static std::vector<std::string> top_members(Served& s) {
    const Answer a = s.get(kTop + "?limit=10", kReader);
    EXPECT_EQ(a.status, 200) << a.body.dump();
    std::vector<std::string> out;
    for (const auto& r : a.body["records"]) out.push_back(r["member"]);
    return out;
  }
};

TEST_F(ServeAdminTest, EachAdminRouteIs401WithoutAToken403WithAReadToken200WithAnAdminToken) {
  Served s(config_path, log, kAdminToken);
  const std::string member = "/v1/boards/points/daily/members/alice";
  const std::string ban = "/v1/boards/points/bans/bob";
  for (const auto& headers : {kNone, kReader}) {
    const int want = headers.empty() ? 401 : 403;
    EXPECT_EQ(s.del(member, headers).status, want);
    EXPECT_EQ(s.put(ban, headers, R"({"reason": "aimbot"})").status, want);
    EXPECT_EQ(s.del(ban, headers).status, want);
    EXPECT_EQ(s.get(kBans, headers).status, want);
  }
  EXPECT_EQ(top_members(s).size(), 4U) << "nothing was removed by the refused requests";

  const Answer removed = s.del(member, kAdmin);
  ASSERT_EQ(removed.status, 200) << removed.body.dump();
  EXPECT_EQ(removed.body["removed"], true);
  ASSERT_EQ(removed.body["periods"].size(), 1U) << removed.body.dump();
  EXPECT_EQ(removed.body["periods"][0]["period_id"], "2026-11-25");
  EXPECT_EQ(removed.body["periods"][0]["hot"], 1);
  EXPECT_EQ(s.get(member, kReader).status, 404) << "a read no longer finds it";
  EXPECT_EQ(s.del(member, kAdmin).body["removed"], false) << "idempotent";

  const Answer banned = s.put(ban, kAdmin, R"({"reason": "aimbot"})");
  ASSERT_EQ(banned.status, 200) << banned.body.dump();
  EXPECT_EQ(banned.body["newly_banned"], true);
  EXPECT_EQ(banned.body["removed"]["removed"], true);
  EXPECT_EQ(top_members(s), (std::vector<std::string>{"carol", "dave"}));
  const Answer list = s.get(kBans, kAdmin);
  ASSERT_EQ(list.status, 200) << list.body.dump();
  ASSERT_EQ(list.body["bans"].size(), 1U);
  EXPECT_EQ(list.body["bans"][0]["member"], "bob");
  EXPECT_EQ(list.body["bans"][0]["reason"], "aimbot");
  EXPECT_EQ(s.put(ban, kAdmin).body["newly_banned"], false);
  const Answer unbanned = s.del(ban, kAdmin);
  ASSERT_EQ(unbanned.status, 200) << unbanned.body.dump();
  EXPECT_EQ(unbanned.body["unbanned"], true);
  EXPECT_EQ(s.del(ban, kAdmin).body["unbanned"], false);
  EXPECT_EQ(s.get(kBans, kAdmin).body["bans"].size(), 0U);
  EXPECT_EQ(s.get(kTop, kAdmin).status, 200) << "an admin token may read";
}

TEST_F(ServeAdminTest, WithoutAdminTokensTheAdminRoutesAre403ForEveryone) {
  Served s(config_path, log, "");
  for (const auto& headers : {kNone, kReader, kAdmin}) {
    const Answer a = s.del("/v1/boards/points/daily/members/alice", headers);
    EXPECT_EQ(a.status, 403) << a.body.dump();
    EXPECT_NE(error_of(a).find("no admin token"), std::string::npos) << a.body.dump();
    EXPECT_EQ(s.put("/v1/boards/points/bans/alice", headers).status, 403);
    EXPECT_EQ(s.get(kBans, headers).status, 403);
  }
  EXPECT_EQ(top_members(s).size(), 4U);
}

TEST_F(ServeAdminTest, HostileInputsGetTheirStatusAndAJsonErrorAndServeGoesOn) {
  Served s(config_path, log, kAdminToken);
  const auto expect = [&](const Answer& a, int status, const std::string& says,
                          const std::string& what) {
    EXPECT_EQ(a.status, status) << what << ": " << a.body.dump().substr(0, 300);
    EXPECT_NE(error_of(a).find(says), std::string::npos)
        << what << ": " << a.body.dump().substr(0, 300);
    EXPECT_EQ(top_members(s).size(), 4U) << "after " << what;
  };
  const std::string huge(10 * 1024, 'm');
  // 10 KiB in the request line: the server's bound on it (414), before any route.
  expect(s.del("/v1/boards/points/daily/members/" + huge, kAdmin), 414, "request line",
         "10 KiB member");
  expect(s.del("/v1/boards/points/daily/members/" + std::string(600, 'm'), kAdmin), 400, "512",
         "a member over 512 bytes");
  expect(s.put("/v1/boards/points/bans/%FF%FE", kAdmin), 400, "UTF-8", "invalid UTF-8");
  expect(s.del("/v1/boards/points/daily/members/al%00ice", kAdmin), 400, "member id", "%00");
  expect(s.put("/v1/boards/points/bans/alice", kAdmin, std::string(4097, ' ')), 413, "4096",
         "a body over 4 KiB");
  expect(s.put("/v1/boards/points/bans/alice", kAdmin, std::string(64 * 1024, 'x')), 413, "4096",
         "a body of 64 KiB");
  expect(s.put("/v1/boards/points/bans/alice", kAdmin, "{\"reason\": "), 400, "not valid JSON",
         "invalid JSON");
  expect(s.put("/v1/boards/points/bans/alice", kAdmin,
               json({{"reason", std::string(513, 'r')}}).dump()),
         400, "at most 512", "a reason too long");
  expect(s.put("/v1/boards/nope/bans/alice", kAdmin), 404, "no board entry", "an unknown board");
  expect(s.del("/v1/boards/nope/daily/members/alice", kAdmin), 404, "no board entry",
         "an unknown board (remove)");
  expect(s.get("/v1/boards/points/bans/alice", kAdmin), 405, "not allowed", "GET on a ban route");
  expect(s.post("/v1/boards/points/daily/members/alice", "{}", kAdmin), 405, "not allowed",
         "POST on a member route");
  EXPECT_EQ(s.get(kBans, kAdmin).body["bans"].size(), 0U) << "nothing was banned";
}

// A removal waits for a spill or archive holding its period's lock (here: the test holds it)
// at most a few seconds, then answers 503 saying the member is off every read already; serve
// answers reads meanwhile; once the lock is free, the same request finishes. Before the bound
// the DELETE held its worker for as long as the lock was held (this client gave up after 30 s).
TEST_F(ServeAdminTest, ARemovalWaitingForASpillsLockAnswers503InTimeAndARetryFinishesIt) {
  Served s(config_path, log, kAdminToken);
  cold::ColdStore store(test::postgres_url(), prefix);
  cold::BoardReset holder(store.link());
  holder.lock({"points", "daily", "2026-11-25"});
  Answer waited;
  std::atomic<bool> done{false};
  std::thread remover([&] {
    httplib::Client other("127.0.0.1", s.port());
    other.set_read_timeout(30, 0);
    const httplib::Result r = other.Delete("/v1/boards/points/daily/members/alice", kAdmin);
    if (r) {
      waited.status = r->status;
      waited.body = json::parse(r->body, nullptr, false);
      if (r->get_header_value("Retry-After").empty()) waited.status = -1;
    }
    done = true;
  });
  // Once it waits for the lock (PostgreSQL shows it), the member is off the board for every
  // read, and reads are answered.
  bool waiting = false;
  for (int i = 0; i < 1500 && !waiting && !done.load(); ++i) {
    waiting = test::psql(
                  "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT "
                  "granted")
                  .rfind("0", 0) != 0;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  EXPECT_TRUE(waiting) << "the removal never waited for the period's lock";
  EXPECT_EQ(top_members(s), (std::vector<std::string>{"carol", "dave", "bob"}));
  remover.join();
  EXPECT_EQ(waited.status, 503) << "0: no answer in 30 s; -1: no Retry-After; "
                                << waited.body.dump();
  EXPECT_NE(error_of(waited).find("off every read"), std::string::npos) << waited.body.dump();
  EXPECT_NE(error_of(waited).find("try again"), std::string::npos) << waited.body.dump();
  holder.unlock();
  const Answer again = s.del("/v1/boards/points/daily/members/alice", kAdmin);
  EXPECT_EQ(again.status, 200) << again.body.dump();
  EXPECT_EQ(top_members(s), (std::vector<std::string>{"carol", "dave", "bob"}));
}

TEST_F(ServeAdminTest, AdminTokensNeverReachTheLog) {
  const std::string file_token = "file-admin-token-99b2";
  const std::string tokens_file = "/tmp/" + prefix + "-admin-tokens";
  std::ofstream(tokens_file) << "# admin tokens\n" << file_token << "\n";
  const std::string config = test::write_text_config(
      prefix + "-f",
      test::config_text(prefix, kBoards) + "serve:\n  admin_tokens_file: " + tokens_file + "\n");
  {
    Served s(config, log, kAdminToken);
    EXPECT_EQ(s.get(kBans, {{"Authorization", "Bearer " + file_token}}).status, 200);
    EXPECT_EQ(s.get(kBans, kAdmin).status, 200);
    EXPECT_EQ(s.del("/v1/boards/points/daily/members/%FF", kAdmin).status, 400);
    EXPECT_EQ(s.get(kBans, {{"Authorization", "Bearer " + kAdminToken + "x"}}).status, 401);
  }
  const std::string text = test::read_file(log);
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.find(kAdminToken), std::string::npos) << text;
  EXPECT_EQ(text.find(file_token), std::string::npos) << text;
  EXPECT_EQ(text.find(kReadToken), std::string::npos) << text;
}

TEST_F(ServeAdminTest, ATokenThatIsBothAReadAndAnAdminTokenStopsServe) {
  const test::RunResult r =
      test::run_cli({"--config", config_path, "serve", "--listen", "127.0.0.1:0"},
                    {"BOARDKEEPER_SERVE_TOKENS=" + kReadToken,
                     "BOARDKEEPER_SERVE_ADMIN_TOKENS=other," + kReadToken});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("BOARDKEEPER_SERVE_ADMIN_TOKENS: this admin token is also a read token "
                       "(BOARDKEEPER_SERVE_TOKENS): tokens must be distinct"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find(kReadToken), std::string::npos) << r.err;
  const test::RunResult empty =
      test::run_cli({"--config", config_path, "serve", "--listen", "127.0.0.1:0"},
                    {"BOARDKEEPER_SERVE_ADMIN_TOKENS= , "});
  EXPECT_EQ(empty.exit_code, 2) << empty.err;
  EXPECT_NE(empty.err.find("names no token"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace bk
