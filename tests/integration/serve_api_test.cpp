// `serve`'s API layer against the real binary, Redis and PostgreSQL: cursors that name their
// board period and carry a keyed MAC (another board's, a forged one, another deployment's:
// 400, and serve keeps answering), one cursor key per deployment (kept in PostgreSQL, or
// BOARDKEEPER_CURSOR_KEY), a deeply nested body, an encoded NUL, and the Bearer scheme in
// lower case.
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <signal.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "api/cursor.h"
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
  - name: game:chess
    periods: [daily]
    max_points: 1000000
    hot_keep: 100
    display: 5
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-25T12:00:00Z";
const std::string kKeyA(32, 'a');  // BOARDKEEPER_CURSOR_KEY of one deployment
const std::string kKeyB(40, 'b');  // ... and of another

// A running `serve`; `cursor_key` set: its BOARDKEEPER_CURSOR_KEY; `tokens`: its read tokens.
class Served : public test::Served {
 public:
  Served(const std::string& config_path, const std::string& log, const std::string& cursor_key,
         const std::string& tokens = "")
      : test::Served(
            config_path, log, kNow,
            {{"BOARDKEEPER_CURSOR_KEY", cursor_key}, {"BOARDKEEPER_SERVE_TOKENS", tokens}}) {}
};

// A cursor's fields (NUL-separated, as cursor.cpp writes them) and its MAC (the last 32
// bytes), to forge from.
struct CursorParts {
  std::vector<std::string> fields;
  std::string mac;
};

CursorParts parts_of(const std::string& cursor) {
  const std::string raw = api::unbase64url(cursor).value_or("");
  CursorParts p;
  if (raw.size() < 32) return p;
  p.mac = raw.substr(raw.size() - 32);
  std::string field;
  for (const char c : raw.substr(0, raw.size() - 32)) {
    if (c == '\0') {
      p.fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  p.fields.push_back(field);
  return p;
}

std::string joined(const std::vector<std::string>& fields) {
  std::string out;
  for (const std::string& f : fields) out += (out.empty() ? "" : std::string(1, '\0')) + f;
  return out;
}

std::string hmac(const std::string& key, const std::string& text) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}

// The first cursors' format: fields, NUL, then an unkeyed FNV-1a checksum in hex.
std::string unkeyed_cursor(const std::string& member) {
  const std::string body = joined({"c1", "daily", "2026-11-25", "3", member, "10", ""});
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : body) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return api::base64url(body + '\0' + hex);
}

class ServeApiTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  std::string log = "/tmp/" + prefix + "-serve";

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
    const Config config = test::make_config(prefix, kBoards);
    redis::Connection conn = test::connect_redis();
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kNow)));
    std::vector<service::Update> updates;
    for (int i = 0; i < 12; ++i) {
      for (const std::string board : {"points", "game:chess"}) {
        updates.push_back({board, "m" + std::to_string(i), 100 - i, {}, ""});
      }
    }
    for (const auto& r : lb.apply(updates))
      ASSERT_EQ(r.status, service::UpdateStatus::applied) << r.reason;
  }
  // The next_cursor of `board`'s first page of 3.
  static std::string first_cursor(Served& s, const std::string& board = "points") {
    const Answer a = s.get("/v1/boards/" + board + "/daily/top?limit=3");
    EXPECT_EQ(a.status, 200) << a.body.dump();
    return a.body.value("next_cursor", "");
  }
  static void expect_cursor_refused(Served& s, const std::string& cursor, const std::string& why) {
    const Answer a = s.get("/v1/boards/points/daily/top?limit=3&cursor=" + cursor);
    EXPECT_EQ(a.status, 400) << why << ": " << a.body.dump();
    EXPECT_NE(error_of(a).find("cursor"), std::string::npos) << why << ": " << a.body.dump();
    EXPECT_EQ(s.get("/v1/boards/points/daily/top").status, 200) << "after " << why;
  }
};

TEST_F(ServeApiTest, ACursorOfAnotherBoardIsA400) {
  Served s(config_path, log, "");
  const std::string chess = first_cursor(s, "game:chess");
  ASSERT_FALSE(chess.empty());
  expect_cursor_refused(s, chess, "game:chess daily's cursor on points daily");
  const Answer own = s.get("/v1/boards/game:chess/daily/top?limit=3&cursor=" + chess);
  EXPECT_EQ(own.status, 200) << own.body.dump();
  EXPECT_EQ(own.body["records"][0]["member"], "m3");
}

