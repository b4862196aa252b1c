// `serve`, the HTTP read API, against the real binary, Redis and PostgreSQL: every endpoint
// agrees with the CLI (spilled members, ties, asc order, a cron period, archived periods),
// cursors page a whole 100k-member board once in rank order while a spill runs, bad input
// gets 400/404 JSON, tokens, outages (503, then served again) and a graceful SIGTERM.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "harness.h"
#include "served.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using json = nlohmann::json;
using test::Answer;
using test::enc;
using test::error_of;
using test::record_of;
using namespace std::chrono_literals;

const char* kBoards = R"(  - name: pts
    periods: [daily, {name: cup, cron: "0 18 * * 5"}]
    max_points: 1000000
    hot_keep: 5
    display: 4
    retention: {default: 30d}
  - name: laps
    periods: [weekly]
    order: asc
    max_points: 100000
    hot_keep: 5
    display: 5
    retention: {default: 30d}
  - name: flat
    periods: [daily]
    tie_break: none
    max_points: 100
    hot_keep: 5
    display: 5
    retention: {default: 30d}
  - name: big
    periods: [daily]
    max_points: 1000000
    hot_keep: 1000
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-20T12:00:00Z";  // a Friday: the cup began 2026-11-13T18:00

// A running `serve` of the test's own config, with 8 workers.
class Served : public test::Served {
 public:
  Served(const std::string& config_path, const std::string& log, const std::string& now = kNow)
      : test::Served(config_path, log, now, {}, {}, {"--workers", "8"}) {}
};

std::vector<json> cli_lines(const std::vector<std::string>& args) {
  const test::RunResult r = test::run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) out.push_back(record_of(json::parse(line)));
  return out;
}

class ServeTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  std::string log = "/tmp/" + prefix + "-serve.log";

  std::vector<std::string> cli(std::vector<std::string> args, const std::string& now = kNow) {
    args.insert(args.begin(), {"--config", config_path, "--now", now});
    return args;
  }
  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  // Follows next_cursor from the first page to the last.
  static std::vector<json> all_pages(Served& s, const std::string& top, std::int64_t limit,
                                     std::int64_t* total = nullptr) {
    std::vector<json> out;
    std::string cursor;
    for (int page = 0; page < 100000; ++page) {
      const Answer a = s.get(top + (top.find('?') == std::string::npos ? "?" : "&") + "limit=" +
                             std::to_string(limit) + (cursor.empty() ? "" : "&cursor=" + cursor));
      EXPECT_EQ(a.status, 200) << a.body.dump();
      if (a.status != 200) break;
      if (total != nullptr) *total = a.body["total"].get<std::int64_t>();
      EXPECT_LE(a.body["records"].size(), static_cast<std::size_t>(limit));
      for (const auto& r : a.body["records"]) out.push_back(r);
      if (a.body["next_cursor"].is_null()) break;
      cursor = enc(a.body["next_cursor"].get<std::string>());
    }
    return out;
  }
  // The members' names and metadata.
  struct Profiles {
    std::map<std::string, std::string> names;
    std::map<std::string, json> metas;
  };

  // Scores with ties (few distinct points, repeated times) on every board, of 25 members
  // (every fifth with an id that needs encoding in a URL). Profiles: every third member has a
  // name, every fourth a JSON object (so some have both, some one, some none); spilled
  // members' profiles move to PostgreSQL with the tick.
  void write_scores_with_ties(Profiles& p) {
    const Config config = test::make_config(prefix, kBoards);
    redis::Connection conn = test::connect_redis();
    const Instant now = *parse_rfc3339(kNow);
    service::Leaderboards lb(config, conn, Clock(now));
    std::mt19937 rng(7);
    std::vector<std::string> members;
    for (int i = 0; i < 25; ++i)
      members.push_back(i % 5 == 0 ? "ü " + std::to_string(i) + "/,?%" : "m" + std::to_string(i));
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i % 3 == 0) p.names[members[i]] = "Näme " + std::to_string(i);
      if (i % 4 == 0) p.metas[members[i]] = json{{"i", i}, {"tag", "t" + std::to_string(i)}};
    }
    std::vector<service::Update> updates;
    for (const std::string board : {"pts", "laps", "flat"}) {
      for (int i = 0; i < 60; ++i) {
        service::Update u{board,
                          members[rng() % members.size()],
                          static_cast<std::int64_t>(1 + rng() % 4),
                          {},
                          ""};
        u.at = now - std::chrono::minutes{1 + static_cast<int>(rng() % 5)};
        if (p.names.count(u.member) != 0) u.name = p.names[u.member];
        if (p.metas.count(u.member) != 0) u.meta = p.metas[u.member].dump();
        updates.push_back(u);
      }
    }
    for (const auto& r : lb.apply(updates))
      ASSERT_EQ(r.status, service::UpdateStatus::applied) << r.reason;
  }

  // The CLI shows each member's own profile, hot, cold or archived.
  static void expect_profiles(const std::vector<json>& expected, const Profiles& p) {
    std::size_t with_name = 0;
    for (const json& e : expected) {
      const std::string m = e["member"];
      if (p.names.count(m) != 0) {
        EXPECT_EQ(e.value("name", ""), p.names.at(m)) << m;
        ++with_name;
      } else {
        EXPECT_FALSE(e.contains("name")) << m;
      }
      if (p.metas.count(m) != 0) {
        EXPECT_EQ(e.value("metadata", json()), p.metas.at(m)) << m;
      } else {
        EXPECT_FALSE(e.contains("metadata")) << m;
      }
    }
    EXPECT_GT(with_name, 3U);
  }

  // A board's period as the API names it (id: empty for the current one).
  struct Listing {
    std::string board, period, id;
  };

  // Every endpoint of a period agrees with the CLI's listing `expected`.
  void check(Served& s, const Listing& l, const std::vector<json>& expected, const Profiles& p) {
    SCOPED_TRACE(l.board + " " + l.period + " " + l.id);
    expect_profiles(expected, p);
    const std::string base = "/v1/boards/" + l.board + "/" + l.period;
    const std::string q = l.id.empty() ? "" : "?period_id=" + l.id;
    std::int64_t total = 0;
    EXPECT_EQ(all_pages(s, base + "/top" + q, 7, &total), expected);
    EXPECT_EQ(total, static_cast<std::int64_t>(expected.size()));
    ASSERT_GT(expected.size(), 10U);
    // The default page is the board's display (pts: 4, the others 5).
    const Answer first = s.get(base + "/top" + q);
    EXPECT_EQ(first.body["records"].size(), l.board == "pts" ? 4U : 5U);
    expect_member_reads(s, base, q, expected);
    expect_around(s, base, q, expected);
    EXPECT_EQ(s.get(base + "/members/ghost" + q).status, 404);
    EXPECT_EQ(s.get(base + "/members/ghost/around" + q).status, 404);
  }

  // Each member one by one; members?ids= in rank order, unknown ones named.
  static void expect_member_reads(Served& s, const std::string& base, const std::string& q,
                                  const std::vector<json>& expected) {
    std::vector<std::string> ids;
    for (const json& e : expected) {
      const std::string m = e["member"];
      ids.push_back(enc(m));
      const Answer one = s.get(base + "/members/" + enc(m) + q);
      EXPECT_EQ(one.status, 200);
      EXPECT_EQ(one.body, e);
    }
    const std::string sep = q.empty() ? "?" : "&";
    std::string joined;
    for (auto it = ids.rbegin(); it != ids.rend(); ++it)
      joined += (joined.empty() ? "" : ",") + *it;
    const Answer many = s.get(base + "/members" + q + sep + "ids=ghost," + joined);
    EXPECT_EQ(many.status, 200);
    EXPECT_EQ(many.body["records"], json(expected));
    EXPECT_EQ(many.body["not_found"], json({"ghost"}));
  }

  // around: K above and below, the member among them, as the CLI's around.
  static void expect_around(Served& s, const std::string& base, const std::string& q,
                            const std::vector<json>& expected) {
    const std::string sep = q.empty() ? "?" : "&";
    for (const std::size_t i : {std::size_t{0}, std::size_t{6}, expected.size() - 1}) {
      const std::string m = expected[i]["member"];
      const Answer a = s.get(base + "/members/" + enc(m) + "/around" + q + sep + "k=2");
      EXPECT_EQ(a.status, 200);
      EXPECT_EQ(a.body["member"], expected[i]);
      const std::size_t from = i >= 2 ? i - 2 : 0;
      const std::size_t to = std::min(expected.size(), i + 3);
      EXPECT_EQ(a.body["records"],
                json(std::vector<json>(expected.begin() + static_cast<std::ptrdiff_t>(from),
                                       expected.begin() + static_cast<std::ptrdiff_t>(to))));
    }
  }

  // pts' periods: the daily one and the cup (a custom cron period) with its next reset.
  void expect_periods_of_pts(Served& s) {
    const Answer p = s.get("/v1/boards/pts/periods");
    ASSERT_EQ(p.status, 200);
    EXPECT_EQ(p.body["timezone"], "UTC");
    ASSERT_EQ(p.body["periods"].size(), 2U);
    EXPECT_EQ(p.body["periods"][1]["period"], "cup");
    EXPECT_EQ(p.body["periods"][1]["period_id"], "2026-11-13T18:00");
    EXPECT_EQ(p.body["periods"][1]["next_reset"], "2026-11-20T18:00:00.000Z");
    EXPECT_EQ(p.body["periods"][0]["members"],
              cli_lines(cli({"top", "pts", "daily", "-n", "1000", "--json"})).size());
  }
};

