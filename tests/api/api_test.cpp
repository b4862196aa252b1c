// The HTTP read API without servers: requests that are refused before any read (bodies,
// cursors, tokens, error texts), and the 503s of a Redis and a PostgreSQL that are not there.
#include "api/api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "api/cursor.h"
#include "cold/error.h"
#include "config/config.h"

namespace bk {
namespace {

using json = nlohmann::json;

constexpr const char* kNow = "2026-11-25T12:00:00Z";

const char* kConfig = R"(redis:
  url: redis://127.0.0.1:1
  key_prefix: apitest
boards:
  - name: points
    periods: [daily, weekly]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 30d}
  - name: game:chess
    periods: [daily]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 30d}
)";

const std::string kKey(32, 'k');
const std::string kOtherKey(32, 'o');

redis::Options nowhere() {
  redis::Options o;
  o.port = 1;
  return o;
}

class ApiTest : public ::testing::Test {
 protected:
  Config config = parse_config(kConfig, "api_test.yaml", {});
  // Never connected: a request that reaches a read gets a 503.
  redis::Connection redis{nowhere(), redis::Connect::later};
  service::Leaderboards boards{config, redis, Clock(*parse_rfc3339(kNow))};
  // An archived period's read gets a 503.
  void SetUp() override {
    boards.reads().read_history_from([]() -> cold::History& {
      throw cold::PostgresUnavailable("postgresql 127.0.0.1:1: refused");
    });
  }
  api::Api open{{}, [] { return kKey; }};

  api::Response get(const api::Api& api, const std::string& target,
                    const std::string& authorization = "") {
    return api.handle({"GET", target, authorization, ""}, boards);
  }
  api::Response post(const std::string& target, const std::string& body) {
    return open.handle({"POST", target, "", body}, boards);
  }
  std::string encode(const service::PeriodRef& r, const service::PageMark& m,
                     const std::string& key = kKey) {
    return api::encode_cursor(r, m, key);
  }
  std::optional<service::PageMark> decode(const std::string& cursor,
                                          const std::string& key = kKey) {
    return api::decode_cursor(ref("points", "daily"), cursor, key).mark;
  }
  service::PeriodRef ref(const std::string& board, const std::string& period,
                         const std::string& id = "2026-11-25") {
    return boards.resolve(board, period, id);
  }
};

std::string error_of(const api::Response& r) {
  const json body = json::parse(r.body);
  EXPECT_TRUE(body.is_object() && body.contains("error")) << r.body;
  return body.value("error", "");
}

