// docs/openapi.yaml holds for real answers: a running serve (real Redis and PostgreSQL) is
// asked every route of its route table, the probes and the console's pages, with successes
// and errors (400, 401, 403, 404, 405, 408, 409, 413, 414, 422, 431, 501, 503), over raw
// HTTP so that what is recorded is exactly what came back; tests/openapi/check_openapi.py
// then validates each answer's status, Content-Type, headers and body against the spec, and
// that every operation of the spec had a successful answer validated.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "harness.h"
#include "raw_http.h"
#include "served.h"
#include "write_fixture.h"

namespace bk {
namespace {

using json = nlohmann::json;

using test::kAdmin;
using test::kNow;
using test::kReader;
using test::kScoped;  // here boards=other
using test::kWriter;

// Its own boards, not the write tests': pts is tiered here (the answers' tier fields are
// validated too), and flat has no tie-break.
const char* kBoards = R"(  - name: pts
    periods: [daily, weekly]
    max_points: 1000
    hot_keep: 2
    display: 2
    retention: {default: 30d}
    tiers: [{name: first, top: 1}, {name: half, top: "50%"}]
  - name: best
    periods: [daily]
    update: best
    max_points: 1000
    retention: {default: 30d}
  - name: flat
    periods: [daily]
    tie_break: none
    max_points: 1000
    retention: {default: 30d}
  - name: other
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
  - name: lg
    periods: [daily]
    max_points: 1000
    retention: {default: 30d}
    league: {divisions: [low, high], cohort_size: 3, promote: 1, relegate: 1}
)";

// The spec's paths.
const std::string kBoardList = "/v1/boards";
const std::string kPeriods = "/v1/boards/{board}/periods";
const std::string kTop = "/v1/boards/{board}/{period}/top";
const std::string kHistory = "/v1/boards/{board}/{period}/history";
const std::string kMembers = "/v1/boards/{board}/{period}/members";
const std::string kMember = "/v1/boards/{board}/{period}/members/{member}";
const std::string kAround = "/v1/boards/{board}/{period}/members/{member}/around";
const std::string kScores = "/v1/boards/{board}/members/{member}/scores";
const std::string kEvents = "/v1/events";
const std::string kBans = "/v1/boards/{board}/bans";
const std::string kCohort = "/v1/boards/{board}/{period}/members/{member}/cohort";
const std::string kCohortTop = "/v1/boards/{board}/{period}/cohorts/{cohort}/top";
const std::string kBan = "/v1/boards/{board}/bans/{member}";

// One request: the spec's path it is of, what is sent, and the status the test expects.
struct Call {
  std::string method;
  std::string path;
  std::string target;
  std::string token;  // "": no Authorization header
  int expect = 200;
  std::string body{};
  std::vector<std::string> headers{};  // more header lines
};

class OpenapiTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string tokens_file = "/tmp/" + prefix + "-write-tokens";
  std::string log = "/tmp/" + prefix + "-serve.log";
  std::string config_path;
  json exchanges = json::array();
  int port = 0;