// Writes scores with ties (few distinct points, repeated times) to every board, spills them
// with tick, and checks every endpoint against the CLI; then archives the daily periods
// and checks them again against `history`.
TEST_F(ServeTest, EveryEndpointAgreesWithTheCli) {
  Profiles profiles;
  ASSERT_NO_FATAL_FAILURE(write_scores_with_ties(profiles));
  ASSERT_EQ(test::run_cli(cli({"tick"})).exit_code, 0);  // spills all but 5 of each period
  {
    Served s(config_path, log);
    for (const auto& [board, period] : std::vector<std::pair<std::string, std::string>>{
             {"pts", "daily"}, {"pts", "cup"}, {"laps", "weekly"}, {"flat", "daily"}}) {
      const auto expected = cli_lines(cli({"top", board, period, "-n", "1000", "--json"}));
      check(s, {board, period, ""}, expected, profiles);
      const Answer top = s.get("/v1/boards/" + board + "/" + period + "/top");
      EXPECT_EQ(top.body["state"], "open");
      // The CLI's rank and around agree too (they share the service with the API).
      const json r = cli_lines(cli({"rank", board, period, expected[8]["member"], "--json"})).at(0);
      EXPECT_EQ(r, expected[8]);
    }
    ASSERT_NO_FATAL_FAILURE(expect_periods_of_pts(s));
  }
  // Two days later the daily periods of 2026-11-20 are archived: read from history.
  const std::string later = "2026-11-22T01:00:00Z";
  ASSERT_EQ(test::run_cli(cli({"tick"}, later)).exit_code, 0);
  Served s(config_path, log + "2", later);
  for (const std::string board : {"pts", "flat"}) {
    const auto expected =
        cli_lines(cli({"history", board, "daily", "2026-11-20", "-n", "1000", "--json"}, later));
    check(s, {board, "daily", "2026-11-20"}, expected, profiles);
    const Answer top = s.get("/v1/boards/" + board + "/daily/top?period_id=2026-11-20");
    EXPECT_EQ(top.body["state"], "archived");
    EXPECT_EQ(top.body["period_end"], "2026-11-21T00:00:00.000Z");
  }
}