std::string header(const api::Response& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

bool has_control_byte(const std::string& s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

const std::string kMembers = "/v1/boards/points/daily/members";
const std::string kTop = "/v1/boards/points/daily/top";

// ---- bodies ------------------------------------------------------------------------------

// An unknown board is a 404 that names the board, never the config file's path (which the
// service's message for the CLI does name).
TEST_F(ApiTest, AnUnknownBoardIsA404ThatDoesNotNameTheConfigFile) {
  for (const std::string& target :
       {std::string("/v1/boards/nope/daily/top"), std::string("/v1/boards/nope/periods"),
        std::string("/v1/boards/nope/daily/members/m1/around")}) {
    const api::Response r = get(open, target);
    EXPECT_EQ(r.status, 404) << target;
    EXPECT_NE(error_of(r).find("'nope'"), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find("api_test.yaml"), std::string::npos) << r.body;
  }
  const api::Response r = post(kMembers.substr(0, 11) + "nope/daily/members", R"({"ids": ["a"]})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body.find("api_test.yaml"), std::string::npos) << r.body;
}

// An empty member segment is a malformed member id (400), never a read of member "".
TEST_F(ApiTest, AnEmptyMemberSegmentIsA400) {
  for (const std::string& target : {std::string("/v1/boards/points/daily/members/"),
                                    std::string("/v1/boards/points/daily/members//around")}) {
    const api::Response r = get(open, target);
    EXPECT_EQ(r.status, 400) << target << ": " << r.body;
  }
}

TEST_F(ApiTest, ADeeplyNestedBodyIsA400NotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const api::Response in_ids = post(kMembers, R"({"ids":[)" + deep + "]}");
  EXPECT_EQ(in_ids.status, 400);
  EXPECT_EQ(error_of(in_ids), "every id must be a string, not an array");
  const api::Response elsewhere = post(kMembers, R"({"ids": ["a"], "x": )" + deep + "}");
  EXPECT_EQ(elsewhere.status, 400);
  EXPECT_EQ(error_of(elsewhere), "the body is nested deeper than 8 levels");
  const api::Response objects = post(
      kMembers, R"({"ids": ["a"], "x": )" + [] {
        std::string nested;
        for (int i = 0; i < 100000; ++i) nested += R"({"k":)";
        return nested + "1" + std::string(100000, '}');
      }() + "}");
  EXPECT_EQ(objects.status, 400);
  EXPECT_EQ(error_of(objects), "the body is nested deeper than 8 levels");
}

TEST_F(ApiTest, NestingOfEightIsAcceptedAndNineIsNot) {
  // Depth 8: the body's object, "x"'s array and six more levels.
  const std::string eight = R"({"ids": ["a"], "x": [[[[[[["deep"]]]]]]]})";
  const api::Response ok = post(kMembers, eight);
  EXPECT_EQ(ok.status, 503) << ok.body;  // valid: it went on to read (from no Redis)
  const std::string nine = R"({"ids": ["a"], "x": [[[[[[[["deep"]]]]]]]]})";
  const api::Response no = post(kMembers, nine);
  EXPECT_EQ(no.status, 400) << no.body;
  EXPECT_NE(error_of(no).find("nested deeper than 8"), std::string::npos) << no.body;
}

TEST_F(ApiTest, IdsThatAreNotStringsGetAShortMessageNamingTheirType) {
  const std::string big = R"({"ids": [{"k": ")" + std::string(10000, 'x') + R"("}]})";
  const api::Response r = post(kMembers, big);
  EXPECT_EQ(r.status, 400);
  EXPECT_LT(error_of(r).size(), 200U) << r.body.substr(0, 300);
  EXPECT_NE(error_of(r).find("must be a string, not an object"), std::string::npos);
  const api::Response n = post(kMembers, R"({"ids": ["a", 12]})");
  EXPECT_EQ(n.status, 400);
  EXPECT_NE(error_of(n).find("must be a string, not a number"), std::string::npos) << n.body;
  // Not JSON: nlohmann's reason, without the text it last read.
  const api::Response text = post(kMembers, R"({"ids": [")" + std::string(10000, 'y') + "\x01");
  EXPECT_EQ(text.status, 400);
  EXPECT_LT(error_of(text).size(), 200U) << text.body.substr(0, 300);
  EXPECT_NE(error_of(text).find("the body is not JSON: at byte 10011"), std::string::npos)
      << text.body.substr(0, 300);
  for (const char* shape : {R"([])", R"({"id": []})", R"("ids")", R"({"ids": "a"})"}) {
    EXPECT_EQ(post(kMembers, shape).status, 400) << shape;
  }
  EXPECT_EQ(error_of(post(kMembers, R"({"ids": ["a"], "ids": ["b"]})")), "ids is given twice");
  std::string many = R"({"ids": [)";
  for (int i = 0; i <= 1000; ++i) many += (i == 0 ? "" : ",") + std::string(R"("m")");
  EXPECT_EQ(error_of(post(kMembers, many + "]}")), "at most 1000 ids a request, not 1001");
}

// ---- cursors -----------------------------------------------------------------------------

const Instant kAchieved = *parse_rfc3339("2026-11-25T10:00:00.123Z");

service::PageMark mark_of(const std::string& member) {
  return {42, service::Standing{42, member, 1234, kAchieved}};
}

TEST_F(ApiTest, ACursorRoundTrips) {
  const auto cursor = encode(ref("points", "daily"), mark_of("alice"));
  const auto back = decode(cursor);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->position, 42);
  EXPECT_EQ(back->row.member, "alice");
  EXPECT_EQ(back->row.points, 1234);
  EXPECT_EQ(back->row.achieved_at, kAchieved);
  service::PageMark no_time = mark_of("bob");
  no_time.row.achieved_at.reset();
  const auto back_no_time = decode(encode(ref("points", "daily"), no_time));
  ASSERT_TRUE(back_no_time);
  EXPECT_FALSE(back_no_time->row.achieved_at);
}

TEST_F(ApiTest, ACursorOfAnotherBoardPeriodOrPeriodIdIsRefused) {
  const auto chess = encode(ref("game:chess", "daily"), mark_of("alice"));
  EXPECT_FALSE(decode(chess)) << "another board";
  const auto weekly = encode(ref("points", "weekly", "2026-W48"), mark_of("alice"));
  EXPECT_FALSE(decode(weekly)) << "another period";
  const auto yesterday = encode(ref("points", "daily", "2026-11-24"), mark_of("a"));
  EXPECT_FALSE(decode(yesterday)) << "another period id";
  const api::Response r = get(open, kTop + "?cursor=" + chess);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_of(r),
            "cursor is of a page of game:chess daily 2026-11-25, not of points daily 2026-11-25");
}

TEST_F(ApiTest, ACursorOfAnotherKeyIsRefused) {
  const auto cursor = encode(ref("points", "daily"), mark_of("alice"), kOtherKey);
  EXPECT_FALSE(decode(cursor));
  EXPECT_TRUE(decode(cursor, kOtherKey));
  const api::Response r = get(open, kTop + "?cursor=" + cursor);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(error_of(r).find("cursor is not one that this deployment handed out"),
            std::string::npos)
      << r.body;
}

// The format of the first cursors, with their unkeyed checksum (FNV-1a): anyone could make
// one, so nothing made that way may be accepted.
std::string unkeyed_cursor(const std::string& member) {
  std::string body = std::string("c1") + '\0' + "daily" + '\0' + "2026-11-25" + '\0' + "3" + '\0' +
                     member + '\0' + "10" + '\0';
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : body) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return api::base64url(body + '\0' + hex);
}

