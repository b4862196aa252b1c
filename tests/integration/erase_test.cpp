// erase (the right to erasure) against the real binary, Redis and PostgreSQL: a member present
// hot, cold, rehydrated, archived (small and large periods), with profiles in Redis and in
// PostgreSQL, banned, held and dead-lettered on several boards is forgotten everywhere the
// glob reaches and nowhere else; other members are untouched; a re-run removes nothing and
// says so; the audit keeps a keyed hash; a dry run changes nothing; and an erase SIGKILLed at
// random points never lets anything it removed come back and is finished by a re-run.
#include <gtest/gtest.h>
#include <signal.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cold/cold_store.h"
#include "harness.h"
#include "hot/keys.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using json = nlohmann::json;

const char* kBoards = R"(  - name: "e:*"
    periods: [daily, weekly]
    max_points: 100000
    hot_keep: 2
    display: 2
    retention: {default: 3650d}
  - name: "f:*"
    periods: [daily]
    max_points: 100000
    hot_keep: 2
    display: 2
    retention: {default: 3650d}
)";

const std::string kVictim = "vic-q7z";       // no other string of the test contains it
const char* kDay1 = "2026-11-16T12:00:00Z";  // a Monday (week 2026-W47)
const char* kDay2 = "2026-11-17T12:00:00Z";
const char* kDay3 = "2026-11-18T12:00:00Z";

// Everything of a test's Redis keys and PostgreSQL schema, as text lines; `keep` says which.
using Snapshot = std::map<std::string, std::vector<std::string>>;

class EraseTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_text =
      test::config_text(prefix, kBoards) + "history:\n  large_period_rows: 4\n";
  std::string config_path = test::write_text_config(prefix, config_text);
  Config config = parse_config(config_text, "test.yaml", {});
  redis::Connection conn = test::connect_redis();
  std::string dead = test::events_stream(prefix) + ":dead";

  void SetUp() override { ASSERT_EQ(cli({"migrate"}).exit_code, 0); }

  test::RunResult cli(std::vector<std::string> args, const std::string& now = kDay3) {
    args.insert(args.begin(), {"--config", config_path, "--now", now});
    return test::run_cli(args);
  }
  void ok(const std::vector<std::string>& args, const std::string& now) {
    const test::RunResult r = cli(args, now);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  json erase(std::vector<std::string> args) {
    args.insert(args.begin(), {"erase", kVictim, "--json"});
    const test::RunResult r = cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  std::string sql(const std::string& statement) {
    std::string out = test::psql(statement);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }

  void ban(const std::string& board, const std::string& member) {
    cold::ColdStore store(test::postgres_url(), prefix);
    service::Leaderboards lb(config, conn, Clock(*parse_rfc3339(kDay3)), &store);
    lb.moderation().ban(board, member, "test");
  }

  // A counted page of one of the board's periods starts at the victim's cold row (as a spill
  // of a big period cuts them, every 1000 rows): erase must leave no page key naming it.
  void split_page_at_victim(const std::string& board) {
    const std::string q = prefix + ".";
    sql("WITH v AS (SELECT board, period, period_id, encoded, member FROM " + q +
        "cold_members WHERE member = '" + kVictim + "' AND board = '" + board +
        "' ORDER BY period LIMIT 1), n AS (SELECT count(*) AS n FROM " + q +
        "cold_members c, v WHERE c.board = v.board AND c.period = v.period AND c.period_id ="
        " v.period_id AND (c.encoded, c.member) >= (v.encoded, v.member)), u AS (UPDATE " +
        q +
        "cold_pages p SET rows = p.rows - n.n FROM v, n WHERE p.board = v.board AND p.period ="
        " v.period AND p.period_id = v.period_id AND p.member = '') INSERT INTO " +
        q + "cold_pages SELECT v.board, v.period, v.period_id, v.encoded, v.member, n.n FROM v, n");
    ASSERT_EQ(sql("SELECT count(*) FROM " + q + "cold_pages WHERE member = '" + kVictim + "'"),
              "1");
    expect_pages_consistent();
  }

  // The victim everywhere a member can be, and others around it.
  void populate() {
    // Day 1: three boards; e:1's daily will be a large archived period (5 rows >= 4), e:2's
    // and f:1's small ones.
    ok({"add", "e:1", kVictim, "5", "--name", "Vic"}, kDay1);
    for (const auto& [m, v] : {std::pair{"a", "50"}, {"b", "40"}, {"c", "30"}, {"d", "20"}})
      ok({"add", "e:1", m, v, "--name", std::string("N") + m}, kDay1);
    ok({"add", "e:2", kVictim, "5"}, kDay1);
    ok({"add", "e:2", "x", "50"}, kDay1);
    ok({"add", "f:1", kVictim, "7"}, kDay1);
    ok({"add", "f:1", "y", "8"}, kDay1);
    // Day 2: the days archive; the weeks spill beyond 2 (the victim goes cold on e:1), and
    // its e:1 profile moves to PostgreSQL (it is hot nowhere there).
    ok({"tick"}, kDay2);
    ok({"tick"}, kDay2);
    // Day 3: e:2's periods spill the victim; then e:1's week rehydrates it and its day has it
    // hot, with a profile in Redis.
    ok({"add", "e:2", "x", "50"}, kDay3);
    ok({"add", "e:2", "z", "40", "--name", "Zed"}, kDay3);
    ok({"add", "e:2", kVictim, "1", "--name", "V2"}, kDay3);
    ok({"add", "f:1", kVictim, "3"}, kDay3);
    ok({"add", "f:1", "y", "9"}, kDay3);
    ok({"add", "f:1", "w", "10"}, kDay3);
    ok({"tick"}, kDay3);
    split_page_at_victim("e:2");
    ok({"add", "e:1", kVictim, "100", "--name", "Vic2"}, kDay3);
    ok({"add", "e:1", "a", "1"}, kDay3);
    // Banned on e:2, held on e:1, dead-lettered on e:1 and f:1 (and another member's letter).
    ban("e:2", kVictim);
    conn.command({"HSET", prefix + ":{e:1}:held", kVictim, "1-1"});
    conn.command({"HSET", prefix + ":{e:1}:held", "b", "1-2"});
    for (const auto& [board, member] :
         {std::pair{"e:1", kVictim}, {"f:1", kVictim}, {"e:1", std::string("a")}}) {
      conn.command({"XADD", dead, "*", "reason", "test", "stream_id", "1-1", "board", board,
                    "member", member, "value", "1"});
    }
  }

  // Every Redis key of the test and every row of the schema's tables as text, without what
  // names the victim when `others_only` (and without the counters erase may bump: :meta's
  // gen and rgen, the bans generation; nor the tables that count or audit: cold_pages,
  // periods' member counts, erasures, serve_keys).
  Snapshot snapshot(bool others_only);
  void redis_snapshot(bool others_only, Snapshot& out);
  void postgres_snapshot(bool others_only, Snapshot& out);
  // What still names the victim on the boards whose names start with `board_prefix` ("" for
  // all), in Redis (ZSET and SET members, HASH fields, stream entries' member fields) and in
  // every table of the schema (any row whose text holds the id).
  std::vector<std::string> leftovers(const std::string& board_prefix);
  std::vector<std::string> tables();
  // Every period's page counts add up to its cold rows.
  void expect_pages_consistent() {
    EXPECT_EQ(
        sql("SELECT count(*) FROM (SELECT board, period, period_id, sum(rows) AS n FROM " + prefix +
            ".cold_pages GROUP BY 1, 2, 3) p FULL JOIN (SELECT board, period,"
            " period_id, count(*) AS n FROM " +
            prefix +
            ".cold_members GROUP BY 1, 2, 3) c USING (board, period, period_id)"
            " WHERE coalesce(p.n, 0) <> coalesce(c.n, 0)"),
        "0");
  }
};

bool names_victim(const std::string& text) {
  return text.find(kVictim) != std::string::npos;
}

std::vector<std::string> EraseTest::tables() {
  std::vector<std::string> out;
  std::istringstream in(
      sql("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON"
          " n.oid = c.relnamespace WHERE n.nspname = '" +
          prefix + "' AND c.relkind IN ('r', 'p') ORDER BY 1"));
  for (std::string t; std::getline(in, t);) out.push_back(t);
  return out;
}

void EraseTest::redis_snapshot(bool others_only, Snapshot& out) {
  for (const std::string& key : test::keys_with_prefix(conn, prefix)) {
    const std::string type = conn.command({"TYPE", key}).as_string();
    std::vector<std::string>& lines = out["redis " + key];
    const auto add = [&](const std::string& field, const std::string& value) {
      if (others_only && (field == kVictim || names_victim(value))) return;
      const bool counter = (field == "gen" || field == "rgen") && key.size() > 5 &&
                           key.compare(key.size() - 5, 5, ":meta") == 0;
      if (others_only && (counter || (field.empty() && key.find(":bans") != std::string::npos)))
        return;
      lines.push_back(field + "=" + value);
    };
    if (type == "zset") {
      const auto r = conn.command({"ZRANGE", key, "0", "-1", "WITHSCORES"});
      for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2)
        add(r.elements[i].str, r.elements[i + 1].str);
    } else if (type == "set") {
      for (const auto& m : conn.command({"SMEMBERS", key}).elements) add(m.str, "");
    } else if (type == "hash") {
      const auto r = conn.command({"HGETALL", key});
      for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2)
        add(r.elements[i].str, r.elements[i + 1].str);
    } else if (type == "stream") {
      for (const auto& e : conn.command({"XRANGE", key, "-", "+"}).elements) {
        std::string fields;
        for (const auto& f : e.elements[1].elements) fields += f.str + " ";
        add(e.elements[0].str, fields);
      }
    } else if (type == "string") {
      add("", conn.command({"GET", key}).str);
    }
    std::sort(lines.begin(), lines.end());
    if (lines.empty()) out.erase("redis " + key);
  }
}