  void SetUp() override {
    std::ofstream(tokens_file) << kScoped << " boards=other\n";
    config_path = test::write_text_config(
        prefix, test::config_text(prefix, kBoards) + "serve:\n  write_tokens_file: " + tokens_file +
                    "\n  header_timeout: 1s\n");
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  test::Served serve(const std::string& config, const std::string& log_path) {
    return test::Served(config, log_path, kNow, test::write_test_tokens());
  }
  test::RunResult cli(const std::string& now, std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path, "--now", now});
    return test::run_cli(args);
  }

  // Sends `c` as it is, records the exchange and checks its status; the answer's body parsed
  // (null when it is no JSON).
  json send(const Call& c) {
    std::string head = c.method + " " + c.target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!c.token.empty()) head += "Authorization: Bearer " + c.token + "\r\n";
    for (const std::string& h : c.headers) head += h + "\r\n";
    if (c.method == "POST" || c.method == "PUT") {
      head += "Content-Type: application/json\r\nContent-Length: " + std::to_string(c.body.size()) +
              "\r\n";
    }
    return exchange(c, head + "Connection: close\r\n\r\n" + c.body);
  }
  // Sends `raw` (a request, whole or not) for `c` and records what comes back.
  json exchange(const Call& c, const std::string& raw) {
    test::RawConnection conn(port);
    conn.send(raw);
    const std::optional<test::RawAnswer> a =
        conn.answer(std::chrono::seconds(15), c.method == "HEAD");
    const std::string what = c.method + " " + c.target.substr(0, 200);
    if (!a) {
      ADD_FAILURE() << what << ": no answer";
      return nullptr;
    }
    EXPECT_EQ(a->status, c.expect) << what << ": " << a->body;
    exchanges.push_back({{"method", c.method},
                         {"path", c.path},
                         {"target", c.target.substr(0, 200)},
                         {"status", a->status},
                         {"headers", a->headers},
                         {"body", a->body}});
    return json::parse(a->body, nullptr, false);
  }
  json write(const std::string& board, const std::string& member, const json& body,
             int expect = 200) {
    return send({"POST", kScores, "/v1/boards/" + board + "/members/" + member + "/scores", kWriter,
                 expect, body.dump()});
  }

  void seed();
  void reads();
  void admin();
  void probes();
  void errors_of_reads();
  void errors_of_writes_and_admin();
  void errors_of_the_server();
  void unavailable();
  void validate();
};

// Members on pts (spilled beyond 2 after the tick), an archived day, profiles, a best board
// and a tie_break: none board (achieved_at null); every write also checks the write route.
void OpenapiTest::seed() {
  ASSERT_EQ(cli("2026-11-23T12:00:00Z", {"add", "pts", "old0", "4"}).exit_code, 0);
  for (const char* m : {"old1", "old2"}) {
    ASSERT_EQ(cli("2026-11-24T12:00:00Z", {"add", "pts", m, "5"}).exit_code, 0);
  }
  write("pts", "ann", {{"value", 10}, {"name", "Ann"}, {"metadata", {{"level", 3}}}});
  write("pts", "bob", {{"value", 20}});
  write("pts", "cat", {{"value", 30}, {"at", "2026-11-25T11:00:00Z"}});
  write("pts", "dan", {{"value", 40}, {"at", 1795606200000}});
  write("pts", "mallory", {{"value", 3}});
  const json eve = {{"value", 50}, {"id", "match-1"}, {"name", "Eve"}};
  EXPECT_EQ(write("pts", "eve", eve).value("applied", false), true);
  EXPECT_EQ(write("pts", "eve", eve).value("duplicate", false), true);
  write("pts", "eve", {{"value", 1}});  // previous_rank
  EXPECT_EQ(write("best", "ann", {{"value", 50}})["periods"][0].value("improved", false), true);
  write("flat", "ann", {{"value", 5}});
  write("flat", "bob", {{"value", 5}});
  send({"POST", kScores, "/v1/boards/other/members/ann/scores", kScoped, 200, R"({"value": 1})"});
  const test::RunResult tick = cli(kNow, {"tick"});  // archives 11-23 and 11-24, spills pts
  ASSERT_EQ(tick.exit_code, 0) << tick.out << tick.err;
  write("lg", "ann", {{"value", 7}});  // the tick opened the league's cohorts: seated
  write("lg", "bob", {{"value", 3}});
}