TEST_F(ApiTest, ACursorMadeWithoutTheKeyIsRefused) {
  EXPECT_FALSE(decode(unkeyed_cursor("bob")));
  // Its member is not UTF-8: PostgreSQL would refuse to compare it (a 500 once).
  const api::Response r = get(open, kTop + "?cursor=" + unkeyed_cursor("\xff\xfe"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(error_of(r).find("cursor"), std::string::npos) << r.body;
  // Signed with the key (as if it leaked), a member that is not UTF-8 is still refused.
  service::PageMark bad = mark_of("x");
  bad.row.member = "\xff\xfe";
  const api::Response signed_bad =
      get(open, kTop + "?cursor=" + encode(ref("points", "daily"), bad));
  EXPECT_EQ(signed_bad.status, 400) << signed_bad.body;
  EXPECT_NE(error_of(signed_bad).find("cursor: member id is not valid UTF-8"), std::string::npos)
      << signed_bad.body;
}

TEST_F(ApiTest, AlteredTruncatedOrMadeUpCursorsAreRefused) {
  const service::PeriodRef daily = ref("points", "daily");
  const std::string cursor = encode(daily, mark_of("alice"));
  const std::string raw = *api::unbase64url(cursor);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = raw;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      ASSERT_FALSE(decode(api::base64url(flipped))) << i << " " << bit;
    }
  }
  for (std::size_t n = 0; n < cursor.size(); ++n) {
    ASSERT_FALSE(decode(cursor.substr(0, n))) << n;
  }
  for (const std::string& made_up :
       std::vector<std::string>{"", "bm90IGEgY3Vyc29y", "%%%", "AAAA", std::string(3000, 'A')}) {
    EXPECT_FALSE(decode(made_up)) << made_up.substr(0, 20);
  }
  const api::Response r = get(open, kTop + "?cursor=bm90IGEgY3Vyc29y");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(error_of(r).find("cursor"), std::string::npos) << r.body;
}