void EraseTest::postgres_snapshot(bool others_only, Snapshot& out) {
  const std::set<std::string> counting{"cold_pages", "erasures", "serve_keys", "periods"};
  for (const std::string& t : tables()) {
    if (others_only && counting.count(t) > 0) continue;
    std::istringstream in(sql("SELECT x::text FROM " + prefix + "." + t + " x ORDER BY 1"));
    std::vector<std::string>& lines = out["pg " + t];
    for (std::string row; std::getline(in, row);) {
      if (!(others_only && names_victim(row))) lines.push_back(row);
    }
  }
  if (others_only) {  // periods without their member counts
    std::istringstream in(sql("SELECT board, period, period_id, status, archived_at FROM " +
                              prefix + ".periods ORDER BY 1, 2, 3"));
    for (std::string row; std::getline(in, row);) out["pg periods"].push_back(row);
  }
}

Snapshot EraseTest::snapshot(bool others_only) {
  Snapshot out;
  redis_snapshot(others_only, out);
  postgres_snapshot(others_only, out);
  return out;
}

std::vector<std::string> EraseTest::leftovers(const std::string& board_prefix) {
  std::vector<std::string> out;
  const std::string tag = prefix + ":{" + board_prefix;
  Snapshot all;
  redis_snapshot(false, all);
  for (const auto& [key, lines] : all) {
    const bool dead_stream = key == "redis " + dead;
    if (!dead_stream && key.compare(6, tag.size(), tag) != 0) continue;
    for (const std::string& line : lines) {
      const bool named = line.compare(0, kVictim.size() + 1, kVictim + "=") == 0 ||
                         (dead_stream && line.find("member " + kVictim + " ") != std::string::npos);
      const bool on_board = !dead_stream || line.find("board " + board_prefix) != std::string::npos;
      if (named && on_board) out.push_back(key + ": " + line);
    }
  }
  std::string query;  // one statement over every table
  for (const std::string& t : tables()) {
    query += std::string(query.empty() ? "" : " UNION ALL ") + "SELECT '" + t +
             "' || ': ' || count(*) || ' rows' FROM " + prefix + "." + t +
             " x WHERE x::text LIKE '%" + kVictim + "%' AND x::text LIKE '(" + board_prefix +
             "%' HAVING count(*) > 0";
  }
  std::istringstream in(sql(query));
  for (std::string line; std::getline(in, line);) out.push_back("pg " + line);
  return out;
}

