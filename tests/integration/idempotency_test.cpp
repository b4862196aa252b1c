// Idempotency of the score write (docs/http-api.md, "Idempotency"), through a running serve
// with real Redis and PostgreSQL: an Idempotency-Key (or the body's id) applies once within
// the board's dedupe window, a retry answers duplicate with the current standing, the same key
// with another request is a 422 with nothing applied, two identical keyed requests sent at
// once apply once, and an id that `add` (or ingest) applied, with no fingerprint, answers
// duplicate to a keyed HTTP write whatever its body.
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "harness.h"
#include "served.h"
#include "write_fixture.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;
using test::kNow;
using test::kReader;
using test::kWriter;
using test::Served;
using test::WriteApiTest;

using IdempotencyTest = WriteApiTest;

httplib::Headers keyed(const std::string& key) {
  return {{"Authorization", "Bearer " + kWriter}, {"Idempotency-Key", key}};
}

Answer send(Served& s, const std::string& member, const json& body, const std::string& key) {
  return s.post("/v1/boards/pts/members/" + member + "/scores", body.dump(), keyed(key));
}

TEST_F(IdempotencyTest, AKeyAppliesOnceAndARetryAnswersTheCurrentStanding) {
  Served s = serve();
  const Answer first = send(s, "ann", {{"value", 10}}, "\"match-1:ann\"");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body.at("applied"), true);
  ASSERT_EQ(write(s, "pts", "bob", {{"value", 30}}).status, 200);
  const Answer retry = send(s, "ann", {{"value", 10}}, "\"match-1:ann\"");
  ASSERT_EQ(retry.status, 200) << retry.text;
  EXPECT_EQ(retry.body.at("applied"), false);
  EXPECT_EQ(retry.body.at("duplicate"), true);
  const json daily = period_of(retry, "daily");
  EXPECT_EQ(daily.at("points"), 10) << "applied once";
  EXPECT_EQ(daily.at("rank"), 2) << "the standing now, below bob";
  // The bare spelling of the same key, and the body's id naming it, are the same key.
  EXPECT_EQ(send(s, "ann", {{"value", 10}}, "match-1:ann").body.at("duplicate"), true);
  EXPECT_EQ(write(s, "pts", "ann", {{"value", 10}, {"id", "match-1:ann"}}).body.at("duplicate"),
            true);
  EXPECT_EQ(read_rank(s, "pts", "daily", "ann"), 2);
}

TEST_F(IdempotencyTest, TheSameKeyWithAnotherRequestIsA422AndAppliesNothing) {
  Served s = serve();
  ASSERT_EQ(send(s, "ann", {{"value", 10}, {"name", "Ann"}}, "k-7").status, 200);
  for (const json& other : {json{{"value", 11}, {"name", "Ann"}}, json{{"value", 10}},
                            json{{"value", 10}, {"name", "Ann"}, {"at", kNow}}}) {
    const Answer a = send(s, "ann", other, "k-7");
    EXPECT_EQ(a.status, 422) << other.dump() << " " << a.text;
    EXPECT_NE(a.text.find("key_reused"), std::string::npos) << a.text;
  }
  EXPECT_EQ(send(s, "bob", {{"value", 10}, {"name", "Ann"}}, "k-7").status, 422)
      << "another member is another request";
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members/ann", as(kReader)).body.at("points"), 10);
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members/bob", as(kReader)).status, 404);
  // A header and a body id that differ: which would be the key? Neither is taken.
  const Answer both = send(s, "ann", {{"value", 1}, {"id", "other"}}, "k-8");
  EXPECT_EQ(both.status, 400) << both.text;
  for (const std::string& bad :
       std::vector<std::string>{"\"\"", "a b", std::string(256, 'k'), "\"caf\xc3\xa9\""}) {
    EXPECT_EQ(send(s, "ann", {{"value", 1}}, bad).status, 400) << bad;
  }
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members/ann", as(kReader)).body.at("points"), 10);
}