void OpenapiTest::reads() {
  const json boards = send({"GET", kBoardList, "/v1/boards?limit=1", kReader});
  ASSERT_TRUE(boards.is_object() && boards["next_cursor"].is_string());
  send({"GET", kBoardList,
        "/v1/boards?cursor=" + test::enc(boards["next_cursor"].get<std::string>()), kReader});
  send({"GET", kBoardList, "/v1/boards?limit=0", kReader, 400});
  send({"POST", kBoardList, "/v1/boards", kReader, 405, "{}"});
  send({"GET", kPeriods, "/v1/boards/pts/periods", kReader});
  send({"HEAD", kPeriods, "/v1/boards/pts/periods", kReader});
  const json first = send({"GET", kTop, "/v1/boards/pts/daily/top?limit=2", kReader});
  ASSERT_TRUE(first.is_object() && first["next_cursor"].is_string());
  send({"GET", kTop,
        "/v1/boards/pts/daily/top?limit=2&cursor=" +
            test::enc(first["next_cursor"].get<std::string>()),
        kReader});
  EXPECT_EQ(send({"GET", kTop, "/v1/boards/pts/daily/top?period_id=2026-11-24", kReader})
                .value("state", ""),
            "archived");
  send({"GET", kTop, "/v1/boards/flat/daily/top", kAdmin});  // an admin token reads too
  const json history = send({"GET", kHistory, "/v1/boards/pts/daily/history?limit=1", kReader});
  ASSERT_TRUE(history.is_object() && history["next_cursor"].is_string());
  send({"GET", kHistory,
        "/v1/boards/pts/daily/history?limit=1&cursor=" +
            test::enc(history["next_cursor"].get<std::string>()),
        kReader});
  send({"GET", kHistory, "/v1/boards/pts/weekly/history", kReader});  // none yet
  EXPECT_EQ(send({"GET", kMember, "/v1/boards/pts/daily/members/ann", kReader}).value("name", ""),
            "Ann");
  send({"GET", kMember, "/v1/boards/pts/daily/members/old1?period_id=2026-11-24", kReader});
  send({"GET", kMembers, "/v1/boards/pts/daily/members?ids=ann,bob,nobody", kReader});
  send({"POST", kMembers, "/v1/boards/pts/weekly/members", kReader, 200,
        R"({"ids": ["eve", "old1", "nobody"]})"});
  send({"GET", kAround, "/v1/boards/pts/daily/members/cat/around?k=1", kReader});
  send({"GET", kAround, "/v1/boards/flat/daily/members/ann/around", kReader});
  send({"GET", kCohort, "/v1/boards/lg/daily/members/ann/cohort", kReader});
  send({"GET", kCohortTop, "/v1/boards/lg/daily/cohorts/low-1/top", kReader});
  send({"GET", kMember, "/v1/boards/lg/daily/members/bob", kReader});
  send({"GET", kCohort, "/v1/boards/pts/daily/members/ann/cohort", kReader, 404});
  send({"GET", kCohortTop, "/v1/boards/lg/daily/cohorts/mid-1/top", kReader, 404});
}

void OpenapiTest::admin() {
  send({"PUT", kBan, "/v1/boards/pts/bans/mallory", kAdmin, 200, R"({"reason": "aimbot"})"});
  send({"PUT", kBan, "/v1/boards/pts/bans/mallory", kAdmin, 200});  // again, no reason
  send({"GET", kBans, "/v1/boards/pts/bans", kAdmin});
  send({"DELETE", kBan, "/v1/boards/pts/bans/mallory", kAdmin});
  send({"DELETE", kMember, "/v1/boards/pts/daily/members/dan", kAdmin});
  send({"DELETE", kMember, "/v1/boards/pts/daily/members/nobody?all=true", kAdmin});
}

void OpenapiTest::probes() {
  for (const char* path : {"/healthz", "/readyz", "/metrics", "/console", "/console/",
                           "/console/console.css", "/console/console.js"}) {
    send({"GET", path, path, ""});
  }
  send({"HEAD", "/healthz", "/healthz", ""});
  send({"POST", "/console/", "/console/", "", 405});
}