// 100k members (ties included), 99k of them spilled by a tick that runs while the pages are
// read: every member is listed exactly once, in rank order, with its exact rank.
TEST_F(ServeTest, CursorsListAWholeBoardOnceInRankOrderWhileASpillRuns) {
  const Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  const Instant now = *parse_rfc3339(kNow);
  service::Leaderboards lb(config, conn, Clock(now));
  constexpr int kMembers = 100000;
  struct Row {
    std::string member;
    std::int64_t points;
    std::int64_t at;
  };
  std::vector<Row> rows;
  std::vector<service::Update> batch;
  for (int i = 0; i < kMembers; ++i) {
    service::Update u{"big", "p" + std::to_string(i), (i * 7919) % 20000, {}, ""};
    u.at = now - std::chrono::seconds{(i * 31) % 100};  // equal points and times: shared ranks
    rows.push_back({u.member, u.value, to_epoch_ms(*u.at)});
    batch.push_back(std::move(u));
    if (batch.size() == 5000) {
      lb.apply(batch, service::Leaderboards::Detail::status);
      batch.clear();
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.points != b.points) return a.points > b.points;
    if (a.at != b.at) return a.at < b.at;
    return a.member < b.member;
  });

  // A page read while the spill commits, or just after it and before its ANALYZE, took
  // 9.6 s here: this test is about what the pages list, not how fast, so its reads get a long
  // deadline (with the default 2 s such a page answers 503: docs/http-api.md, Deadlines).
  const std::string patient = test::write_text_config(
      prefix + "-60s", test::config_text(prefix, kBoards) + "serve:\n  read_timeout: 60s\n");
  Served s(patient, log);
  const int tick = test::spawn_cli(cli({"tick"}), "/tmp/" + prefix + "-tick.log");
  test::Reaper reap_tick{tick};
  std::int64_t total = 0;
  const std::vector<json> listed = all_pages(s, "/v1/boards/big/daily/top", 1000, &total);
  EXPECT_EQ(test::wait_cli(tick), 0) << test::read_file("/tmp/" + prefix + "-tick.log");
  EXPECT_EQ(total, kMembers);
  ASSERT_EQ(listed.size(), rows.size());
  std::int64_t rank = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i == 0 || rows[i].points != rows[i - 1].points || rows[i].at != rows[i - 1].at) {
      rank = static_cast<std::int64_t>(i) + 1;
    }
    ASSERT_EQ(listed[i]["member"], rows[i].member) << "at " << i;
    ASSERT_EQ(listed[i]["rank"], rank) << "at " << i;
    ASSERT_EQ(listed[i]["points"], rows[i].points) << "at " << i;
  }
  // The spill ran meanwhile: all but hot_keep are cold now, and a second pass agrees.
  EXPECT_EQ(std::stoll(
                test::psql("SELECT count(*) FROM " + prefix + ".cold_members WHERE board = 'big'")),
            kMembers - 1000);
  EXPECT_EQ(all_pages(s, "/v1/boards/big/daily/top", 1000), listed);
}

