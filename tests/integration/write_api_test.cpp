// Scores in over HTTP: POST /v1/boards/{board}/members/{member}/scores through a running
// serve with real Redis and PostgreSQL. The answer is the member's standing in every period
// the event touched, exact against the reads also for spilled members; a refused event is a
// 4xx naming its reason with nothing applied; an event id applies once; write tokens are
// their own kind, scoped to boards, and writes are off without them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "harness.h"
#include "served.h"
#include "write_fixture.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;
using test::kAdmin;
using test::kBoards;
using test::kNow;
using test::kReader;
using test::kScoped;
using test::kWriter;
using test::Served;
using test::WriteApiTest;

TEST_F(WriteApiTest, AWriteAnswersTheStandingInEveryPeriodItTouched) {
  Served s = serve();
  ASSERT_EQ(write(s, "pts", "ann", {{"value", 10}}).status, 200);
  ASSERT_EQ(write(s, "pts", "bob", {{"value", 20}, {"name", "Bob"}}).status, 200);
  const Answer a = write(s, "pts", "ann", {{"value", 15}, {"metadata", {{"lvl", 3}}}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body.at("board"), "pts");
  EXPECT_EQ(a.body.at("member"), "ann");
  EXPECT_EQ(a.body.at("applied"), true);
  EXPECT_FALSE(a.body.contains("duplicate"));
  ASSERT_EQ(a.body.at("periods").size(), 2U) << a.text;
  for (const char* period : {"daily", "weekly"}) {
    const json p = period_of(a, period);
    EXPECT_EQ(p.at("points"), 25);
    EXPECT_EQ(p.at("rank"), 1);
    EXPECT_EQ(p.at("previous_rank"), 2);
    EXPECT_FALSE(p.contains("improved"));  // an increment board
    EXPECT_EQ(p.at("rank"), read_rank(s, "pts", period, "ann"));
  }
  EXPECT_EQ(period_of(a, "daily").at("period_id"), "2026-11-25");
  EXPECT_EQ(period_of(a, "weekly").at("period_id"), "2026-W48");
  const Answer first = write(s, "pts", "cat", {{"value", 1}});
  EXPECT_FALSE(period_of(first, "daily").contains("previous_rank")) << first.text;
}

TEST_F(WriteApiTest, RanksAreExactForSpilledMembersAndAroundThem) {
  Served s = serve();
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(write(s, "pts", "m" + std::to_string(i), {{"value", 100 + 10 * i}}).status, 200);
  }
  ASSERT_EQ(test::run_cli({"--config", config_path, "--now", kNow, "tick"}).exit_code, 0);
  // m0..m5 spilled (hot_keep 2), as the periods route says: the ranks below are of spilled
  // members. m1 scores again, rehydrated, to 115: between m0 (100) and m2 (120).
  const Answer periods = s.get("/v1/boards/pts/periods", as(kReader));
  ASSERT_EQ(periods.status, 200) << periods.text;
  EXPECT_EQ(periods.body.at("periods").at(0).at("cold_members"), 6) << periods.text;
  const Answer a = write(s, "pts", "m1", {{"value", 5}});
  ASSERT_EQ(a.status, 200) << a.text;
  const json daily = period_of(a, "daily");
  EXPECT_EQ(daily.at("points"), 115);
  EXPECT_EQ(daily.at("previous_rank"), 7);
  EXPECT_EQ(daily.at("rank"), 7);
  EXPECT_EQ(daily.at("rank"), read_rank(s, "pts", "daily", "m1"));
  // m0, spilled, to 160: past m5 (150), and before m6 (160 at the same instant: "m0" < "m6").
  const Answer b = write(s, "pts", "m0", {{"value", 60}});
  EXPECT_EQ(period_of(b, "daily").at("rank"), 2) << b.text;
  EXPECT_EQ(period_of(b, "daily").at("previous_rank"), 8) << b.text;
  EXPECT_EQ(read_rank(s, "pts", "daily", "m0"), 2);
}

