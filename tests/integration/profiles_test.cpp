// Member profiles against the real binary, Redis and PostgreSQL: set by add and by stream
// events (each field on its own, the latest wins), refused when invalid, shown by every
// read, moved out of Redis when their member is hot nowhere (and still shown), found again
// after Redis forgot where they went, and copied into the history rows at archive time.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace bk {
namespace {

using json = nlohmann::json;

const char* kBoards = R"(  - name: p
    periods: [daily, weekly]
    max_points: 1000000
    hot_keep: 5
    display: 5
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-18T12:00:00Z";  // a Wednesday

class ProfilesTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  std::string names_key = prefix + ":{p}:names";
  std::string metadata_key = prefix + ":{p}:metadata";

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  test::RunResult cli(std::vector<std::string> args, const std::string& now = kNow) {
    args.insert(args.begin(), {"--config", config_path, "--now", now});
    return test::run_cli(args);
  }
  // psql's answer without its line end.
  static std::string sql(const std::string& statement) {
    std::string out = test::psql(statement);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }
  std::vector<json> lines(const std::vector<std::string>& args, const std::string& now = kNow) {
    const test::RunResult r = cli(args, now);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<json> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
  json rank(const std::string& member, const std::string& period = "daily") {
    const auto r = lines({"rank", "p", period, member, "--json"});
    return r.empty() ? json() : r.front();
  }

  // m0..m39 on board p with 100 + i points, each named "Player i", the even ones with
  // metadata {"i": i}; their names into `names`.
  void add_forty_with_profiles(std::map<std::string, std::string>& names) {
    for (int i = 0; i < 40; ++i) {
      const std::string m = "m" + std::to_string(i);
      names[m] = "Player " + std::to_string(i);
      std::vector<std::string> add{"add", "p", m, std::to_string(100 + i), "--name", names[m]};
      if (i % 2 == 0) add.insert(add.end(), {"--meta", json{{"i", i}}.dump()});
      ASSERT_EQ(cli(add).exit_code, 0);
    }
  }
};

TEST_F(ProfilesTest, EachFieldIsSetOnItsOwnAndTheLatestWins) {
  ASSERT_EQ(
      cli({"add", "p", "ann", "10", "--name", "Ann ✓", "--meta", R"({"team": "red"})"}).exit_code,
      0);
  json r = rank("ann");
  EXPECT_EQ(r["name"], "Ann ✓");
  EXPECT_EQ(r["metadata"], json({{"team", "red"}}));
  ASSERT_EQ(cli({"add", "p", "ann", "1", "--name", "Ann B"}).exit_code, 0);
  r = rank("ann");
  EXPECT_EQ(r["name"], "Ann B");
  EXPECT_EQ(r["metadata"], json({{"team", "red"}}));  // kept: the event had no meta
  ASSERT_EQ(cli({"add", "p", "ann", "1", "--meta", R"({"team": "blue", "n": [1, 2]})"}).exit_code,
            0);
  r = rank("ann", "weekly");
  EXPECT_EQ(r["name"], "Ann B");
  EXPECT_EQ(r["metadata"], json({{"team", "blue"}, {"n", {1, 2}}}));
  EXPECT_EQ(r["points"], 12);
  // Without a profile: no fields at all (not null ones).
  ASSERT_EQ(cli({"add", "p", "bob", "3"}).exit_code, 0);
  r = rank("bob");
  EXPECT_FALSE(r.contains("name"));
  EXPECT_FALSE(r.contains("metadata"));
  // Text output shows the name beside the member.
  EXPECT_NE(cli({"top", "p", "daily"}).out.find("Ann B"), std::string::npos);
}

TEST_F(ProfilesTest, InvalidProfilesAreRefusedWithTheReasonAndChangeNothing) {
  ASSERT_EQ(cli({"add", "p", "ann", "10", "--name", "Ann", "--meta", R"({"a": 1})"}).exit_code, 0);
  const std::string big_meta = R"({"s": ")" + std::string(2040, 'x') + "\"}";  // 2049 bytes
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad{
      {{"--name", ""}, "name is empty"},
      {{"--name", std::string(129, 'n')}, "name is 129 bytes, more than 128"},
      {{"--name", "a\xff"}, "name is not valid UTF-8"},
      {{"--meta", big_meta}, "meta is 2049 bytes, more than 2048"},
      {{"--meta", "[1, 2]"}, "meta is not a JSON object"},
      {{"--meta", R"({"a": "\u0000"})"}, "meta holds a NUL character"},
      {{"--meta", R"({"a": )"}, "meta is not valid JSON"},
      {{"--meta", "{\"a\": \"\xc3\"}"}, "meta is not valid JSON"},
      {{"--name", "Fine", "--meta", "7"}, "meta is not a JSON object"},
  };
  for (const auto& [args, reason] : bad) {
    std::vector<std::string> add{"add", "p", "ann", "5"};
    add.insert(add.end(), args.begin(), args.end());
    const test::RunResult r = cli(add);
    EXPECT_EQ(r.exit_code, 1) << reason;
    EXPECT_NE(r.err.find("refused: " + reason), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("board 'p' member 'ann'"), std::string::npos) << r.err;
  }
  const json r = rank("ann");
  EXPECT_EQ(r["points"], 10);  // no refused update was applied
  EXPECT_EQ(r["name"], "Ann");
  EXPECT_EQ(r["metadata"], json({{"a", 1}}));
  // The limits themselves are fine: 128 bytes of 4-byte characters, a 2048-byte object.
  std::string name;
  for (int i = 0; i < 32; ++i) name += "\xf0\x9f\x8f\x86";  // U+1F3C6
  const std::string meta = R"({"s": ")" + std::string(2039, 'x') + "\"}";
  ASSERT_EQ(meta.size(), 2048U);
  ASSERT_EQ(cli({"add", "p", "ann", "1", "--name", name, "--meta", meta}).exit_code, 0);
  EXPECT_EQ(rank("ann")["name"], name);
  EXPECT_EQ(rank("ann")["metadata"]["s"].get<std::string>().size(), 2039U);
}

