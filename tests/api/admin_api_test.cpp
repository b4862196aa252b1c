// The admin routes of the HTTP API without servers (api/admin.h): who may use them (401, 403,
// admin tokens that may also read, fail closed without admin tokens), the methods each takes
// (405 with Allow, also before the body), and hostile inputs refused with a JSON error before
// anything is removed or banned.
#include "api/admin.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "cold/error.h"
#include "config/config.h"

namespace bk {
namespace {

using json = nlohmann::json;

const char* kConfig = R"(redis:
  url: redis://127.0.0.1:1
  key_prefix: admintest
boards:
  - name: points
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 30d}
)";

const std::string kKey(32, 'k');
const std::string kAdmin = "Bearer admin-token";
const std::string kReader = "Bearer read-token";
const std::string kBan = "/v1/boards/points/bans/alice";
const std::string kBans = "/v1/boards/points/bans";
const std::string kMember = "/v1/boards/points/daily/members/alice";

redis::Options nowhere() {
  redis::Options o;
  o.port = 1;
  return o;
}

class AdminApiTest : public ::testing::Test {
 protected:
  Config config = parse_config(kConfig, "admin_api_test.yaml", {});
  redis::Connection redis{nowhere(), redis::Connect::later};
  service::Leaderboards boards{config, redis, Clock(*parse_rfc3339("2026-11-25T12:00:00Z"))};
  // An archived period's read gets a 503.
  void SetUp() override {
    boards.reads().read_history_from([]() -> cold::History& {
      throw cold::PostgresUnavailable("postgresql 127.0.0.1:1: refused");
    });
  }
  api::Api guarded{{"read-token"}, [] { return kKey; }, {"admin-token"}};
  api::Api no_admin{{"read-token"}, [] { return kKey; }};
  api::Api open_reads{{}, [] { return kKey; }, {"admin-token"}};

  api::Response send(const api::Api& api, const std::string& method, const std::string& target,
                     const std::string& authorization, const std::string& body = "") {
    return api.handle({method, target, authorization, body}, boards);
  }
  // What the server asks before it reads a body.
  std::optional<api::Response> admit(const api::Api& api, const std::string& method,
                                     const std::string& target, const std::string& authorization) {
    return api.refuse_before_body({method, target, authorization, ""});
  }
};

std::string error_of(const api::Response& r) {
  const json body = json::parse(r.body, nullptr, false);
  EXPECT_TRUE(body.is_object() && body.contains("error")) << r.body;
  return body.is_object() ? body.value("error", "") : "";
}