TEST_F(EraseTest, ADryRunCountsEveryPieceAndChangesNothing) {
  populate();
  ASSERT_FALSE(leftovers("e:").empty());
  Snapshot before = snapshot(false);
  const json e = erase({"--dry-run"});
  EXPECT_TRUE(e["dry_run"].get<bool>());
  ASSERT_EQ(e["boards"].size(), 3u) << e.dump();
  EXPECT_EQ(e["dead_letters"], 2);
  EXPECT_GT(e["total"].get<std::int64_t>(), 10) << e.dump();
  // Nothing changed but the deployment's erasure key, made by the first erase that needs it
  // (a key of the deployment, as serve's cursor key: nobody's data).
  Snapshot after = snapshot(false);
  EXPECT_EQ(after["pg serve_keys"].size(), 1u);
  after.erase("pg serve_keys");
  before.erase("pg serve_keys");
  EXPECT_EQ(after, before);
  EXPECT_EQ(sql("SELECT count(*) FROM " + prefix + ".erasures"), "0");
}

TEST_F(EraseTest, EveryPieceGoesOnTheMatchingBoardsAndNothingElse) {
  populate();
  const std::vector<std::string> had = leftovers("e:");
  ASSERT_GE(had.size(), 10u);
  ASSERT_FALSE(leftovers("f:").empty());
  const Snapshot others = snapshot(true);
  const Snapshot f_before = snapshot(false);

  const json e = erase({"--board", "e:*"});
  EXPECT_FALSE(e["dry_run"].get<bool>());
  ASSERT_EQ(e["boards"].size(), 2u) << e.dump();
  EXPECT_EQ(e["boards"][0]["board"], "e:1");
  EXPECT_EQ(e["boards"][1]["board"], "e:2");
  EXPECT_EQ(e["boards"][0]["held"], 1);
  EXPECT_GE(e["boards"][0]["profiles"].get<std::int64_t>(), 2);  // Redis and PostgreSQL
  EXPECT_GE(e["boards"][1]["bans"].get<std::int64_t>(), 1);
  EXPECT_EQ(e["dead_letters"], 1);  // e:1's letter; f:1's stays (the glob)
  bool large = false, small = false, hot = false, cold = false;
  for (const auto& b : e["boards"]) {
    for (const auto& p : b["periods"]) {
      if (p["archived"].get<bool>() && b["board"] == "e:1") large = p["history"] == 1;
      if (p["archived"].get<bool>() && b["board"] == "e:2") small = p["history"] == 1;
      hot = hot || p["hot"].get<std::int64_t>() > 0;
      cold = cold || p["cold"].get<std::int64_t>() > 0;
    }
  }
  EXPECT_TRUE(large && small && hot && cold) << e.dump();

  EXPECT_EQ(leftovers("e:"), std::vector<std::string>{});
  EXPECT_FALSE(leftovers("f:").empty());  // outside the glob
  EXPECT_EQ(snapshot(true), others);      // nobody else lost or gained anything
  expect_pages_consistent();
  // The archived periods count one member less; other ranks stay as archived.
  EXPECT_EQ(sql("SELECT members FROM " + prefix +
                ".periods WHERE board = 'e:1' AND period = 'daily' AND period_id = '2026-11-16'"),
            "4");
  const test::RunResult top = cli({"top", "e:1", "weekly"});
  EXPECT_EQ(top.out.find(kVictim), std::string::npos) << top.out;
}

TEST_F(EraseTest, ARerunRemovesNothingAndTheAuditKeepsOnlyAHash) {
  populate();
  const json first = erase({});
  EXPECT_EQ(first["earlier_requests"], 0);
  EXPECT_EQ(first["boards"].size(), 3u) << first.dump();
  EXPECT_EQ(leftovers(""), std::vector<std::string>{});
  // What is left: every key and row but the counters a re-run may bump (a re-run's remove()
  // sets a tombstone that its E3 clears again, bumping :meta's rgen and gen).
  const Snapshot after = snapshot(true);

  const test::RunResult again = cli({"erase", kVictim});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("nothing left to erase"), std::string::npos) << again.out;
  const json third = erase({});
  EXPECT_EQ(third["total"], 0);
  EXPECT_EQ(third["boards"].size(), 0u);
  EXPECT_EQ(third["earlier_requests"], 2);  // matched by the hash
  EXPECT_EQ(third["member_hash"], first["member_hash"]);
  EXPECT_EQ(snapshot(true), after);
  EXPECT_EQ(leftovers(""), std::vector<std::string>{});

  const std::string hash = first["member_hash"];
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(sql("SELECT count(*) FROM " + prefix + ".erasures WHERE member_hash = '" + hash +
                "' AND finished_at IS NOT NULL"),
            "3");
  EXPECT_EQ(
      sql("SELECT boards, rows, dead_letters FROM " + prefix + ".erasures ORDER BY id LIMIT 1"),
      "{e:1,e:2,f:1}|" + std::to_string(first["total"].get<std::int64_t>() - 2) + "|2");
  EXPECT_EQ(
      sql("SELECT count(*) FROM " + prefix + ".erasures x WHERE x::text LIKE '%" + kVictim + "%'"),
      "0");
  // Another member's hash differs.
  const test::RunResult other = cli({"erase", "a", "--dry-run", "--json"});
  EXPECT_NE(json::parse(other.out)["member_hash"], first["member_hash"]);
}