TEST_F(ServeApiTest, ForgedCursorsAre400sAndServeKeepsAnswering) {
  Served s(config_path, log, kKeyA);
  // The first cursors' checksum could be computed by anyone (and its member, not UTF-8,
  // made PostgreSQL fail: a 500).
  expect_cursor_refused(s, unkeyed_cursor("\xff\xfe"), "not UTF-8, the old unkeyed checksum");
  const std::string genuine = first_cursor(s);
  const CursorParts parts = parts_of(genuine);
  ASSERT_EQ(parts.fields.size(), 8U) << "c2, board, period, period id, position, member, points, "
                                        "achieved_at";
  EXPECT_EQ(parts.mac, hmac(kKeyA, joined(parts.fields)));
  const std::string body = joined(parts.fields);
  expect_cursor_refused(s, api::base64url(body), "no MAC");
  expect_cursor_refused(s, api::base64url(body + std::string(32, '\0')), "a wrong MAC");
  expect_cursor_refused(s, api::base64url(body + hmac(kKeyB, body)), "another deployment's key");
  std::vector<std::string> not_utf8 = parts.fields;
  not_utf8[5] = "\xff\xfe";
  const std::string bad = joined(not_utf8);
  expect_cursor_refused(s, api::base64url(bad + hmac(kKeyB, bad)), "not UTF-8, another key");
  // Even under the right key (leaked), a member that is not UTF-8 is refused, never a 500.
  expect_cursor_refused(s, api::base64url(bad + hmac(kKeyA, bad)), "not UTF-8, the right key");
  EXPECT_EQ(s.get("/v1/boards/points/daily/top?limit=3&cursor=" + genuine).status, 200);
}

TEST_F(ServeApiTest, ADeeplyNestedBodyIsA400AndServeKeepsAnswering) {
  Served s(config_path, log, "");
  const std::string deep =
      R"({"ids":[)" + std::string(100000, '[') + std::string(100000, ']') + "]}";
  const Answer a = s.post("/v1/boards/points/daily/members", deep);
  EXPECT_EQ(a.status, 400) << a.body.dump();
  EXPECT_EQ(error_of(a), "every id must be a string, not an array") << a.body.dump();
  EXPECT_EQ(s.get("/v1/boards/points/daily/top").status, 200);
  const Answer b = s.post(
      "/v1/boards/points/daily/members",
      R"({"ids": ["m1"], "x": )" + std::string(100000, '[') + std::string(100000, ']') + "}");
  EXPECT_EQ(b.status, 400) << b.body.dump();
  EXPECT_EQ(error_of(b), "the body is nested deeper than 8 levels") << b.body.dump();
  const Answer ok = s.post("/v1/boards/points/daily/members", R"({"ids": ["m1", "nobody"]})");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body["not_found"], json({"nobody"}));
}

TEST_F(ServeApiTest, AnEncodedNulIsEscapedInTheErrorNotCut) {
  Served s(config_path, log, "");
  const Answer a = s.get("/v1/boards/points/daily/top?period_id=2026-11-25%00");
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(error_of(a),
            R"('2026-11-25\x00' is not a daily period id of board 'points' (time zone UTC))")
      << a.body.dump();
}

// (WWW-Authenticate is checked in tests/api: api::Response::headers reach the wire with the
// event-driven front end.)
TEST_F(ServeApiTest, TheBearerSchemeIsCaseInsensitive) {
  Served s(config_path, log, "", "reader-token");
  const std::string top = "/v1/boards/points/daily/top";
  EXPECT_EQ(s.get(top, {{"Authorization", "bearer reader-token"}}).status, 200);
  EXPECT_EQ(s.get(top, {{"Authorization", "BEARER  reader-token"}}).status, 200);
  EXPECT_EQ(s.get(top).status, 401);
  EXPECT_EQ(s.get(top, {{"Authorization", "bearer other"}}).status, 401);
}

