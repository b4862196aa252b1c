// Batch writes over HTTP (docs/http-api.md, "Batches"): POST /v1/events through a running serve
// with real Redis and PostgreSQL. One result per event in order, refusals in the middle not
// stopping the rest, a member's events in their order, standings after the whole batch exact
// against the reads, the write token's scope for every event's board, and an Idempotency-Key
// that keys the batch's events; an answer's size within its documented bound.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"
#include "served.h"
#include "write_fixture.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;
using test::kReader;
using test::kScoped;
using test::kWriter;
using test::Served;
using test::WriteApiTest;

using BatchApiTest = WriteApiTest;

Answer batch(Served& s, const json& events, const std::string& query = "",
             const std::string& token = kWriter, const std::string& key = "") {
  httplib::Headers h{{"Authorization", "Bearer " + token}};
  if (!key.empty()) h.emplace("Idempotency-Key", key);
  return s.post("/v1/events" + query, json{{"events", events}}.dump(), h);
}

json event(const std::string& board, const std::string& member, std::int64_t value) {
  return {{"board", board}, {"member", member}, {"value", value}};
}

json points_of(Served& s, const std::string& member) {
  const Answer a =
      s.get("/v1/boards/pts/daily/members/" + member, {{"Authorization", "Bearer " + kReader}});
  return a.status == 200 ? a.body.at("points") : json(nullptr);
}

TEST_F(BatchApiTest, OneResultPerEventInOrderARefusalInTheMiddleStopsNothing) {
  Served s = serve();
  json closed = event("pts", "ann", 1);
  closed["at"] = "2026-11-01T12:00:00Z";
  const Answer a =
      batch(s, {event("pts", "ann", 10), event("pts", "bob", 5000), event("pts", "ann", 5),
                event("nope", "cat", 1), closed, event("pts", "bob", 7)});
  ASSERT_EQ(a.status, 200) << a.text;
  const json& r = a.body.at("results");
  ASSERT_EQ(r.size(), 6U) << a.text;
  EXPECT_EQ(r[0].at("applied"), true);
  EXPECT_EQ(r[0].at("periods").at(0).at("points"), 10);
  EXPECT_EQ(r[1].at("applied"), false);
  EXPECT_EQ(r[1].at("status"), 422);
  EXPECT_EQ(r[1].at("reason"), "out_of_range");
  EXPECT_EQ(r[2].at("periods").at(0).at("points"), 15);
  EXPECT_EQ(r[3].at("status"), 404);
  EXPECT_EQ(r[3].at("reason"), "unknown_board");
  EXPECT_EQ(r[3].at("error"), "no board entry matches board 'nope'")
      << "the config file's path is no client's business";
  EXPECT_EQ(r[4].at("status"), 409);
  EXPECT_EQ(r[5].at("applied"), true);
  EXPECT_FALSE(r[0].at("periods").at(0).contains("rank")) << "ranks only when asked";
  EXPECT_EQ(a.body.at("applied"), 3);
  EXPECT_EQ(a.body.at("refused"), 3);
  EXPECT_EQ(points_of(s, "ann"), 15);
  EXPECT_EQ(points_of(s, "bob"), 7);
}

// ann's +900 then +200 (past max_points 1000): the second is refused; sent the other way
// round, the first would be. A member's events keep their order, also among others'.
TEST_F(BatchApiTest, AMembersEventsKeepTheirOrder) {
  Served s = serve();
  const Answer a = batch(s, {event("pts", "ann", 900), event("pts", "bob", 1),
                             event("pts", "ann", 200), event("pts", "ann", 50)});
  ASSERT_EQ(a.status, 200) << a.text;
  const json& r = a.body.at("results");
  EXPECT_EQ(r[0].at("applied"), true);
  EXPECT_EQ(r[2].at("reason"), "out_of_range");
  EXPECT_EQ(r[3].at("periods").at(0).at("points"), 950);
  EXPECT_EQ(points_of(s, "ann"), 950);
}

TEST_F(BatchApiTest, StandingsAfterTheBatchAreExactAgainstTheReads) {
  Served s = serve();
  json events = json::array();
  for (int i = 0; i < 8; ++i) events.push_back(event("pts", "m" + std::to_string(i), 10 * i + 1));
  ASSERT_EQ(batch(s, events).status, 200);
  ASSERT_EQ(test::run_cli({"--config", config_path, "--now", test::kNow, "tick"}).exit_code, 0);
  // m1 (spilled) rises past m6; m7 (hot) moves too; m3's event is a duplicate of none.
  const Answer a = batch(s, {event("pts", "m1", 60), event("pts", "m7", 1), event("pts", "m1", 5)},
                         "?standings=true");
  ASSERT_EQ(a.status, 200) << a.text;
  for (const json& r : a.body.at("results")) {
    for (const json& p : r.at("periods")) {
      EXPECT_EQ(p.at("rank"), read_rank(s, "pts", p.at("period"), r.at("member"))) << a.text;
    }
  }
  EXPECT_EQ(a.body.at("results").at(0).at("periods").at(0).at("points"), 76)
      << "the standing after the whole batch";
  EXPECT_EQ(batch(s, {event("pts", "m1", 1)}, "?standings=maybe").status, 400);
  EXPECT_EQ(batch(s, {event("pts", "m1", 1)}, "?other=1").status, 400);
}