// A request refused before any server was asked (here: an event time far ahead) binds
// nothing: corrected, it may be sent again with its key.
TEST_F(IdempotencyTest, ARequestRefusedByValidationLeavesItsKeyFree) {
  Served s = serve();
  const Answer early = send(s, "ann", {{"value", 5}, {"at", "2027-06-01T00:00:00Z"}}, "k-9");
  ASSERT_EQ(early.status, 422) << early.text;
  const Answer fixed = send(s, "ann", {{"value", 5}}, "k-9");
  ASSERT_EQ(fixed.status, 200) << fixed.text;
  EXPECT_EQ(fixed.body.at("applied"), true);
}

// Two identical keyed requests at the same moment: one applies, the other is its duplicate
// (20 tries, each with a fresh key).
TEST_F(IdempotencyTest, IdenticalKeyedRequestsSentAtOnceApplyOnce) {
  Served s1 = serve();
  Served s2 = serve();
  for (int i = 0; i < 20; ++i) {
    const std::string key = "race-" + std::to_string(i);
    auto one = std::async(std::launch::async, [&] { return send(s1, "ann", {{"value", 1}}, key); });
    auto two = std::async(std::launch::async, [&] { return send(s2, "ann", {{"value", 1}}, key); });
    const Answer a = one.get(), b = two.get();
    ASSERT_EQ(a.status, 200) << a.text;
    ASSERT_EQ(b.status, 200) << b.text;
    EXPECT_NE(a.body.at("applied"), b.body.at("applied")) << a.text << "\n" << b.text;
  }
  EXPECT_EQ(s1.get("/v1/boards/pts/daily/members/ann", as(kReader)).body.at("points"), 20);
}

// `add --id` and ingest apply event ids without a request fingerprint: the key's first HTTP
// request cannot be told from a retry, so it answers duplicate whatever it holds (another
// value, another member), applies nothing, and binds the key to its own fingerprint.
TEST_F(IdempotencyTest, AnIdAppliedWithoutAFingerprintAnswersDuplicateWhateverTheBody) {
  for (const char* id : {"match-3:ann", "match-4:ann"}) {
    ASSERT_EQ(test::run_cli(
                  {"--config", config_path, "--now", kNow, "add", "pts", "ann", "5", "--id", id})
                  .exit_code,
              0);
  }
  Served s = serve();
  // Another value under one id, another member under the other: neither is applied.
  for (const auto& [member, key] : std::vector<std::pair<std::string, std::string>>{
           {"ann", "match-3:ann"}, {"bob", "match-4:ann"}}) {
    const Answer a = send(s, member, {{"value", 9}}, key);
    ASSERT_EQ(a.status, 200) << member << " " << a.text;
    EXPECT_EQ(a.body.at("applied"), false) << a.text;
    EXPECT_EQ(a.body.at("duplicate"), true) << a.text;
  }
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members/ann", as(kReader)).body.at("points"), 10);
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members/bob", as(kReader)).status, 404);
  // The first HTTP request bound the key to its fingerprint: another one is now a 422.
  EXPECT_EQ(send(s, "ann", {{"value", 11}}, "match-3:ann").status, 422);
  EXPECT_EQ(send(s, "ann", {{"value", 9}}, "match-3:ann").body.at("duplicate"), true);
}

TEST_F(IdempotencyTest, AWriteNeedsAJsonContentType) {
  Served s = serve();
  for (const char* type :
       {"text/plain", "application/x-www-form-urlencoded", "application/jsonx"}) {
    const Answer a =
        s.post_typed("/v1/boards/pts/members/ann/scores", R"({"value": 1})", as(kWriter), type);
    EXPECT_EQ(a.status, 415) << type << " " << a.text;
  }
  const Answer charset = s.post_typed("/v1/boards/pts/members/ann/scores", R"({"value": 2})",
                                      as(kWriter), "Application/JSON; charset=utf-8");
  EXPECT_EQ(charset.status, 200) << charset.text;
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members/ann", as(kReader)).body.at("points"), 2);
}

}  // namespace
}  // namespace bk