// Two replicas of one deployment (one PostgreSQL schema) without BOARDKEEPER_CURSOR_KEY
// share the key kept there; with different BOARDKEEPER_CURSOR_KEYs they do not.
TEST_F(ServeApiTest, ReplicasOfADeploymentAcceptEachOthersCursors) {
  {
    Served a(config_path, log + "-a", "");
    Served b(config_path, log + "-b", "");
    const std::string from_a = first_cursor(a);
    const std::string from_b = first_cursor(b);
    const Answer on_b = b.get("/v1/boards/points/daily/top?limit=3&cursor=" + from_a);
    EXPECT_EQ(on_b.status, 200) << on_b.body.dump();
    EXPECT_EQ(on_b.body["records"][0]["member"], "m3");
    EXPECT_EQ(a.get("/v1/boards/points/daily/top?limit=3&cursor=" + from_b).status, 200);
    // One key, made by whichever came first: 32 random bytes.
    EXPECT_EQ(std::stoll(test::psql("SELECT count(*) FROM " + prefix +
                                    ".serve_keys WHERE name = 'cursor' AND length(key) = 32")),
              1);
  }
  Served a(config_path, log + "-ka", kKeyA);
  Served b(config_path, log + "-kb", kKeyB);
  expect_cursor_refused(b, first_cursor(a), "a cursor of key A on key B");
  expect_cursor_refused(a, first_cursor(b), "a cursor of key B on key A");
  kill(a.pid(), SIGTERM);
  EXPECT_EQ(test::wait_cli(a.pid()), 0);
  EXPECT_EQ(test::read_file(log + "-ka").find(kKeyA), std::string::npos);
}

// Without BOARDKEEPER_CURSOR_KEY the key is in PostgreSQL: while serve has not read it and
// PostgreSQL is down, a page that hands out a cursor is a 503 naming PostgreSQL (pages of
// hot members need Redis only, but the cursor needs the key); with the variable it is not.
TEST_F(ServeApiTest, ThePostgresqlKeyNeedsPostgresqlAndTheEnvironmentKeyDoesNot) {
  const std::string no_pg = test::write_text_config(
      prefix + "-nopg",
      test::config_text(prefix, kBoards, "postgresql://boardkeeper@127.0.0.1:1/boards"));
  // A tick (with PostgreSQL) syncs the board: nothing spilled, so Redis alone can answer.
  ASSERT_EQ(test::run_cli({"--config", config_path, "--now", kNow, "tick"}).exit_code, 0);
  const std::string page = "/v1/boards/points/daily/top?limit=3";
  {
    Served s(no_pg, log + "-nopg", "");
    const Answer a = s.get(page);
    EXPECT_EQ(a.status, 503) << a.body.dump();
    EXPECT_EQ(error_of(a), "PostgreSQL is unreachable");
    EXPECT_EQ(s.get("/v1/boards/points/daily/top?limit=20").status, 200);  // no next page
  }
  Served s(no_pg, log + "-nopg-env", kKeyA);
  const Answer a = s.get(page);
  EXPECT_EQ(a.status, 200) << a.body.dump();
  ASSERT_TRUE(a.body.is_object() && a.body["next_cursor"].is_string()) << a.body.dump();
  const Answer next = s.get(page + "&cursor=" + a.body["next_cursor"].get<std::string>());
  EXPECT_EQ(next.status, 200) << next.body.dump();
  EXPECT_EQ(next.body["records"][0]["member"], "m3");
}

TEST_F(ServeApiTest, OnceAProcessReadTheKeyRedisKeepsACopyForWhenPostgresqlIsDown) {
  const std::string no_pg = test::write_text_config(
      prefix + "-nopg",
      test::config_text(prefix, kBoards, "postgresql://boardkeeper@127.0.0.1:1/boards"));
  ASSERT_EQ(test::run_cli({"--config", config_path, "--now", kNow, "tick"}).exit_code, 0);
  const std::string page = "/v1/boards/points/daily/top?limit=3";
  std::string cursor;
  {
    Served up(config_path, log + "-up", "");  // reads (makes) the key in PostgreSQL
    const Answer a = up.get(page);
    ASSERT_EQ(a.status, 200) << a.body.dump();
    cursor = a.body["next_cursor"].get<std::string>();
  }
  Served down(no_pg, log + "-down", "");
  const Answer a = down.get(page);
  ASSERT_EQ(a.status, 200) << a.body.dump();
  EXPECT_EQ(a.body["next_cursor"], cursor);  // signed with the same key
  const Answer next = down.get(page + "&cursor=" + cursor);
  EXPECT_EQ(next.status, 200) << next.body.dump();
  EXPECT_EQ(next.body["records"][0]["member"], "m3");
}

TEST_F(ServeApiTest, AShortCursorKeyStopsServeAtStart) {
  // (stopped after 20 s should it start anyway)
  const test::RunResult r =
      test::run_cli({"--config", config_path, "serve", "--listen", "127.0.0.1:0"},
                    {"BOARDKEEPER_CURSOR_KEY=too-short-a-key"}, std::chrono::seconds{20});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("BOARDKEEPER_CURSOR_KEY is 15 bytes; it must be at least 32"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("too-short-a-key"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace bk