// ---- tokens ------------------------------------------------------------------------------

TEST_F(ApiTest, TheBearerSchemeIsMatchedInAnyCase) {
  const api::Api guarded({"secret-token"}, [] { return kKey; });
  // Authorized: the request goes on to its parameters (limit=0 is refused: 400, not 401).
  for (const std::string h : {"Bearer secret-token", "bearer secret-token", "BEARER   secret-token",
                              "bEaReR secret-token"}) {
    EXPECT_EQ(get(guarded, kTop + "?limit=0", h).status, 400) << h;
  }
  for (const std::string h : {"Bearersecret-token", "Bearer secret-toke", "Basic secret-token",
                              "secret-token", "Bearer ", "Bearer  secret-token x"}) {
    EXPECT_EQ(get(guarded, kTop + "?limit=0", h).status, 401) << h;
  }
}

TEST_F(ApiTest, A401SaysHowToAuthenticate) {
  const api::Api guarded({"secret-token"}, [] { return kKey; });
  const api::Response none = get(guarded, kTop);
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(header(none, "WWW-Authenticate"), "Bearer");
  EXPECT_NE(error_of(none).find("bearer token"), std::string::npos);
  const api::Response wrong = get(guarded, kTop, "Bearer wrong");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(header(wrong, "WWW-Authenticate"), R"(Bearer error="invalid_token")");
}

// ---- error texts -------------------------------------------------------------------------

TEST_F(ApiTest, ControlBytesInAnErrorTextAreEscapedNotCut) {
  const api::Response id = get(open, kTop + "?period_id=2026-11-25%00%01%1Fx");
  EXPECT_EQ(id.status, 400);
  EXPECT_NE(error_of(id).find(R"('2026-11-25\x00\x01\x1fx' is not a daily period id)"),
            std::string::npos)
      << id.body;
  EXPECT_FALSE(has_control_byte(error_of(id))) << id.body;
  const api::Response period = get(open, "/v1/boards/points/da%00ily/top");
  EXPECT_EQ(period.status, 404);
  EXPECT_NE(error_of(period).find(R"(has no period 'da\x00ily')"), std::string::npos)
      << period.body;
  const api::Response param = get(open, kTop + "?li%00mit=1");
  EXPECT_EQ(param.status, 400);
  EXPECT_NE(error_of(param).find(R"(unknown parameter 'li\x00mit')"), std::string::npos)
      << param.body;
  const api::Response limit = get(open, kTop + "?limit=1%00%0a");
  EXPECT_EQ(limit.status, 400);
  EXPECT_NE(error_of(limit).find(R"(not '1\x00\n')"), std::string::npos) << limit.body;
}

// ---- backends ----------------------------------------------------------------------------

// The lane of a request is decided from its target alone: the reads Redis answers as a rule
// go to one lane, those that need PostgreSQL as a rule to the other, so that neither waits
// for a worker the other holds.
TEST(ApiLaneTest, ReadsThatNeedPostgresAsARuleGoToTheirOwnLane) {
  const std::string b = "/v1/boards/pts/daily";
  for (const std::string& target :
       {b + "/top", b + "/top?limit=10", b + "/members/m1", b + "/members/m1/around?k=3",
        b + "/members/period_id", std::string("/v1/boards"), std::string("/console/")}) {
    EXPECT_EQ(api::lane_of("GET", target), api::Lane::redis) << target;
  }
  for (const std::string& target :
       {b + "/top?period_id=2026-11-19", b + "/top?limit=5&cursor=abc", b + "/members?ids=a,b",
        b + "/members/m1?period_id=2026-11-19", b + "/history", b + "/history?limit=2",
        b + "/top?period%5Fid=2026-11-19", b + "/top?%63ursor=abc",
        std::string("/v1/boards/pts/periods"), std::string("/v1/boards/pts/bans")}) {
    EXPECT_EQ(api::lane_of("GET", target), api::Lane::postgres) << target;
  }
  EXPECT_EQ(api::lane_of("POST", b + "/members"), api::Lane::postgres);
  EXPECT_EQ(api::lane_of("DELETE", b + "/members/m1"), api::Lane::postgres);
  EXPECT_EQ(api::lane_of("PUT", "/v1/boards/pts/bans/m1"), api::Lane::postgres);
}