TEST_F(EraseTest, BadInputIsAUsageError) {
  EXPECT_EQ(cli({"erase", ""}).exit_code, 2);
  const test::RunResult r = cli({"erase", "m", "--board", "a b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--board"), std::string::npos) << r.err;
}

// A board Redis still has live periods of, but that no entry of the config covers any more:
// erase cannot resolve its periods, so it must not say it is done. It fails naming the board
// (exit 1) and leaves the audit row unfinished; with the board back in the config, a re-run
// finishes the job.
TEST_F(EraseTest, ABoardTheConfigNoLongerCoversFailsTheEraseUntilItIsBack) {
  ok({"add", "e:1", kVictim, "5"}, kDay3);
  ok({"add", "f:1", kVictim, "7"}, kDay3);
  const std::string narrow_path =
      test::write_text_config(prefix + "-narrow", test::config_text(prefix, R"(  - name: "f:*"
    periods: [daily]
    max_points: 100000
    retention: {default: 3650d}
)"));
  const test::RunResult r =
      test::run_cli({"--config", narrow_path, "--now", kDay3, "erase", kVictim});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("'e:1'"), std::string::npos) << r.err;
  EXPECT_EQ(sql("SELECT count(*) FROM " + prefix + ".erasures WHERE finished_at IS NULL"), "1");
  EXPECT_NE(cli({"rank", "e:1", "daily", kVictim}).out.find(kVictim), std::string::npos)
      << "still listed: the erase did not claim otherwise";
  EXPECT_EQ(cli({"erase", kVictim}).exit_code, 0);
  EXPECT_EQ(sql("SELECT count(*) FROM " + prefix + ".erasures WHERE finished_at IS NULL"), "0");
  EXPECT_TRUE(leftovers("").empty());
}