// A write's standings come from its own script call: a write of a hot member is one call on
// serve's shared Redis connection, however many periods the board has. Ranks stay exact
// beyond the hot part (a rehydrated member that scores again) and for a duplicate whose
// member went cold again.
TEST_F(WriteApiTest, AHotMembersWriteIsOneRedisRoundTripAndItsRanksStayExact) {
  Served s = serve();
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(write(s, "pts", "m" + std::to_string(i), {{"value", 100 + 10 * i}}).status, 200);
  }
  ASSERT_EQ(test::run_cli({"--config", config_path, "--now", kNow, "tick"}).exit_code, 0);
  const auto calls = [&] {
    const std::string text = s.get("/metrics").text;
    const std::string name = "\nboardkeeper_redis_shared_calls_total ";
    const auto at = text.find(name);
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size()));
  };
  // m7 (170) is hot, first in both periods (m6 too; m0..m5 spilled).
  const double before = calls();
  const Answer hot = write(s, "pts", "m7", {{"value", 1}});
  EXPECT_EQ(calls() - before, 1) << "Redis calls for one write of a hot member";
  for (const char* period : {"daily", "weekly"}) {
    EXPECT_EQ(period_of(hot, period).at("rank"), 1) << hot.text;
    EXPECT_EQ(period_of(hot, period).at("previous_rank"), 1) << hot.text;
  }
  // m1 (110, spilled) rehydrates to 115: 7th. Hot now, but below what spilled (beyond the
  // hot part): to 116 it stays 7th; to 166 it passes m6 (160), from 7th to 2nd.
  ASSERT_EQ(period_of(write(s, "pts", "m1", {{"value", 5}}), "daily").at("rank"), 7);
  const Answer beyond = write(s, "pts", "m1", {{"value", 1}});
  const Answer up = write(s, "pts", "m1", {{"value", 50}});
  for (const char* period : {"daily", "weekly"}) {
    EXPECT_EQ(period_of(beyond, period).at("previous_rank"), 7) << beyond.text;
    EXPECT_EQ(period_of(beyond, period).at("rank"), 7) << beyond.text;
    EXPECT_EQ(period_of(up, period).at("previous_rank"), 7) << up.text;
    EXPECT_EQ(period_of(up, period).at("rank"), 2) << up.text;
    EXPECT_EQ(period_of(up, period).at("rank"), read_rank(s, "pts", period, "m1"));
  }
  // m3 (130, spilled) scores with an id (rehydrated: 135), goes cold again at the next tick,
  // and the retry finds it there.
  const json keyed = {{"value", 5}, {"id", "e-m3"}};
  const Answer first = write(s, "pts", "m3", keyed);
  ASSERT_EQ(first.body.at("applied"), true) << first.text;
  ASSERT_EQ(test::run_cli({"--config", config_path, "--now", kNow, "tick"}).exit_code, 0);
  const Answer retry = write(s, "pts", "m3", keyed);
  EXPECT_EQ(retry.body.at("duplicate"), true) << retry.text;
  for (const char* period : {"daily", "weekly"}) {
    EXPECT_EQ(period_of(retry, period).at("points"), 135) << retry.text;
    EXPECT_EQ(period_of(retry, period).at("rank"), period_of(first, period).at("rank"));
    EXPECT_EQ(period_of(retry, period).at("rank"), read_rank(s, "pts", period, "m3"));
  }
}