TEST_F(BatchApiTest, EveryEventsBoardMustBeInTheTokensScopeOrNothingApplies) {
  Served s = serve();
  const Answer a = batch(s, {event("best", "ann", 10), event("pts", "ann", 10)}, "", kScoped);
  EXPECT_EQ(a.status, 403) << a.text;
  EXPECT_NE(a.text.find("events[1]"), std::string::npos) << a.text;
  EXPECT_EQ(
      s.get("/v1/boards/best/daily/members/ann", {{"Authorization", "Bearer " + kReader}}).status,
      404);
  EXPECT_EQ(batch(s, {event("best", "ann", 10), event("other", "ann", 1)}, "", kScoped).status,
            200);
  EXPECT_EQ(batch(s, {event("pts", "ann", 1)}, "", kReader).status, 403);
  EXPECT_EQ(
      s.post("/v1/events", R"({"events": [{"board": "pts", "member": "a", "value": 1}]})").status,
      401);
}

TEST_F(BatchApiTest, AnIdempotencyKeyKeysTheBatchsEvents) {
  Served s = serve();
  const json events = {event("pts", "ann", 10), event("pts", "bob", 20)};
  const Answer first = batch(s, events, "", kWriter, "\"match-9\"");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body.at("applied"), 2);
  const Answer again = batch(s, events, "?standings=true", kWriter, "\"match-9\"");
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body.at("duplicate"), 2);
  EXPECT_EQ(again.body.at("results").at(0).at("periods").at(0).at("points"), 10);
  // Another batch under the key, even one holding the first's events shifted by a new one
  // (each event then sits at another index), is refused whole: nothing applies twice.
  for (const json& other :
       {json{event("pts", "ann", 11), event("pts", "bob", 20)},
        json{event("pts", "cat", 5), event("pts", "ann", 10), event("pts", "bob", 20)}}) {
    const Answer changed = batch(s, other, "", kWriter, "\"match-9\"");
    EXPECT_EQ(changed.status, 422) << changed.text;
    EXPECT_NE(changed.text.find("key_reused"), std::string::npos) << changed.text;
  }
  EXPECT_EQ(points_of(s, "ann"), 10);
  EXPECT_EQ(points_of(s, "bob"), 20);
  EXPECT_EQ(points_of(s, "cat"), nullptr);
}

// The heaviest answer: 1,000 refused events whose member is 512 DEL characters (1 byte each
// in the body, 6 escaped in the answer, where the member and the error naming it repeat it).
// The documented bound: about 7 KiB an event plus 100 bytes per event and period.
TEST_F(BatchApiTest, AnAnswerWeighsAtMostAbout7KiBAnEvent) {
  Served s = serve();
  json events = json::array();
  for (int i = 0; i < 1000; ++i) events.push_back(event("pts", std::string(512, '\x7f'), 5000));
  const Answer a =
      s.post("/v1/events?standings=true", json{{"events", events}}.dump(), as(kWriter));
  ASSERT_EQ(a.status, 200) << a.text.substr(0, 500);
  EXPECT_EQ(a.body.at("refused"), 1000);
  EXPECT_GT(a.text.size(), 1000U * 6 * 1024) << "the heaviest case, or the bound says little";
  EXPECT_LE(a.text.size(), 1000U * (7 * 1024 + 100 * 2));
}

TEST_F(BatchApiTest, AMalformedEventRefusesTheBatchNamingIt) {
  Served s = serve();
  json many = json::array();
  for (int i = 0; i < 1001; ++i) many.push_back(event("pts", "m", 1));
  EXPECT_EQ(batch(s, many).status, 400);
  EXPECT_EQ(batch(s, json::array()).status, 400);
  const Answer bad = batch(s, {event("pts", "ann", 1), {{"board", "pts"}, {"value", 1}}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.text.find("events[1]"), std::string::npos) << bad.text;
  EXPECT_EQ(
      batch(s, {event("pts", "ann", 1), json{{"board", "pts"}, {"member", "a"}, {"value", "1"}}})
          .status,
      400);
  EXPECT_EQ(s.post("/v1/events", R"({"events": [], "more": 1})", as(kWriter)).status, 400);
  EXPECT_EQ(points_of(s, "ann"), nullptr) << "nothing applied";
}

}  // namespace
}  // namespace bk