// docs/architecture.md's "Reading the ZSETs directly": its formula, applied to ZRANGE ...
// WITHSCORES of hot boards (desc + earliest + ms, asc + none), gives what `top --json` prints.
TEST_F(ServeTest, TheDocumentedScoreLayoutDecodesTheHotBoard) {
  const Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  const Instant now = *parse_rfc3339(kNow);
  service::Leaderboards lb(config, conn, Clock(now));
  lb.apply({{"pts", "a", 7, now - std::chrono::minutes{3}, ""},
            {"pts", "b", 7, now - std::chrono::minutes{5}, ""},
            {"pts", "c", 9, now - std::chrono::seconds{1}, ""},
            {"flat", "x", 4, {}, ""},
            {"flat", "y", 2, {}, ""}});
  struct Layout {
    std::string board, period, key;
    std::int64_t span_units, max_points, min_points;
    bool desc, earliest;
    std::int64_t start_ms;
  };
  const std::int64_t day = to_epoch_ms(*parse_rfc3339("2026-11-20T00:00:00Z"));
  for (const Layout& l :
       {Layout{"pts", "daily", prefix + ":{pts}:daily:2026-11-20", 27LL * 3600 * 1000, 1000000, 0,
               true, true, day},
        Layout{"flat", "daily", prefix + ":{flat}:daily:2026-11-20", 0, 100, 0, true, true, day}}) {
    const std::int64_t slots = l.span_units + 1;
    const redis::Reply r = conn.command({"ZRANGE", l.key, "0", "-1", "WITHSCORES"}).checked();
    const auto listed = cli_lines(cli({"top", l.board, l.period, "--json"}));
    ASSERT_EQ(r.elements.size(), 2 * listed.size());
    for (std::size_t i = 0; i < listed.size(); ++i) {
      const std::int64_t score = std::stoll(r.at(2 * i + 1).as_string());
      const std::int64_t rank_part = score / slots, time_part = score % slots;
      EXPECT_EQ(r.at(2 * i).as_string(), listed[i]["member"]);
      EXPECT_EQ(l.desc ? l.max_points - rank_part : l.min_points + rank_part, listed[i]["points"]);
      if (l.span_units > 0) {
        const std::int64_t units = l.earliest ? time_part : l.span_units - time_part;
        EXPECT_EQ(format_rfc3339(from_epoch_ms(l.start_ms + units)), listed[i]["achieved_at"]);
      }
    }
  }
}

// A JSON error answer with `status`, its error naming `words`.
void expect_error(const Answer& a, int status, const std::string& words) {
  EXPECT_EQ(a.status, status) << a.body.dump();
  ASSERT_TRUE(a.body.is_object() && a.body.contains("error")) << a.body.dump();
  EXPECT_NE(a.body["error"].get<std::string>().find(words), std::string::npos) << a.body.dump();
}

// Cursors: made up, altered, or from another period, are 400s; a real one reads on.
void expect_cursor_errors(Served& s, const std::string& top) {
  const Answer page = s.get(top + "?limit=1");
  std::string cursor = page.body["next_cursor"];
  expect_error(s.get(top + "?cursor=bm90IGEgY3Vyc29y"), 400, "cursor");
  std::string altered = cursor;
  altered[altered.size() / 2] = altered[altered.size() / 2] == 'A' ? 'B' : 'A';
  expect_error(s.get(top + "?cursor=" + altered), 400, "cursor");
  expect_error(s.get("/v1/boards/pts/cup/top?cursor=" + cursor), 400, "cursor");
  EXPECT_EQ(s.get(top + "?cursor=" + cursor).body["records"][0]["member"], "plain");
}