// The CLI and the API agree: add --json prints the object the write answers.
TEST_F(WriteApiTest, AddJsonPrintsWhatTheWriteAnswers) {
  Served s = serve();
  ASSERT_EQ(write(s, "pts", "bob", {{"value", 30}}).status, 200);
  const test::RunResult r = test::run_cli(
      {"--config", config_path, "--now", kNow, "add", "pts", "ann", "20", "--id", "e7", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json cli = json::parse(r.out);
  EXPECT_EQ(cli.at("applied"), true);
  EXPECT_EQ(cli.at("periods").at(0).at("rank"), 2) << r.out;
  const Answer again = write(s, "pts", "ann", {{"value", 20}, {"id", "e7"}});
  EXPECT_EQ(again.body.at("duplicate"), true) << again.text;
  json expected = cli;
  expected["applied"] = false;
  expected["duplicate"] = true;
  for (json& p : expected["periods"]) p.erase("previous_rank");
  EXPECT_EQ(again.body, expected);
}

TEST_F(WriteApiTest, ABestBoardSaysWhetherTheEventRaisedTheBest) {
  Served s = serve();
  EXPECT_EQ(period_of(write(s, "best", "ann", {{"value", 50}}), "daily").at("improved"), true);
  const Answer lower = write(s, "best", "ann", {{"value", 40}});
  EXPECT_EQ(period_of(lower, "daily").at("improved"), false) << lower.text;
  EXPECT_EQ(period_of(lower, "daily").at("points"), 50);
  EXPECT_EQ(period_of(write(s, "best", "ann", {{"value", 70}}), "daily").at("improved"), true);
}

TEST_F(WriteApiTest, AnEventIdAppliesOnceAndARetryGetsTheStanding) {
  Served s = serve();
  const json body = {{"value", 7}, {"id", "match-41"}};
  ASSERT_EQ(write(s, "pts", "ann", body).body.at("applied"), true);
  const Answer again = write(s, "pts", "ann", body);
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body.at("applied"), false);
  EXPECT_EQ(again.body.at("duplicate"), true);
  EXPECT_EQ(period_of(again, "daily").at("points"), 7);
  EXPECT_EQ(period_of(again, "daily").at("rank"), 1);
}

// A write refused for a reason: its member, its body, the status and reason it answers.
struct Refusal {
  std::string member;
  nlohmann::json body;
  int status;
  const char* reason;
};

// One write refused for each reason the update path gives (ann holds 10 points; cheat is
// banned).
std::vector<Refusal> refusals() {
  return {
      {"ann", {{"value", 10}, {"at", "2026-11-01T12:00:00Z"}}, 409, "closed"},
      {"ann", {{"value", 5000}}, 422, "out_of_range"},
      {"ann", {{"value", 1}, {"at", "2026-11-25T13:00:00Z"}}, 422, "too_early"},
      {"cheat", {{"value", 1}}, 403, "banned"},
      {"ann",
       {{"value", 1}, {"metadata", {{"x", std::string(3000, 'x')}}}},
       422,
       "invalid_profile"},
  };
}

TEST_F(WriteApiTest, ARefusedEventIsA4xxNamingItsReasonAndAppliesNothing) {
  Served s = serve();
  ASSERT_EQ(write(s, "pts", "ann", {{"value", 10}}).status, 200);
  ASSERT_EQ(s.put("/v1/boards/pts/bans/cheat", as(kAdmin), R"({"reason": "aimbot"})").status, 200);
  for (const Refusal& c : refusals()) {
    const Answer a = write(s, "pts", c.member, c.body);
    EXPECT_EQ(a.status, c.status) << c.body.dump() << ": " << a.text;
    EXPECT_NE(test::error_of(a).find(std::string("(") + c.reason + ")"), std::string::npos)
        << a.text;
  }
  EXPECT_EQ(read_rank(s, "pts", "daily", "cheat"), nullptr);
  const Answer ann = s.get("/v1/boards/pts/daily/members/ann", as(kReader));
  EXPECT_EQ(ann.body.at("points"), 10) << ann.text;
  EXPECT_EQ(write(s, "nope", "ann", {{"value", 1}}).status, 404);
  // A time no period can hold is refused, before any period arithmetic is done on it.
  const Answer far = s.post("/v1/boards/pts/members/ann/scores",
                            R"({"value": 1, "at": 9223372036854775807})", as(kWriter));
  EXPECT_EQ(far.status, 422) << far.text;
  EXPECT_NE(test::error_of(far).find("(invalid_time)"), std::string::npos) << far.text;
  for (const std::string& body :
       {std::string("{}"), std::string(R"({"value": 1.5})"), std::string(R"({"value": "1"})"),
        std::string(R"({"value": 1, "extra": 2})"), std::string(R"({"value": 1, "at": true})"),
        std::string("[1]"), std::string("{"),
        std::string(R"({"value": 18446744073709551615})"),  // not -1
        std::string(R"({"value": 1, "at": 18446744073709551615})"),
        std::string(R"({"value": 1, "id": ""})"),
        std::string(R"({"value": 1, "metadata": {"a": "\"", "b": )") + std::string(20, '[') +
            std::string(20, ']') + "}}",  // an escaped quote does not end the string
        std::string(R"({"value": 1, "metadata": [)") + std::string(20, '[') + std::string(20, ']') +
            "]}"}) {
    const Answer a = s.post("/v1/boards/pts/members/ann/scores", body, as(kWriter));
    EXPECT_EQ(a.status, 400) << body << ": " << a.text;
  }
  EXPECT_EQ(s.post("/v1/boards/pts/members/ann/scores?x=1", R"({"value": 1})", as(kWriter)).status,
            400);
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members/ann", as(kReader)).body.at("points"), 10);
  // Each write that reached the update path is counted by outcome and reason.
  const std::string metrics = s.get("/metrics").text;
  for (const std::string& line :
       {std::string(R"(boardkeeper_http_writes_total{outcome="applied",reason=""} 1)"),
        std::string(R"(boardkeeper_http_writes_total{outcome="refused",reason="closed"} 1)"),
        std::string(R"(boardkeeper_http_writes_total{outcome="refused",reason="banned"} 1)")}) {
    EXPECT_NE(metrics.find(line), std::string::npos) << line << "\n" << metrics;
  }
}

TEST_F(WriteApiTest, WriteTokensAreTheirOwnKindAndKeepToTheirBoards) {
  Served s = serve();
  EXPECT_EQ(write(s, "pts", "ann", {{"value", 1}}, kReader).status, 403);
  EXPECT_EQ(write(s, "pts", "ann", {{"value", 1}}, kAdmin).status, 403);
  EXPECT_EQ(write(s, "pts", "ann", {{"value", 1}}, "made-up").status, 401);
  EXPECT_EQ(s.post("/v1/boards/pts/members/ann/scores", R"({"value": 1})").status, 401);
  EXPECT_EQ(s.get("/v1/boards/pts/daily/top", as(kWriter)).status, 403);  // writes only
  const Answer outside = write(s, "pts", "ann", {{"value", 1}}, kScoped);
  EXPECT_EQ(outside.status, 403) << outside.text;
  EXPECT_NE(test::error_of(outside).find("'pts'"), std::string::npos) << outside.text;
  EXPECT_EQ(write(s, "best", "ann", {{"value", 1}}, kScoped).status, 200);
  EXPECT_EQ(write(s, "other", "ann", {{"value", 1}}, kScoped).status, 200);
  EXPECT_EQ(read_rank(s, "pts", "daily", "ann"), nullptr) << "refused writes applied nothing";
  const std::string text = test::read_file(log);
  for (const std::string& secret : {kWriter, kScoped, kReader, kAdmin})
    EXPECT_EQ(text.find(secret), std::string::npos) << secret;
}

TEST_F(WriteApiTest, WritesAreOffWithoutWriteTokensAndASourceWithoutOneStopsServe) {
  const std::string plain =
      test::write_text_config(prefix + "-plain", test::config_text(prefix, kBoards));
  {
    Served s(plain, log, kNow);
    const Answer a = s.post("/v1/boards/pts/members/ann/scores", R"({"value": 1})");
    EXPECT_EQ(a.status, 404) << a.text;
    EXPECT_NE(test::error_of(a).find("writes are off"), std::string::npos) << a.text;
  }
  std::ofstream(tokens_file) << "# nothing\n";
  test::RunResult r = test::run_cli({"--config", config_path, "serve", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("names no token"), std::string::npos) << r.err;
  r = test::run_cli({"--config", plain, "serve", "--listen", "127.0.0.1:0"},
                    {"BOARDKEEPER_SERVE_WRITE_TOKENS= , "});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  std::ofstream(tokens_file) << kWriter << " scope=pts\n";
  r = test::run_cli({"--config", config_path, "serve", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(tokens_file + ":1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(kWriter), std::string::npos) << r.err;
  for (const std::string& env : {"BOARDKEEPER_SERVE_WRITE_TOKENS=" + kWriter + " boards=pts",
                                 "BOARDKEEPER_SERVE_WRITE_TOKENS=" + kWriter + "," + kWriter}) {
    r = test::run_cli({"--config", plain, "serve", "--listen", "127.0.0.1:0"}, {env});
    EXPECT_EQ(r.exit_code, 2) << env << ": " << r.err;
    EXPECT_EQ(r.err.find(kWriter), std::string::npos) << r.err;
  }
  r = test::run_cli(
      {"--config", plain, "serve", "--listen", "127.0.0.1:0"},
      {"BOARDKEEPER_SERVE_WRITE_TOKENS=" + kReader, "BOARDKEEPER_SERVE_TOKENS=" + kReader});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find(kReader), std::string::npos) << r.err;
}

}  // namespace
}  // namespace bk