void OpenapiTest::errors_of_reads() {
  send({"GET", kPeriods, "/v1/boards/pts/periods", "", 401});
  send({"GET", kPeriods, "/v1/boards/pts/periods", "not-a-token", 401});
  send({"GET", kPeriods, "/v1/boards/pts/periods", kWriter, 403});
  send({"GET", kPeriods, "/v1/boards/nope/periods", kReader, 404});
  send({"GET", kPeriods, "/v1/boards/pts/periods?x=1", kReader, 400});
  send({"POST", kPeriods, "/v1/boards/pts/periods", kReader, 405, "{}"});
  send({"GET", kTop, "/v1/boards/pts/daily/top?limit=0", kReader, 400});
  send({"GET", kTop, "/v1/boards/pts/daily/top?cursor=Zm9yZ2Vk", kReader, 400});
  send({"GET", kTop, "/v1/boards/pts/monthly/top", kReader, 404});
  send({"GET", kHistory, "/v1/boards/pts/daily/history?limit=0", kReader, 400});
  send({"GET", kHistory, "/v1/boards/pts/monthly/history", kReader, 404});
  send({"GET", kMembers, "/v1/boards/pts/daily/members", kReader, 400});
  send({"POST", kMembers, "/v1/boards/pts/daily/members", kReader, 400, R"({"ids": [1]})"});
  send({"GET", kMember, "/v1/boards/pts/daily/members/%FF", kReader, 400});
  send({"GET", kMember, "/v1/boards/pts/daily/members/nobody", kReader, 404});
  send({"PUT", kMember, "/v1/boards/pts/daily/members/ann", kAdmin, 405});
  send({"GET", kAround, "/v1/boards/pts/daily/members/ann/around?k=501", kReader, 400});
  send({"GET", kAround, "/v1/boards/pts/daily/members/nobody/around", kReader, 404});
}

void OpenapiTest::errors_of_writes_and_admin() {
  const std::string ann = "/v1/boards/pts/members/ann/scores";
  send({"POST", kScores, ann, "", 401, R"({"value": 1})"});
  send({"POST", kScores, ann, kReader, 403, R"({"value": 1})"});
  send({"POST", kScores, ann, kScoped, 403, R"({"value": 1})"});  // outside its scope
  send({"POST", kScores, "/v1/boards/nope/members/ann/scores", kWriter, 404, R"({"value": 1})"});
  send({"POST", kScores, ann, kWriter, 400, R"({"value": "1"})"});
  send({"POST", kScores, ann + "?x=1", kWriter, 400, R"({"value": 1})"});
  send({"GET", kScores, ann, kWriter, 405});
  write("pts", "ann", {{"value", 1}, {"at", "2026-11-01T12:00:00Z"}}, 409);
  write("pts", "ann", {{"value", 5000}}, 422);
  const std::string batch =
      R"({"events": [{"board": "pts", "member": "ann", "value": 1}, {"board": "nope", "member": "a", "value": 1}]})";
  send({"POST", kEvents, "/v1/events", kWriter, 200, batch});
  send({"POST",
        kEvents,
        "/v1/events?standings=true",
        kWriter,
        200,
        batch,
        {"Idempotency-Key: b-1"}});
  send({"POST", kEvents, "/v1/events", kWriter, 400, R"({"events": []})"});
  send({"POST", kEvents, "/v1/events", kScoped, 403, batch});
  send({"POST", kEvents, "/v1/events", kReader, 403, batch});
  send({"GET", kEvents, "/v1/events", kWriter, 405});
  send({"POST", kScores, ann, kWriter, 200, R"({"value": 2})", {"Idempotency-Key: \"oa-1\""}});
  send({"POST", kScores, ann, kWriter, 422, R"({"value": 3})", {"Idempotency-Key: \"oa-1\""}});
  exchange({"POST", kScores, ann, kWriter, 415},
           "POST " + ann + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kWriter +
               "\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
  write("pts", "ann", {{"value", 1}, {"name", std::string(9000, 'n')}}, 413);
  const std::string ban = "/v1/boards/pts/bans/mallory";
  send({"PUT", kBan, ban, "", 401, R"({"reason": "x"})"});
  send({"PUT", kBan, ban, kReader, 403, R"({"reason": "x"})"});
  send({"PUT", kBan, ban, kAdmin, 400, R"({"why": "x"})"});
  send({"PUT", kBan, ban, kAdmin, 413, R"({"reason": ")" + std::string(5000, 'r') + "\"}"});
  send({"PUT", kBan, "/v1/boards/nope/bans/mallory", kAdmin, 404, "{}"});
  send({"GET", kBan, ban, kAdmin, 405});
  send({"GET", kBans, "/v1/boards/pts/bans", kReader, 403});
  send({"DELETE", kMember, "/v1/boards/pts/daily/members/ann?all=maybe", kAdmin, 400});
  send({"DELETE", kMember, "/v1/boards/pts/monthly/members/ann?all=true", kAdmin, 404});
}