TEST_F(ServeTest, BadInputGetsA400Or404InJson) {
  const Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kNow)));
  lb.apply({{"pts", "ä/b,c d+e", 5, {}, ""}, {"pts", "plain", 3, {}, ""}});
  Served s(config_path, log);
  const std::string top = "/v1/boards/pts/daily/top";
  // Percent-encoded UTF-8 with '/', ',', ' ' and '+' in it is found, in a path and in ids.
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members/" + enc("ä/b,c d+e")).body["member"], "ä/b,c d+e");
  const Answer ids = s.get("/v1/boards/pts/daily/members?ids=" + enc("ä/b,c d+e") + ",plain");
  EXPECT_EQ(ids.body["records"].size(), 2U);
  EXPECT_EQ(s.get("/v1/boards/pts/daily/members?ids=plain,plain").body["records"].size(), 1U);
  // A '+' in a query is a space (as form encoding sends it).
  EXPECT_EQ(
      s.get("/v1/boards/pts/daily/members?ids=" + enc("ä/b,c") + "+d%2Be").body["records"].size(),
      1U);
  expect_error(s.get("/v1/boards/pts/daily/members/%FF%FE"), 400, "UTF-8");
  expect_error(s.get("/v1/boards/pts/daily/members/a%2"), 400, "percent-encoded");
  expect_error(s.get("/v1/boards/pts/daily/members?ids=a,%00b"), 400, "member id");
  std::string many = "ids=";
  for (int i = 0; i <= 1000; ++i) many += (i == 0 ? "m" : ",m") + std::to_string(i);
  expect_error(s.get("/v1/boards/pts/daily/members?" + many), 400, "at most 1000 ids");
  json body{{"ids", json::array()}};
  for (int i = 0; i <= 1000; ++i) body["ids"].push_back("m" + std::to_string(i));
  expect_error(s.post("/v1/boards/pts/daily/members", body.dump()), 400, "at most 1000 ids");
  expect_error(s.post("/v1/boards/pts/daily/members", "{\"ids\": [1]}"), 400, "string");
  expect_error(s.post("/v1/boards/pts/daily/members", "not json"), 400, "not JSON");
  EXPECT_EQ(s.post("/v1/boards/pts/daily/members", R"({"ids": ["plain", "nobody"]})").body,
            json::parse(R"({"records": [{"rank": 2, "member": "plain", "points": 3,
                            "achieved_at": "2026-11-20T12:00:00.000Z"}], "not_found": ["nobody"]})"));
  expect_error(s.get("/v1/boards/pts/daily/members"), 400, "ids is missing");
  expect_cursor_errors(s, top);
  // Parameters.
  expect_error(s.get(top + "?limit=0"), 400, "limit");
  expect_error(s.get(top + "?limit=1001"), 400, "limit");
  expect_error(s.get(top + "?limit=ten"), 400, "limit");
  expect_error(s.get(top + "?limit=1&limit=2"), 400, "twice");
  expect_error(s.get(top + "?offset=3"), 400, "unknown parameter 'offset'");
  expect_error(s.get("/v1/boards/pts/daily/members/plain/around?k=501"), 400, "k must");
  expect_error(s.get(top + "?period_id=2026-13-45"), 400, "not a daily period id");
  // Unknown things are 404s.
  expect_error(s.get("/v1/boards/nope/daily/top"), 404, "no board entry");
  expect_error(s.get("/v1/boards/pts/weekly/top"), 404, "has no period 'weekly'");
  expect_error(s.get(top + "?period_id=2026-12-01"), 404, "has not begun");
  expect_error(s.get(top + "?period_id=2026-10-01"), 404, "nothing to read");
  expect_error(s.get("/v1/boards/pts/daily/members/nobody"), 404, "not on");
  expect_error(s.get("/v1/nothing"), 404, "no such route");
  expect_error(s.get("/v1/boards/bad%20name/daily/top"), 400, "bad name");
  httplib::Client c("127.0.0.1", s.port());
  const auto put = c.Put(top.c_str(), "", "text/plain");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  expect_error(s.post(top, "{}"), 405, "not allowed");
}