TEST_F(ApiTest, AnUnreachableBackendIsA503NamingItsKindNotItsAddress) {
  const api::Response redis_down = get(open, kTop);
  EXPECT_EQ(redis_down.status, 503);
  EXPECT_EQ(error_of(redis_down), "Redis is unreachable");
  EXPECT_EQ(header(redis_down, "Retry-After"), "1");
  const api::Response pg_down = get(open, kTop + "?period_id=2026-11-20");
  EXPECT_EQ(pg_down.status, 503);
  EXPECT_EQ(error_of(pg_down), "PostgreSQL is unreachable");
  EXPECT_EQ(header(pg_down, "Retry-After"), "1");
}

// A backend that took the call but did not answer by the request's deadline (cold's
// PostgresTimeout, redis's TimeoutError) is told apart from a refusal: the answer says it did
// not answer in time, asks for a longer wait, and is marked hung so that serve does not spend
// a second deadline on fresh connections. Its address stays in the log.
TEST_F(ApiTest, AHungBackendIsA503SayingItDidNotAnswerInTime) {
  const api::Api api({}, []() -> std::string {
    throw cold::PostgresTimeout(
        "postgresql at 127.0.0.1:5/db: reading: no answer within the call's deadline");
  });
  const api::Response r =
      get(api, kTop + "?cursor=" + encode(ref("points", "daily"), mark_of("a")));
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(error_of(r),
            "PostgreSQL did not answer in time (it may be hung); the read was abandoned");
  EXPECT_EQ(header(r, "Retry-After"), "5");
  EXPECT_EQ(r.hung, Backend::postgres);
  EXPECT_EQ(r.body.find("127.0.0.1"), std::string::npos) << r.body;
  const api::Response refused = get(open, kTop);
  EXPECT_EQ(refused.hung, Backend::none);
}

// The cursor key's provider (PostgreSQL) fails: that request is a 503 naming PostgreSQL, and
// the provider is asked again by the next one, until it answers; then never again.
TEST_F(ApiTest, TheCursorKeyIsAskedForUntilItIsHad) {
  std::atomic<int> asked{0};
  std::atomic<bool> down{true};
  const api::Api api({}, [&] {
    ++asked;
    if (down) throw cold::PostgresUnavailable("postgresql 127.0.0.1:1: refused");
    return kKey;
  });
  const std::string target = kTop + "?cursor=" + encode(ref("points", "daily"), mark_of("a"));
  const api::Response first = get(api, target);
  EXPECT_EQ(first.status, 503);
  EXPECT_EQ(error_of(first), "PostgreSQL is unreachable");
  EXPECT_EQ(header(first, "Retry-After"), "1");
  EXPECT_EQ(get(api, target).status, 503);
  EXPECT_EQ(asked, 2);
  down = false;
  // The cursor is good now; the read after it needs Redis, which is not there.
  EXPECT_EQ(error_of(get(api, target)), "Redis is unreachable");
  EXPECT_EQ(error_of(get(api, target)), "Redis is unreachable");
  EXPECT_EQ(asked, 3);
}

TEST_F(ApiTest, AShortOrUnobtainableCursorKeyIsAServerFaultNotAClientOne) {
  const api::Api short_key({}, [] { return std::string(31, 'k'); });
  const std::string target = kTop + "?cursor=" + encode(ref("points", "daily"), mark_of("a"));
  EXPECT_THROW(get(short_key, target), Error);
  const api::Api unmigrated({}, []() -> std::string { throw UsageError("not migrated"); });
  EXPECT_THROW(get(unmigrated, target), Error);  // the server answers 500, and logs it
}

}  // namespace
}  // namespace bk
