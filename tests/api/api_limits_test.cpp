// The rate limits at the API's edge without servers (api/api.h, api/rate_limits.h): a 429
// with Retry-After and RateLimit-* before the body once a bucket is spent; requests refused
// for their token or method spend nothing; reads without a token of ours share one bucket
// while an admin token that reads has its own; answers of a limited class carry RateLimit-*,
// others none; paths outside /v1 (probes, the console) are never limited.
#include <gtest/gtest.h>

#include <string>

#include "api/api.h"
#include "config/config.h"

namespace bk {
namespace {

const char* kConfig = R"(redis:
  url: redis://127.0.0.1:1
  key_prefix: limitstest
boards:
  - name: points
    periods: [daily]
    max_points: 1000000
    retention: {default: 30d}
)";

const std::string kTop = "/v1/boards/points/daily/top";

redis::Options nowhere() {
  redis::Options o;
  o.port = 1;
  return o;
}

std::string header(const api::Response& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

class ApiLimitsTest : public ::testing::Test {
 protected:
  Config config = parse_config(kConfig, "api_limits_test.yaml", {});
  redis::Connection redis{nowhere(), redis::Connect::later};
  service::Leaderboards boards{config, redis, Clock(*parse_rfc3339("2026-11-25T12:00:00Z"))};

  // An Api whose read limit is `burst` requests an hour.
  static api::Api with_read_limit(api::Tokens tokens, std::int64_t burst) {
    RateLimitsConfig limits;
    limits.read = RateLimit{1.0 / 3600, burst};
    return api::Api([] { return std::string(32, 'k'); },
                    std::make_shared<const api::TokenStore>(std::move(tokens)),
                    std::make_shared<api::RateLimits>(limits));
  }
  static std::optional<api::Response> admit(const api::Api& api, const std::string& method,
                                            const std::string& target, const std::string& token) {
    return api.refuse_before_body({method, target, token.empty() ? "" : "Bearer " + token, ""});
  }
};

TEST_F(ApiLimitsTest, ASpentBucketIsA429WithItsHeadersBeforeTheBody) {
  const api::Api api = with_read_limit({{"reader"}, {}, {}}, 2);
  EXPECT_FALSE(admit(api, "GET", kTop, "reader"));
  EXPECT_FALSE(admit(api, "POST", "/v1/boards/points/daily/members", "reader"));
  const auto refused = admit(api, "GET", kTop + "?limit=3", "reader");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_NE(refused->body.find("this token's read limit (serve.rate_limits.read, 2 at once)"),
            std::string::npos)
      << refused->body;
  EXPECT_EQ(header(*refused, "Retry-After"), "3600");
  EXPECT_EQ(header(*refused, "RateLimit-Limit"), "2");
  EXPECT_EQ(header(*refused, "RateLimit-Remaining"), "0");
  EXPECT_EQ(header(*refused, "RateLimit-Reset"), "7200");
  EXPECT_TRUE(refused->admin) << "never cached";
  for (const char* path : {"/healthz", "/readyz", "/metrics", "/console/", "/"}) {
    EXPECT_FALSE(admit(api, "GET", path, "reader")) << path;
  }
}

TEST_F(ApiLimitsTest, RequestsRefusedForTheirTokenOrMethodSpendNothing) {
  const api::Api api = with_read_limit({{"reader"}, {"admin"}, {}}, 1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(admit(api, "GET", kTop, "")->status, 401);
    EXPECT_EQ(admit(api, "GET", kTop, "made-up")->status, 401);
    EXPECT_EQ(admit(api, "PUT", kTop, "reader")->status, 405);
    EXPECT_EQ(admit(api, "GET", "/v1/boards/points/bans", "reader")->status, 403);
  }
  EXPECT_FALSE(admit(api, "GET", kTop, "reader"));
  EXPECT_EQ(admit(api, "GET", kTop, "reader")->status, 429);
  EXPECT_FALSE(admit(api, "GET", kTop, "admin")) << "an admin token reads in its own bucket";
  EXPECT_FALSE(admit(api, "GET", "/v1/boards/points/bans", "admin")) << "admin has no limit";
}

TEST_F(ApiLimitsTest, ReadsWithoutATokenOfOursShareOneBucket) {
  const api::Api api = with_read_limit({{}, {"admin"}, {}}, 1);
  EXPECT_FALSE(admit(api, "GET", kTop, ""));
  const auto other = admit(api, "GET", kTop, "any-made-up-token");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 429) << "a made-up token is no way round the shared bucket";
  EXPECT_NE(other->body.find("the limit that requests without a token share"), std::string::npos)
      << other->body;
  EXPECT_FALSE(admit(api, "GET", kTop, "admin"));
}

TEST_F(ApiLimitsTest, AnswersOfALimitedClassCarryRateLimitHeaders) {
  const api::Api api = with_read_limit({{"reader"}, {"admin"}, {}}, 5);
  ASSERT_FALSE(admit(api, "GET", "/v1/boards/nosuch/daily/top", "reader"));
  const api::Response read = api.handle({"GET", "/v1/boards/nosuch/daily/top", "Bearer reader", ""},
                                        boards);  // no backend
  EXPECT_EQ(read.status, 404) << read.body;
  EXPECT_EQ(header(read, "RateLimit-Limit"), "5");
  EXPECT_EQ(header(read, "RateLimit-Remaining"), "4");
  EXPECT_EQ(header(read, "RateLimit-Reset"), "3600");
  const api::Response admin =
      api.handle({"GET", "/v1/boards/nosuch/bans", "Bearer admin", ""}, boards);
  EXPECT_EQ(header(admin, "RateLimit-Limit"), "") << "a class without a limit: " << admin.status;
  const api::Api unlimited({}, [] { return std::string(32, 'k'); });
  EXPECT_EQ(header(unlimited.handle({"GET", "/v1/boards/nosuch/daily/top", "", ""}, boards),
                   "RateLimit-Limit"),
            "");
}

}  // namespace
}  // namespace bk