TEST_F(ServeTest, TokensGuardTheApiButNotTheProbes) {
  const std::string tokens = "/tmp/" + prefix + "-tokens";
  std::ofstream(tokens) << "# readers\nfile-token-1\n\n  file-token-2  \n";
  const std::string text = test::read_file(config_path) + "serve:\n  tokens_file: " + tokens + "\n";
  const std::string path = test::write_text_config(prefix + "-tok", text);
  setenv("BOARDKEEPER_SERVE_TOKENS", "env-token, other-env-token", 1);
  Served s(path, log);
  unsetenv("BOARDKEEPER_SERVE_TOKENS");
  const std::string top = "/v1/boards/pts/daily/top";
  const auto with = [](const std::string& value) {
    return httplib::Headers{{"Authorization", value}};
  };
  EXPECT_EQ(s.get(top).status, 401);
  EXPECT_TRUE(s.get(top).body.contains("error"));
  EXPECT_EQ(s.get(top, with("Bearer wrong")).status, 401);
  EXPECT_EQ(s.get(top, with("Bearer file-token")).status, 401);  // a prefix of a token
  EXPECT_EQ(s.get(top, with("file-token-1")).status, 401);       // no scheme
  EXPECT_EQ(s.get(top, with("Bearer # readers")).status, 401);   // a comment is not a token
  for (const std::string t : {"file-token-1", "file-token-2", "env-token", "other-env-token"}) {
    EXPECT_EQ(s.get(top, with("Bearer " + t)).status, 200) << t;
  }
  httplib::Client c("127.0.0.1", s.port());
  for (const char* open : {"/healthz", "/readyz", "/metrics"}) {
    const auto r = c.Get(open);
    ASSERT_TRUE(r) << open;
    EXPECT_EQ(r->status, 200) << open;
  }
  kill(s.pid(), SIGTERM);
  EXPECT_EQ(test::wait_cli(s.pid()), 0);
  const std::string logged = test::read_file(log);
  EXPECT_EQ(logged.find("token-"), std::string::npos) << logged;
  // A tokens file that cannot be read stops serve before it listens (exit 2, named).
  const std::string broken = test::write_text_config(
      prefix + "-bad", test::read_file(config_path) + "serve:\n  tokens_file: /nonexistent/t\n");
  const test::RunResult r = test::run_cli({"--config", broken, "serve", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("serve.tokens_file '/nonexistent/t' cannot be read"), std::string::npos)
      << r.err;
}

// Redis stops: reads answer 503 (JSON) and /readyz fails, /healthz stays up; Redis comes
// back: the same process serves again. PostgreSQL unreachable: reads that need it 503.
TEST_F(ServeTest, OutagesAre503sAndServingResumes) {
  test::RedisServer redis;
  const std::string text = test::config_text_for(redis.url(), prefix, kBoards);
  const std::string path = test::write_text_config(prefix + "-own", text);
  {
    redis::Connection conn = redis.connect();
    const Config config = parse_config(text, path, {});
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kNow)));
    lb.apply({{"pts", "a", 5, {}, ""}});
  }
  // A tick (with PostgreSQL) syncs the board: Redis's word on what never spilled is taken.
  ASSERT_EQ(test::run_cli({"--config", path, "--now", kNow, "tick"}).exit_code, 0);
  Served s(path, log);
  const std::string top = "/v1/boards/pts/daily/top";
  EXPECT_EQ(s.get(top).status, 200);
  // PostgreSQL unreachable (Redis up): a past period (looked up in the archive) is a 503.
  const std::string no_pg = test::write_text_config(
      prefix + "-nopg", test::config_text_for(redis.url(), prefix, kBoards,
                                              "postgresql://boardkeeper@127.0.0.1:1/boards"));
  Served t(no_pg, log + "2");
  const Answer current = t.get(top);
  EXPECT_EQ(current.status, 200) << current.body.dump();  // the current period needs Redis only
  const Answer past = t.get(top + "?period_id=2026-11-19");
  EXPECT_EQ(past.status, 503) << past.body.dump();
  redis.stop();
  const Answer down = s.get(top);
  EXPECT_EQ(down.status, 503);
  EXPECT_TRUE(down.body.contains("error"));
  httplib::Client c("127.0.0.1", s.port());
  // /readyz is a background prober's word (about once a second): it follows within seconds.
  const auto readyz_becomes = [&](int status) {
    int seen = 0;
    for (int i = 0; i < 100 && seen != status; ++i, std::this_thread::sleep_for(100ms)) {
      seen = c.Get("/readyz")->status;
    }
    return seen;
  };
  EXPECT_EQ(readyz_becomes(503), 503);
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  redis.start();
  Answer up;
  for (int i = 0; i < 100 && up.status != 200; ++i, std::this_thread::sleep_for(50ms))
    up = s.get(top);
  EXPECT_EQ(up.status, 200);
  EXPECT_EQ(readyz_becomes(200), 200);

  // Per-route metrics counted all of it.
  const std::string metrics = c.Get("/metrics")->body;  // of the first serve
  EXPECT_NE(metrics.find(R"(boardkeeper_http_requests_total{code="503",route="top"} )"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(R"(boardkeeper_http_request_duration_seconds_count{route="top"})"),
            std::string::npos);
}

}  // namespace
}  // namespace bk