std::string header(const api::Response& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

struct Call {
  std::string method;
  std::string target;
};
const std::vector<Call> kAdminCalls{
    {"DELETE", kMember}, {"PUT", kBan}, {"DELETE", kBan}, {"GET", kBans}};

TEST_F(AdminApiTest, NoTokenIs401AReadTokenIs403BeforeAndAfterTheBody) {
  for (const Call& c : kAdminCalls) {
    const std::string what = c.method + " " + c.target;
    const api::Response none = send(guarded, c.method, c.target, "");
    EXPECT_EQ(none.status, 401) << what;
    EXPECT_EQ(header(none, "WWW-Authenticate"), "Bearer") << what;
    EXPECT_FALSE(error_of(none).empty()) << what;
    EXPECT_EQ(send(guarded, c.method, c.target, "Bearer nobody").status, 401) << what;
    const api::Response reader = send(guarded, c.method, c.target, kReader);
    EXPECT_EQ(reader.status, 403) << what;
    EXPECT_NE(error_of(reader).find("admin token"), std::string::npos) << what;
    const auto before = admit(guarded, c.method, c.target, kReader);
    ASSERT_TRUE(before.has_value()) << what;
    EXPECT_EQ(before->status, 403) << what;
    EXPECT_FALSE(admit(guarded, c.method, c.target, kAdmin).has_value()) << what;
  }
}

TEST_F(AdminApiTest, WithoutAdminTokensEveryAdminRouteIs403ForEveryone) {
  for (const Call& c : kAdminCalls) {
    for (const std::string& auth : {std::string(), kReader, kAdmin}) {
      const api::Response r = send(no_admin, c.method, c.target, auth);
      EXPECT_EQ(r.status, 403) << c.method << " " << c.target << " with '" << auth << "'";
      EXPECT_NE(error_of(r).find("no admin token"), std::string::npos) << r.body;
    }
  }
  // Reads are unchanged.
  EXPECT_EQ(send(no_admin, "GET", kMember + "?period_id=x", kReader).status, 400);
}

TEST_F(AdminApiTest, AnAdminTokenMayReadAndOpenReadsStillNeedOneForAdminRoutes) {
  // Past the token check: the period id is refused (400), not the token.
  EXPECT_EQ(send(guarded, "GET", kMember + "?period_id=x", kAdmin).status, 400);
  EXPECT_EQ(send(open_reads, "GET", kMember + "?period_id=x", "").status, 400);
  EXPECT_EQ(send(open_reads, "DELETE", kMember, "").status, 401);
  EXPECT_EQ(send(open_reads, "PUT", kBan, "Bearer read-token").status, 401);
}

TEST_F(AdminApiTest, EachRouteTakesItsMethodsOnly) {
  const auto expect_405 = [&](const std::string& method, const std::string& target,
                              const std::string& allow) {
    const api::Response r = send(guarded, method, target, kAdmin);
    EXPECT_EQ(r.status, 405) << method << " " << target;
    EXPECT_EQ(header(r, "Allow"), allow) << method << " " << target;
    EXPECT_FALSE(error_of(r).empty());
  };
  expect_405("GET", kBan, "PUT, DELETE");
  expect_405("POST", kBan, "PUT, DELETE");
  expect_405("POST", kMember, "GET, HEAD, DELETE");
  expect_405("PUT", kMember, "GET, HEAD, DELETE");
  expect_405("DELETE", kBans, "GET, HEAD");
  expect_405("PUT", "/v1/boards/points/daily/top", "GET, HEAD");
  // Refused before the body too (the server then holds none).
  for (const Call& c : std::vector<Call>{{"POST", kMember},
                                         {"PUT", kMember},
                                         {"PUT", "/v1/boards/points/daily/top"},
                                         {"DELETE", "/v1/boards/points/daily/members"}}) {
    const auto r = admit(guarded, c.method, c.target, kAdmin);
    ASSERT_TRUE(r.has_value()) << c.method << " " << c.target;
    EXPECT_EQ(r->status, 405) << c.method << " " << c.target;
  }
}

TEST_F(AdminApiTest, HostileInputsAreRefusedWithAJsonErrorBeforeAnythingIsTouched) {
  const std::string long_member(10 * 1024, 'm');
  const struct {
    std::string method, target, body;
    int status;
    std::string says;
  } cases[] = {
      {"DELETE", "/v1/boards/points/daily/members/" + long_member, "", 400, "512"},
      {"PUT", "/v1/boards/points/bans/" + long_member, "", 400, "512"},
      {"PUT", "/v1/boards/points/bans/%FF%FE", "", 400, "UTF-8"},
      {"DELETE", "/v1/boards/points/daily/members/%C3", "", 400, "UTF-8"},
      {"PUT", "/v1/boards/points/bans/a%00b", "", 400, "member id"},
      {"DELETE", "/v1/boards/points/daily/members/%zz", "", 400, "percent-encoded"},
      {"PUT", kBan, std::string(4097, ' '), 413, "4096"},
      {"PUT", kBan, "{\"reason\": ", 400, "not valid JSON"},
      {"PUT", kBan, "{\"reason\": \"\xff\"}", 400, "not valid JSON"},
      {"PUT", kBan, "[\"reason\"]", 400, "JSON object"},
      {"PUT", kBan, "{\"reason\": 7}", 400, "string"},
      {"PUT", kBan, "{\"why\": \"x\"}", 400, "unknown field"},
      {"PUT", kBan, "{\"reason\": \"" + std::string(513, 'r') + "\"}", 400, "at most 512"},
      {"PUT", "/v1/boards/nope/bans/alice", "{\"reason\": \"x\"}", 404, "no board entry"},
      {"DELETE", "/v1/boards/nope/daily/members/alice", "", 404, "no board entry"},
      {"GET", "/v1/boards/nope/bans", "", 404, "no board entry"},
      {"DELETE", "/v1/boards/points/weekly/members/alice", "", 404, "has no period"},
      {"DELETE", kMember + "?all=yes", "", 400, "true or false"},
      {"DELETE", kMember + "?all=true&period_id=2026-11-25", "", 400, "not both"},
      {"DELETE", kMember + "?force=1", "", 400, "unknown parameter"},
      {"DELETE", kBan, "x", 400, "carries no body"},
  };
  for (const auto& c : cases) {
    const std::string what = c.method + " " + c.target.substr(0, 80);
    const api::Response r = send(guarded, c.method, c.target, kAdmin, c.body);
    EXPECT_EQ(r.status, c.status) << what << ": " << r.body.substr(0, 200);
    EXPECT_NE(error_of(r).find(c.says), std::string::npos) << what << ": " << r.body.substr(0, 200);
    EXPECT_LT(r.body.size(), 1024U) << what << ": a long input is not echoed";
  }
}

TEST_F(AdminApiTest, ARemovalIsJsonWithThePeriodsThatHeldTheMember) {
  service::Removal r;
  r.periods.push_back({"points", "daily", "2026-11-25", false, 1, 0, 0});
  r.periods.push_back({"points", "weekly", "2026-W48", false, 0, 0, 0});
  const json j = json::parse(api::removal_json("points", "al\"ice", r));
  EXPECT_EQ(j["member"], "al\"ice");
  EXPECT_EQ(j["removed"], true);
  ASSERT_EQ(j["periods"].size(), 1U);
  EXPECT_EQ(j["periods"][0]["period_id"], "2026-11-25");
  EXPECT_EQ(j["periods"][0]["hot"], 1);
  EXPECT_EQ(json::parse(api::removal_json("points", "bob", {}))["removed"], false);
}

}  // namespace
}  // namespace bk