// The server's own refusals: a request line over 8 KiB, headers over 16 KiB, a coding before
// chunked, a head that does not arrive (serve.header_timeout: 1s here).
void OpenapiTest::errors_of_the_server() {
  send({"GET", kPeriods, "/v1/boards/pts/periods?pad=" + std::string(9000, 'p'), kReader, 414});
  send({"GET",
        kPeriods,
        "/v1/boards/pts/periods",
        kReader,
        431,
        "",
        {"X-Pad: " + std::string(17000, 'p')}});
  const Call gzip{"POST", kMembers, "/v1/boards/pts/daily/members", kReader, 501};
  exchange(gzip,
           "POST /v1/boards/pts/daily/members HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           "Authorization: Bearer " +
               kReader +
               "\r\nContent-Type: application/json\r\n"
               "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
  const Call slow{"GET", kPeriods, "/v1/boards/pts/periods", kReader, 408};
  exchange(slow, "GET /v1/boards/pts/periods HTTP/1.1\r\nHost: 127.0.0.1\r\n");
}

// A serve whose Redis is gone: not ready, and a read answers 503 with Retry-After.
void OpenapiTest::unavailable() {
  const std::string down = test::write_text_config(
      prefix + "down",
      test::config_text_for("redis://127.0.0.1:" + std::to_string(test::free_port()) + "/0", prefix,
                            kBoards));
  test::Served s = serve(down, log + "-down");
  const int kept = port;
  port = s.port();
  send({"GET", "/readyz", "/readyz", "", 503});
  send({"GET", kPeriods, "/v1/boards/pts/periods", kReader, 503});
  port = kept;
}

// check_openapi.py answers: every exchange against docs/openapi.yaml.
void OpenapiTest::validate() {
  const std::string file = "/tmp/" + prefix + "-answers.json";
  std::ofstream(file) << exchanges.dump(1);
  const std::string out = "/tmp/" + prefix + "-check.txt";
  const std::string command = std::string(BK_OPENAPI_PYTHON) + " " + BK_SOURCE_DIR +
                              "/tests/openapi/check_openapi.py answers --root " + BK_SOURCE_DIR +
                              " --min-errors 400,401,403,404,405,408,409,413,414,422,431,501,503 " +
                              file + " > " + out + " 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << command << "\n" << test::read_file(out);
  std::printf("%s", test::read_file(out).c_str());
}

TEST_F(OpenapiTest, RealAnswersOfEveryRouteMatchTheSpec) {
  test::Served s = serve(config_path, log);
  port = s.port();
  ASSERT_NO_FATAL_FAILURE(seed());
  ASSERT_NO_FATAL_FAILURE(reads());
  admin();
  probes();
  errors_of_reads();
  errors_of_writes_and_admin();
  errors_of_the_server();
  unavailable();
  validate();
}

}  // namespace
}  // namespace bk