// A tick moving profiles reads them in Redis, then writes them to PostgreSQL; an erase that
// deleted both in between would see the profile come back. Both take the board's profile
// lock: while a tick holds it (here: the test), the erase waits and deletes nothing of the
// profile; once it is free, the erase finishes. And a tick waits for an erase holding it.
TEST_F(EraseTest, EraseAndATickMovingProfilesTakeTurnsOnTheBoardsProfileLock) {
  populate();
  const auto waiting_for_a_lock = [&] {
    return sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") != "0";
  };
  const std::string names = hot::BoardKeys(prefix, "e:1").names();
  ASSERT_EQ(conn.command({"HGET", names, kVictim}).as_string(), "Vic2");
  cold::ColdStore holder(test::postgres_url(), prefix);
  // Starts `run` in a thread while the test holds the board's profile lock, checks that it
  // waits for the lock (PostgreSQL shows it) and has not finished, then `meanwhile`, then
  // releases the lock and waits for it to finish.
  const auto waits_for_the_lock = [&](const std::string& board, const std::function<void()>& run,
                                      const std::function<void()>& meanwhile) {
    holder.lock_profiles(board);
    std::atomic<bool> done{false};
    std::thread t([&] {
      run();
      done = true;
    });
    bool waiting = false;
    for (int i = 0; i < 3000 && !waiting && !done.load(); ++i) {
      waiting = waiting_for_a_lock();
      if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    EXPECT_TRUE(waiting) << board;
    EXPECT_FALSE(done.load()) << board;
    meanwhile();
    holder.unlock_profiles(board);
    t.join();
  };
  int erase_exit = -1;
  waits_for_the_lock(
      "e:1",
      [&] {
        erase_exit = cli({"erase", kVictim, "--board", "e:1"}).exit_code;
      },
      // Its Redis profile is still there: E2 and E3 wait for the lock.
      [&] {
        const redis::Reply r = conn.command({"HGET", names, kVictim});
        EXPECT_EQ(r.is_nil() ? std::string("(nil)") : r.str, "Vic2");
      });
  EXPECT_EQ(erase_exit, 0);
  EXPECT_TRUE(conn.command({"HGET", names, kVictim}).is_nil());
  // The other way round: a tick that moves or copies profiles waits while it is held.
  int tick_exit = -1;
  waits_for_the_lock(
      "e:2", [&] { tick_exit = cli({"tick"}, "2026-11-30T12:00:00Z").exit_code; }, [] {});
  EXPECT_EQ(tick_exit, 0);
}

// Leftovers that are data: a later run's remove() sets the tombstone again (a member of a
// period's :stale set, which names no points) until its E3 clears it.
std::vector<std::string> without_tombstones(std::vector<std::string> leftovers) {
  leftovers.erase(
      std::remove_if(leftovers.begin(), leftovers.end(),
                     [](const std::string& l) { return l.find(":stale: ") != std::string::npos; }),
      leftovers.end());
  return leftovers;
}

// At least 20 erases SIGKILLed at random points, a tick after each (it spills, archives and
// moves profiles: whatever could bring a removed piece back); what names the victim never
// grows, and a last run leaves nothing of it and everyone else as they were.
TEST_F(EraseTest, AKilledEraseNeverBringsAnythingBackAndARerunFinishesIt) {
  populate();
  // A tick first, so the ticks between the kills find nothing of the others left to do
  // (a spill beyond hot_keep, a profile to move): what they then see changed is erase's.
  ok({"tick"}, kDay3);
  const Snapshot others = snapshot(true);
  std::size_t left = leftovers("").size();
  ASSERT_GE(left, 10u);
  std::mt19937 rng(std::random_device{}());
  // Kill delays up to 250 ms, and up to what the last run that finished took once one did:
  // a rerun that finds little left to do ends in tens of ms, so on a quiet machine most of
  // the fixed 250 ms delays came after the end (8 and 15 kills in 80 runs were seen).
  int longest_ms = 250;
  const std::string log = "/tmp/bk-erase-kill-" + prefix + ".log";
  bool gone_from_top = false;
  int finished = 0;  // runs that ended before their kill
  // Until 20 runs were killed (a run may finish before its kill), 80 runs at most.
  int killed = 0;
  for (int run = 0; run < 80 && killed < 20; ++run) {
    const auto started = std::chrono::steady_clock::now();
    const int pid =
        test::spawn_cli({"--config", config_path, "--now", kDay3, "erase", kVictim}, log);
    test::Reaper reaper{pid};
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, longest_ms)(rng)));
    kill(pid, SIGKILL);
    const int rc = test::wait_cli(pid);
    EXPECT_TRUE(rc == 0 || rc == 128 + SIGKILL) << rc << " " << test::read_file(log);
    if (rc == 0) {
      longest_ms =
          std::max(5, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::steady_clock::now() - started)
                                           .count()));
    }
    finished += rc == 0 ? 1 : 0;
    killed += rc == 0 ? 0 : 1;
    ok({"tick"}, kDay3);
    // Data only: a later run's remove() sets the tombstone again (a member of a period's
    // :stale set, which names no points) until its E3 clears it.
    const std::vector<std::string> now = without_tombstones(leftovers(""));
    EXPECT_LE(now.size(), left) << "run " << run
                                << ": something came back: " << testing::PrintToString(now);
    left = now.size();
    // Once a run got past e:1, reads never list the victim again.
    const test::RunResult top = cli({"top", "e:1", "daily"});
    const bool listed = top.out.find(kVictim) != std::string::npos;
    EXPECT_FALSE(listed && gone_from_top) << "run " << run << ": " << top.out;
    gone_from_top = gone_from_top || !listed;
  }
  EXPECT_EQ(killed, 20);
  std::cout << "[ kills    ] " << killed << " of " << killed + finished << " runs killed, " << left
            << " pieces of the victim left before the last run\n";
  EXPECT_FALSE(erase({})["dry_run"].get<bool>());
  EXPECT_EQ(leftovers(""), std::vector<std::string>{});
  EXPECT_EQ(snapshot(true), others);
  expect_pages_consistent();
  EXPECT_EQ(sql("SELECT count(*) FROM " + prefix + ".erasures WHERE finished_at IS NULL"), "0");
}

}  // namespace
}  // namespace bk