TEST_F(ProfilesTest, StreamEventsCarryProfilesAndABadOneIsDeadLettered) {
  const std::string stream = test::events_stream(prefix);
  const auto xadd = [&](const std::vector<std::string>& fields) {
    redis::Args args{"XADD", stream, "*"};
    args.insert(args.end(), fields.begin(), fields.end());
    conn.command(args).checked();
  };
  xadd({"board", "p", "member", "ann", "value", "4", "name", "Ann", "meta", R"({"lvl": 2})"});
  xadd({"board", "p", "member", "bob", "value", "6", "name", "Bob"});
  xadd({"board", "p", "member", "ann", "value", "1", "name", "Ann 2"});
  xadd({"board", "p", "member", "cyd", "value", "9", "meta", "not json"});
  const test::RunResult run = cli({"ingest", "--drain"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto top = lines({"top", "p", "daily", "--json"});
  ASSERT_EQ(top.size(), 2U);  // cyd's event was refused
  EXPECT_EQ(top[0]["member"], "bob");
  EXPECT_EQ(top[0]["name"], "Bob");
  EXPECT_EQ(top[1]["name"], "Ann 2");
  EXPECT_EQ(top[1]["metadata"], json({{"lvl", 2}}));
  const redis::Reply dead = conn.command({"XRANGE", stream + ":dead", "-", "+"}).checked();
  ASSERT_EQ(dead.elements.size(), 1U);
  std::string reason;
  const redis::Reply& fields = dead.at(0).at(1);
  for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    if (fields.at(i).as_string() == "reason") reason = fields.at(i + 1).as_string();
  }
  EXPECT_NE(reason.find("meta is not valid JSON"), std::string::npos) << reason;
  EXPECT_NE(reason.find("member 'cyd'"), std::string::npos) << reason;
}

// The 41 rows of board p: m0..m39 with their names (`names`) and, the even ones, metadata
// {"i": i}; "plain" with no profile.
void expect_every_profile(const std::vector<json>& rows,
                          const std::map<std::string, std::string>& names) {
  ASSERT_EQ(rows.size(), 41U);
  for (const json& r : rows) {
    const std::string m = r["member"];
    if (m == "plain") {
      EXPECT_FALSE(r.contains("name"));
      continue;
    }
    EXPECT_EQ(r["name"], names.at(m)) << m;
    const int i = std::stoi(m.substr(1));
    if (i % 2 == 0) {
      EXPECT_EQ(r["metadata"], json({{"i", i}})) << m;
    } else {
      EXPECT_FALSE(r.contains("metadata")) << m;
    }
  }
}

// 40 members with profiles; tick keeps 5 hot in each period: the other 35 are hot nowhere
// and their profiles leave Redis for PostgreSQL, while every read still shows them. Then the
// daily period is archived: its history rows, hot and cold, carry the profiles.
TEST_F(ProfilesTest, ProfilesOfMembersHotNowhereLeaveRedisAndReachHistory) {
  std::map<std::string, std::string> names;
  ASSERT_NO_FATAL_FAILURE(add_forty_with_profiles(names));
  ASSERT_EQ(cli({"add", "p", "plain", "1"}).exit_code, 0);  // no profile at all
  EXPECT_EQ(conn.command({"HLEN", names_key}).as_int(), 40);
  ASSERT_EQ(cli({"tick"}).exit_code, 0);
  // Hot in some period: m35..m39 (the best 5 of both). Each hash's marker "" is one field
  // more.
  EXPECT_EQ(conn.command({"HLEN", names_key}).as_int(), 5 + 1);
  EXPECT_EQ(conn.command({"HLEN", metadata_key}).as_int(), 2 + 1);  // m36, m38 and its marker
  EXPECT_EQ(conn.command({"HEXISTS", names_key, "m39"}).as_int(), 1);
  EXPECT_EQ(sql("SELECT count(*) FROM " + prefix + ".profiles WHERE board = 'p'"), "35");

  const auto check_all = [&](const std::vector<json>& rows) { expect_every_profile(rows, names); };
  check_all(lines({"top", "p", "daily", "-n", "100", "--json"}));
  EXPECT_EQ(rank("m3", "weekly")["name"], "Player 3");
  EXPECT_EQ(lines({"around", "p", "daily", "m10", "-k", "1", "--json"}).at(1)["metadata"],
            json({{"i", 10}}));

  // A cold member scores again with a new name only: the new name, the moved meta.
  ASSERT_EQ(cli({"add", "p", "m4", "1", "--name", "Four"}).exit_code, 0);
  names["m4"] = "Four";
  EXPECT_EQ(rank("m4")["name"], "Four");
  EXPECT_EQ(rank("m4")["metadata"], json({{"i", 4}}));

  // Redis forgets its profile hashes (and so the marker saying some are in PostgreSQL):
  // cold members lose their names until the next tick marks the board again.
  conn.command({"DEL", names_key, metadata_key}).checked();
  EXPECT_FALSE(rank("m3").contains("name"));
  ASSERT_EQ(cli({"tick"}).exit_code, 0);
  EXPECT_EQ(rank("m3")["name"], "Player 3");
  // What the DEL lost (the hot members' profiles, m4's new name) is set again.
  for (int i : {4, 35, 36, 37, 38, 39}) {
    const std::string m = "m" + std::to_string(i);
    std::vector<std::string> add{"add", "p", m, "0", "--name", names[m]};
    if (i % 2 == 0 && i != 4) add.insert(add.end(), {"--meta", json{{"i", i}}.dump()});
    ASSERT_EQ(cli(add).exit_code, 0);
  }

  // Two days on, the daily period is archived with every profile in its rows.
  const std::string later = "2026-11-20T01:00:00Z";
  ASSERT_EQ(cli({"tick"}, later).exit_code, 0);
  check_all(lines({"history", "p", "daily", "2026-11-18", "-n", "100", "--json"}, later));
  EXPECT_EQ(sql("SELECT name || ' ' || (metadata->>'i') FROM " + prefix +
                ".history WHERE board = 'p' AND period = 'daily' AND member = 'm38'"),
            "Player 38 38");
  EXPECT_EQ(
      sql("SELECT count(*) FROM " + prefix + ".history WHERE period = 'daily' AND name IS NULL"),
      "1");  // plain
  // m39's profile went to PostgreSQL before the archive (it is still hot in the week).
  EXPECT_EQ(sql("SELECT name FROM " + prefix + ".history WHERE member = 'm39'"), "Player 39");
  EXPECT_EQ(conn.command({"HEXISTS", names_key, "m39"}).as_int(), 1);
}

// Each profile hash has its own marker: on a board whose members have names only, a read
// of members whose names are in Redis asks PostgreSQL nothing (it did on every read while
// one marker stood for both fields and every member lacked a metadata); members whose
// names moved are still found there.
TEST_F(ProfilesTest, PostgreSQLIsAskedOnlyForAFieldThatMoved) {
  for (int i = 0; i < 8; ++i) {
    const std::string m = "n" + std::to_string(i);
    ASSERT_EQ(cli({"add", "p", m, std::to_string(10 + i), "--name", "Name " + m}).exit_code, 0);
  }
  ASSERT_EQ(cli({"tick"}).exit_code, 0);  // n0..n2 spill, their names move
  EXPECT_EQ(conn.command({"HEXISTS", names_key, ""}).as_int(), 1);
  EXPECT_EQ(conn.command({"EXISTS", metadata_key}).as_int(), 0);
  // Scans of the profiles table, as PostgreSQL counts them once a session has ended.
  const auto lookups = [&] {
    return std::stoll(
        sql("SELECT coalesce(sum(seq_scan + idx_scan), 0) FROM "
            "pg_stat_user_tables WHERE schemaname = '" +
            prefix + "' AND relname = 'profiles'"));
  };
  const std::int64_t before = lookups();
  for (int i = 0; i < 3; ++i) {
    const auto top = lines({"top", "p", "daily", "-n", "5", "--json"});
    ASSERT_EQ(top.size(), 5U);
    EXPECT_EQ(top[0]["name"], "Name n7");
    EXPECT_FALSE(top[0].contains("metadata"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(lookups(), before);
  // The spilled members' names are read from PostgreSQL.
  EXPECT_EQ(rank("n1")["name"], "Name n1");
  bool asked = false;
  for (int i = 0; i < 50 && !asked; ++i) {
    asked = lookups() > before;
    if (!asked) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(asked);
}

}  // namespace
}  // namespace bk
