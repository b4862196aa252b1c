// Close notices against real Redis and PostgreSQL: one notice per archived period, written
// with the archive and equal to its history rows (a tiered board's counts per tier and its
// rows' tiers as the history view has them); each reaches its stream exactly once however
// tick is stopped (SIGKILL anywhere, Redis restarted empty, a stream Redis lost or rolled back,
// an unwritable stream, Redis down while publishing); the NOTIFY; and the `closes` command.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "cold/closes.h"
#include "cold/cold_store.h"
#include "cold/history.h"
#include "core/stop_points.h"
#include "harness.h"
#include "hot/closes.h"
#include "hot/keys.h"
#include "lifecycle/closes.h"
#include "lifecycle/tick.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using service::Leaderboards;
using service::Update;
using service::UpdateStatus;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

const Instant kDay = at("2027-01-10T00:00:00Z");  // the hours every test fills

// Hourly boards: `arena` on the default stream with three standings inline, the `cup:*`
// boards on a stream of their own (with a hash tag, as a cluster wants none but allows it),
// and `ranked`, with tiers (one no member reaches), on the default stream with five inline.
std::string boards_yaml(const std::string& prefix) {
  return R"(  - name: arena
    periods: [hourly]
    max_points: 1000000
    hot_keep: 4
    display: 2
    notice_top: 3
    archive: {grace: 1m}
    retention: {default: 3650d}
  - name: cup:*
    periods: [hourly]
    max_points: 1000000
    hot_keep: 4
    display: 2
    closes_stream: ")" +
         prefix + R"(:{cups}:closes"
    archive: {grace: 1m}
    retention: {default: 3650d}
  - name: ranked
    periods: [hourly]
    max_points: 1000000
    hot_keep: 4
    display: 2
    notice_top: 5
    archive: {grace: 1m}
    retention: {default: 3650d}
    tiers:
      - {name: champion, top: 1}
      - {name: gold, top: "25%"}
      - {name: platinum, min_points: 900}
      - {name: silver, min_points: 20}
)";
}

struct Entry {
  std::string id;
  std::map<std::string, std::string> fields;
};

// XRANGE <stream> - +.
std::vector<Entry> entries(redis::Connection& c, const std::string& stream) {
  std::vector<Entry> out;
  const redis::Reply r = c.command({"XRANGE", stream, "-", "+"});
  EXPECT_FALSE(r.is_error()) << r.str;
  for (const redis::Reply& e : r.elements) {
    Entry entry{e.at(0).as_string(), {}};
    const redis::Reply& f = e.at(1);
    for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
      entry.fields[f.at(i).as_string()] = f.at(i + 1).as_string();
    }
    out.push_back(std::move(entry));
  }
  return out;
}

class ClosesTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, boards_yaml(prefix));
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};
  std::string arena_stream = hot::closes_key(prefix);
  std::string cup_stream = prefix + ":{cups}:closes";

  void SetUp() override { cold.migrate(); }

  // `members` members score in hour `hour` of kDay on `board`, with names and metadata.
  void fill(redis::Connection& c, const std::string& board, int hour, int members) {
    const Instant start = kDay + std::chrono::hours{hour};
    std::vector<Update> events;
    for (int i = 0; i < members; ++i) {
      Update u{board, "m" + std::to_string(i), 10 + (i * 7) % 23, start + std::chrono::seconds{i},
               ""};
      u.name = "Player " + std::to_string(i);
      u.meta = "{\"i\":" + std::to_string(i) + "}";
      events.push_back(std::move(u));
    }
    Leaderboards lb(config, c, Clock(start + std::chrono::minutes{30}), &cold);
    for (const auto& r : lb.apply(events)) ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
  }

  lifecycle::TickReport tick(redis::Connection& c, Instant now) {
    return lifecycle::Tick(config, c, cold, archive, Clock(now)).run({});
  }

  std::int64_t count(const std::string& sql) { return std::stoll(test::psql(sql)); }
  // The period's rows in the history view, as SQL users read them.
  std::string in_view(const std::string& what, const cold::PeriodKey& key,
                      const std::string& rest = "") {
    return test::psql("SELECT " + what + " FROM " + prefix + ".history WHERE board = '" +
                      key.board + "' AND period = '" + key.period + "' AND period_id = '" +
                      key.period_id + "'" + rest);
  }
  // The members per tier of the board's rules (zeros too) the view's tier column gives.
  nlohmann::json tiers_in_view(const cold::PeriodKey& key) {
    nlohmann::json out = nlohmann::json::object();
    const BoardConfig* board = config.board_for(key.board);
    if (board == nullptr) return out;
    for (const TierRule& rule : board->tiers) {
      out[rule.name] = std::stoll(in_view("count(*)", key, " AND tier = '" + rule.name + "'"));
    }
    return out;
  }
  std::int64_t notices(const std::string& where = "true") {
    return count("SELECT count(*) FROM " + prefix + ".period_closes WHERE " + where);
  }

  // The notice `seq` in its entry equals its row and its period's history rows.
  void expect_entry_matches(const Entry& e, const cold::CloseNotice& n) {
    EXPECT_EQ(e.id, std::to_string(n.seq) + "-1");
    EXPECT_EQ(e.fields.at("seq"), std::to_string(n.seq));
    EXPECT_EQ(e.fields.at("board"), n.key.board);
    EXPECT_EQ(e.fields.at("period"), n.key.period);
    EXPECT_EQ(e.fields.at("period_id"), n.key.period_id);
    EXPECT_EQ(e.fields.at("period_start"), format_rfc3339(n.start));
    EXPECT_EQ(e.fields.at("members"), std::to_string(n.members));
    EXPECT_EQ(nlohmann::json::parse(e.fields.at("tiers")), nlohmann::json::parse(n.tiers));
    EXPECT_EQ(nlohmann::json::parse(n.tiers), tiers_in_view(n.key)) << n.key.board;
    const auto rows = archive.history(n.key, 1000000);
    EXPECT_EQ(static_cast<std::int64_t>(rows.size()), n.members) << n.key.period_id;
    const auto top = static_cast<std::size_t>(config.board_for(n.key.board)->notice_top);
    // The view's tier column in listing order (member bytes within a rank), "-" for null.
    std::istringstream view_tiers(
        in_view("coalesce(tier, '-')", n.key, " ORDER BY rank, convert_to(member, 'UTF8')"));
    const auto shown = nlohmann::json::parse(e.fields.at("top"));
    ASSERT_EQ(shown.size(), std::min(top, rows.size())) << n.key.period_id;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      EXPECT_EQ(shown[i]["rank"], rows[i].rank);
      EXPECT_EQ(shown[i]["position"], rows[i].position);
      EXPECT_EQ(shown[i]["member"], rows[i].member);
      EXPECT_EQ(shown[i]["points"], rows[i].points);
      std::string tier;
      ASSERT_TRUE(std::getline(view_tiers, tier));
      EXPECT_EQ(shown[i]["tier"].is_null() ? "-" : shown[i]["tier"].get<std::string>(), tier)
          << n.key.board << " " << rows[i].member;
      EXPECT_EQ(shown[i]["name"], rows[i].name.value_or(""));
      EXPECT_EQ(shown[i]["metadata"].dump(), rows[i].metadata.value_or(""));
    }
    // The SQL it carries reads the whole period.
    std::string sql = e.fields.at("history_sql");
    EXPECT_NE(sql.find(" ORDER BY rank, member COLLATE \"C\""), std::string::npos) << sql;
    for (std::size_t at = 0; (at = sql.find('"', at)) != std::string::npos; at += 2) {
      sql.insert(at, "\\");  // psql's command line is in double quotes
    }
    EXPECT_EQ(count("SELECT count(*) FROM (" + sql + ") h"), n.members);
  }

  // Every archived period has exactly one notice; each notice is in its stream exactly once
  // (entry id <seq>-1) with contents equal to its history; nothing is pending.
  void expect_exactly_once(redis::Connection& c) {
    EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".periods p WHERE status = 'archived'" +
                    " AND (SELECT count(*) FROM " + prefix +
                    ".period_closes n WHERE n.board = p.board AND n.period = p.period AND" +
                    " n.period_id = p.period_id) <> 1"),
              0);
    EXPECT_EQ(notices(),
              count("SELECT count(*) FROM " + prefix + ".periods WHERE status = 'archived'"));
    EXPECT_EQ(notices("published_at IS NULL"), 0);
    cold::Closes closes(cold.link());
    for (const std::string& stream : {arena_stream, cup_stream}) {
      const auto want = closes.of_stream(stream, 0, 1000000);
      const auto got = entries(c, stream);
      ASSERT_EQ(got.size(), want.size()) << stream;
      for (std::size_t i = 0; i < got.size(); ++i) expect_entry_matches(got[i], want[i]);
    }
  }
};

TEST_F(ClosesTest, EachArchiveWritesOneNoticeEqualToItsHistoryAndPublishesItOnce) {
  for (int h = 0; h < 3; ++h) {
    fill(conn, "arena", h, 12);
    fill(conn, "cup:1", h, 5 + h);
  }
  // A listener on <schema>_closes, for the length of a pg_sleep (psql prints what it heard
  // after each statement).
  const std::string heard = "/tmp/bk-listen-" + prefix;
  ASSERT_EQ(
      std::system(("(printf 'LISTEN " + prefix + "_closes;\\nSELECT pg_sleep(3);\\n' | psql " +
                   "-X -q -t -A '" + test::postgres_url() + "' > " + heard + " 2>&1) &")
                      .c_str()),
      0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto first = tick(conn, kDay + std::chrono::hours{6});
  EXPECT_EQ(first.closes.published, 6);
  EXPECT_EQ(first.closes.pending, 0);
  EXPECT_TRUE(first.closes.error.empty()) << first.closes.error;
  EXPECT_EQ(notices(), 6);
  expect_exactly_once(conn);
  // Profiles went into history and into the entries.
  const auto arena = entries(conn, arena_stream);
  ASSERT_EQ(arena.size(), 3u);
  EXPECT_NE(arena[0].fields.at("top").find("Player "), std::string::npos);
  // Notices are numbered in the order their archives committed.
  EXPECT_EQ(count("SELECT count(DISTINCT seq) FROM " + prefix + ".period_closes"), 6);
  // Each archive's NOTIFY carried its seq.
  std::this_thread::sleep_for(std::chrono::seconds{3});
  const std::string said = test::read_file(heard);
  std::remove(heard.c_str());
  std::istringstream seqs(test::psql("SELECT seq FROM " + prefix + ".period_closes"));
  int notified = 0;
  for (std::string seq; std::getline(seqs, seq);) {
    EXPECT_NE(said.find("notification \"" + prefix + "_closes\" with payload \"" + seq + "\""),
              std::string::npos)
        << said;
    ++notified;
  }
  EXPECT_EQ(notified, 6);
  // A second tick finds nothing to do and the streams stay as they are.
  const auto second = tick(conn, kDay + std::chrono::hours{7});
  EXPECT_EQ(second.closes.published, 0);
  EXPECT_EQ(second.closes.found, 0);
  EXPECT_EQ(second.closes.published_total, 6);
  expect_exactly_once(conn);
}

// A tiered board's notice counts the members of each tier of its rules (zeros too, as the
// archive's merge counted them: the tick reports the same) and its entry's top carries each
// row's frozen tier, both equal to the history view's tier column (expect_exactly_once); the
// `closes` command lists the counts.
TEST_F(ClosesTest, ATieredBoardsNoticeCarriesItsTierCountsAndItsEntryTheRowsTiers) {
  fill(conn, "ranked", 0, 12);
  tick(conn, kDay + std::chrono::minutes{45});  // spills all but 4 of hour 0, archives nothing
  fill(conn, "ranked", 1, 3);
  const auto r = tick(conn, kDay + std::chrono::hours{3});
  EXPECT_EQ(r.closes.published, 2);
  expect_exactly_once(conn);
  // Hour 0, points 31, 29, 27, 24, 22, 20, 18, ...: rank 1 champion; 25% of 12 admits ranks 2
  // and 3 (gold); nobody has 900; 24, 22 and 20 are silver. Hour 1 (24, 17, 10): 25% of 3
  // admits rank 1 only, taken by champion.
  const std::vector<nlohmann::json> want{
      nlohmann::json::parse(R"({"champion": 1, "gold": 2, "platinum": 0, "silver": 3})"),
      nlohmann::json::parse(R"({"champion": 1, "gold": 0, "platinum": 0, "silver": 0})")};
  cold::Closes closes(cold.link());
  const auto notices = closes.of_stream(arena_stream, 0, 100);
  ASSERT_EQ(notices.size(), 2u);
  ASSERT_LT(notices[0].start, notices[1].start);  // archived in time order
  std::vector<nlohmann::json> reported;           // the tick's report, from the same counts
  for (const auto& b : r.boards) {
    for (const auto& p : b.periods) {
      if (!p.archived) continue;
      reported.push_back(nlohmann::json::object());
      for (const auto& t : p.archived_tiers) reported.back()[t.tier] = t.members;
    }
  }
  ASSERT_EQ(reported.size(), 2u);
  for (const auto& counts : want) {
    EXPECT_NE(std::find(reported.begin(), reported.end(), counts), reported.end()) << counts;
  }
  for (std::size_t h = 0; h < 2; ++h) {
    EXPECT_EQ(nlohmann::json::parse(notices[h].tiers), want[h]) << notices[h].key.period_id;
  }
  std::vector<std::string> tiers;
  for (const auto& s : nlohmann::json::parse(entries(conn, arena_stream).at(0).fields.at("top")))
    tiers.push_back(s["member"].get<std::string>() + "=" + s["tier"].get<std::string>());
  EXPECT_EQ(tiers, (std::vector<std::string>{"m3=champion", "m6=gold", "m9=gold", "m2=silver",
                                             "m5=silver"}));
  const std::string path = test::write_config(prefix, boards_yaml(prefix));
  const auto cli = test::run_cli({"--config", path, "closes", "--board", "ranked", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::istringstream in(cli.out);
  std::vector<nlohmann::json> listed;
  for (std::string line; std::getline(in, line);) {
    listed.push_back(nlohmann::json::parse(line).at("tiers"));
  }
  EXPECT_EQ(listed, want);
}

TEST_F(ClosesTest, ATickStoppedBetweenTheAddAndItsBookkeepingIsRepairedFromTheStreamsTop) {
  fill(conn, "arena", 0, 8);
  fill(conn, "arena", 1, 8);
  tick(conn, kDay + std::chrono::hours{3});
  // As if killed after both XADDs, before the second bookkeeping.
  test::psql("UPDATE " + prefix + ".period_closes SET published_at = NULL WHERE seq = (SELECT" +
             " max(seq) FROM " + prefix + ".period_closes)");
  ASSERT_EQ(notices("published_at IS NULL"), 1);
  const auto r = tick(conn, kDay + std::chrono::hours{4});
  EXPECT_EQ(r.closes.published, 0);
  EXPECT_EQ(r.closes.found, 1);
  expect_exactly_once(conn);
  // A second XADD of a notice is refused by Redis itself.
  cold::Closes closes(cold.link());
  const auto n = closes.of_stream(arena_stream, 0, 1);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(hot::add_close_entry(conn, arena_stream, n[0].seq, {{"x", "y"}}),
            hot::CloseAdded::already);
  EXPECT_EQ(entries(conn, arena_stream).size(), 2u);
}

TEST_F(ClosesTest, AStreamRedisLostOrRolledBackIsRefedWithoutRepeatingWhatItHolds) {
  for (int h = 0; h < 5; ++h) fill(conn, "arena", h, 6);
  tick(conn, kDay + std::chrono::hours{6});
  const auto before = entries(conn, arena_stream);
  ASSERT_EQ(before.size(), 5u);
  // Rolled back to a snapshot holding the first two entries (a consumer deleted the first).
  conn.command({"DEL", arena_stream});
  for (std::size_t i = 0; i < 2; ++i) {
    redis::Args add{"XADD", arena_stream, before[i].id};
    for (const auto& [f, v] : before[i].fields) {
      add.push_back(f);
      add.push_back(v);
    }
    ASSERT_FALSE(conn.command(add).is_error());
  }
  conn.command({"XDEL", arena_stream, before[0].id});
  const auto r = tick(conn, kDay + std::chrono::hours{7});
  EXPECT_EQ(r.closes.published, 3);
  EXPECT_EQ(r.closes.refed, 3);
  auto after = entries(conn, arena_stream);
  ASSERT_EQ(after.size(), 4u);  // the deleted first one is not repeated: it is below the top
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i + 1].id);
    EXPECT_EQ(after[i].fields, before[i + 1].fields);
  }
  // Lost whole: every notice again, each once, with the same ids and contents.
  conn.command({"DEL", arena_stream});
  EXPECT_EQ(tick(conn, kDay + std::chrono::hours{8}).closes.refed, 5);
  after = entries(conn, arena_stream);
  ASSERT_EQ(after.size(), 5u);
  for (std::size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].fields, before[i].fields);
  expect_exactly_once(conn);
}

TEST_F(ClosesTest, AnUnwritableStreamHoldsBackItsOwnNoticesOnlyUntilItIsRepaired) {
  conn.command({"SET", cup_stream, "not a stream"});
  fill(conn, "arena", 0, 6);
  fill(conn, "cup:7", 0, 6);
  fill(conn, "cup:7", 1, 6);
  const auto r = tick(conn, kDay + std::chrono::hours{3});
  // The archives stand; the arena's notice went out, the cups' two wait.
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".periods WHERE status = 'archived'"), 3);
  EXPECT_EQ(r.closes.published, 1);
  EXPECT_EQ(r.closes.pending, 2);
  EXPECT_NE(r.closes.error.find("WRONGTYPE"), std::string::npos) << r.closes.error;
  EXPECT_TRUE(r.any_failed());
  conn.command({"DEL", cup_stream});
  const auto again = tick(conn, kDay + std::chrono::hours{4});
  EXPECT_EQ(again.closes.published, 2);
  EXPECT_EQ(again.closes.pending, 0);
  EXPECT_FALSE(again.any_failed());
  expect_exactly_once(conn);
}

TEST_F(ClosesTest, AStreamWithAnIdBeyondEveryNoticeIsRefusedNotSkipped) {
  fill(conn, "arena", 0, 6);
  // Something else wrote the stream (an auto id: milliseconds since 1970).
  conn.command({"XADD", arena_stream, "*", "foreign", "1"});
  const auto r = tick(conn, kDay + std::chrono::hours{2});
  EXPECT_EQ(r.closes.published, 0);
  EXPECT_EQ(r.closes.pending, 1);
  EXPECT_NE(r.closes.error.find("beyond every close notice"), std::string::npos) << r.closes.error;
  EXPECT_EQ(notices("published_at IS NOT NULL"), 0);
}

TEST_F(ClosesTest, RedisDownWhilePublishingLeavesNoticesPendingUntilItIsBack) {
  if (test::on_cluster()) GTEST_SKIP() << "uses a redis-server of its own";
  test::RedisServer own;
  const std::string path = test::write_text_config(
      prefix, test::config_text_for(own.url(), prefix, boards_yaml(prefix)));
  config = load_config(path, {});
  redis::Connection c = own.connect();
  c.command({"SET", arena_stream, "blocks the first publish"});
  fill(c, "arena", 0, 6);
  const auto r = tick(c, kDay + std::chrono::hours{2});
  EXPECT_EQ(r.closes.pending, 1);
  c.command({"DEL", arena_stream});
  own.stop();
  cold::Closes closes(cold.link());
  lifecycle::ClosesReport down;
  lifecycle::ClosesPublisher(config, c, closes, archive).run(down, false);
  EXPECT_EQ(down.error_backend, Backend::redis) << down.error;
  EXPECT_EQ(down.pending, 1);  // PostgreSQL still counts
  own.start();                 // empty: no persistence
  c.reconnect();
  // The CLI's tick publishes it (and says so), exit 0.
  const auto run = test::run_cli({"--config", path, "--now=2027-01-10T03:00:00Z", "tick"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("published 1"), std::string::npos) << run.out;
  expect_exactly_once(c);
}

// ---- tick killed at every pause point ---------------------------------------------------------

// Where the kill test stops tick (core/stop_points.h): the archive's points, reached once per
// period it archives, then the publisher's, once per stream (publish.marked_through) or once
// per notice.
const std::vector<std::string> kArchivePoints{"archive.begin", "archive.before_commit",
                                              "notice.before_commit", "notice.written",
                                              "archive.released"};
const std::vector<std::string> kPublishPoints{"publish.marked_through", "publish.before_xadd",
                                              "publish.after_xadd", "mark.done"};

// Ticks stopped at a pause point (BK_TEST_STOP_AT=<point>:<n>) and SIGKILLed there, on 3
// hourly boards (two streams) x 24 hours of 9 members each, spilled past hot_keep (4), so that
// a Redis that lost everything still archives 5 of each period from the cold tier. Its own
// Redis, unless on the cluster suite, which has none to spare.
class ClosesKillTest : public ClosesTest {
 protected:
  static constexpr int kHours = 24;
  static constexpr std::int64_t kPeriods = 3 * kHours;
  static constexpr int kRounds = 2;  // kills per point and wave
  std::unique_ptr<test::RedisServer> own;
  redis::Connection c = test::connect_redis();
  std::string path;
  std::string log = "/tmp/bk-kill-closes-" + prefix + ".log";
  std::map<std::string, int> landed;  // kills per point

  void SetUp() override {
    ClosesTest::SetUp();
    // A day's grace: the first tick only spills, and each wave's `now` says which hours are
    // due.
    std::string boards = boards_yaml(prefix);
    for (std::size_t at = 0; (at = boards.find("grace: 1m", at)) != std::string::npos;) {
      boards.replace(at, 9, "grace: 1d");
    }
    path = test::write_config(prefix, boards);
    if (!test::on_cluster()) {
      own = std::make_unique<test::RedisServer>();
      path = test::write_text_config(prefix, test::config_text_for(own->url(), prefix, boards));
      c = own->connect();
    }
    config = load_config(path, {});
    for (int h = 0; h < kHours; ++h) {
      for (const std::string board : {"arena", "cup:1", "cup:2"}) fill(c, board, h, 9);
    }
    tick(c, kDay + std::chrono::hours{kHours} + std::chrono::seconds{30});  // spills only
  }
  void TearDown() override { std::remove(log.c_str()); }

  std::int64_t archived() {
    return count("SELECT count(*) FROM " + prefix + ".periods WHERE status = 'archived'");
  }
  std::int64_t in_streams() {
    return static_cast<std::int64_t>(entries(c, arena_stream).size() +
                                     entries(c, cup_stream).size());
  }

  // What holds after any kill: every archived period has one notice, never more; each stream
  // holds notices of its own only (each once: a stream's ids are unique).
  void expect_consistent() {
    EXPECT_EQ(count("SELECT count(*) FROM (SELECT board, period, period_id FROM " + prefix +
                    ".period_closes GROUP BY 1, 2, 3 HAVING count(*) > 1) d"),
              0);
    EXPECT_EQ(notices(), archived());
    cold::Closes closes(cold.link());
    for (const std::string& stream : {arena_stream, cup_stream}) {
      std::set<std::string> ids;
      for (const auto& n : closes.of_stream(stream, 0, 1000000)) {
        ids.insert(hot::close_entry_id(n.seq).text());
      }
      for (const Entry& e : entries(c, stream)) EXPECT_EQ(ids.count(e.id), 1u) << e.id;
    }
  }

  // A tick at `now` stopped at its n-th arrival at `point` and SIGKILLed there; false when it
  // ended before getting there.
  bool kill_at(const std::string& point, std::int64_t n, const std::string& now) {
    const int pid =
        test::spawn_cli({"--config", path, "--now=" + now, "tick"}, log,
                        {std::string(kStopAtVariable) + "=" + point + ":" + std::to_string(n)});
    int code = -1;
    const bool stopped = test::wait_stopped(pid, std::chrono::seconds{120}, code);
    if (stopped) {
      ::kill(pid, SIGKILL);
      EXPECT_EQ(test::wait_cli(pid), 128 + SIGKILL);
      ++landed[point];
    }
    expect_consistent();
    return stopped;
  }

  // Every archive point kRounds times, then every publish point, each kill's arrival spread
  // over the work left (the periods still to archive, the notices not in their streams) and
  // the kills still to come, so that they land across the boards and the streams, and each
  // leaves work to the next (n is at most the work left over the kills to come plus one).
  void kill_a_wave(const std::string& now, std::int64_t due) {
    int left = kRounds * static_cast<int>(kArchivePoints.size());
    for (int r = 0; r < kRounds; ++r) {
      for (const std::string& point : kArchivePoints) {
        const std::int64_t n = std::max<std::int64_t>(1, (due - archived()) / (left-- + 1));
        EXPECT_TRUE(kill_at(point, n, now)) << point << ":" << n << " at " << now;
      }
    }
    left = kRounds * static_cast<int>(kPublishPoints.size());
    for (int r = 0; r < kRounds; ++r) {
      for (const std::string& point : kPublishPoints) {
        // Once per stream, in stream order: the arena's (the first), then the cups'.
        const std::int64_t n =
            point == "publish.marked_through"
                ? 1 + r
                : std::max<std::int64_t>(1, (notices() - in_streams()) / (left + 1));
        --left;
        EXPECT_TRUE(kill_at(point, n, now)) << point << ":" << n << " at " << now;
      }
    }
  }

  // Redis forgets everything: its own server restarted without persistence; on the cluster
  // suite every master flushed (the cluster suites take turns on it).
  void lose_redis_data() {
    if (own) {
      own->stop();
      own->start();
      c.reconnect();
    } else {
      for (std::size_t m = 0; m < c.masters(); ++m) c.master_command(m, {"FLUSHALL"}).checked();
    }
    EXPECT_EQ(in_streams(), 0);
  }

  // Ticks left alone until nothing is pending (a few at most: a claim a killed tick held may
  // be released late, and that period waits for the next tick).
  void finish(const std::string& now) {
    for (int run = 0; run < 5; ++run) {
      const auto done = test::run_cli({"--config", path, "--now=" + now, "tick"});
      EXPECT_EQ(done.exit_code, 0) << done.err;
      if (archived() == kPeriods && notices("published_at IS NULL") == 0) return;
    }
    ADD_FAILURE() << "5 ticks did not finish the work";
  }
};

TEST_F(ClosesKillTest, TicksKilledAtEveryPointThroughARedisThatLostItsDataLeaveOneNoticeAndEntry) {
  // The first 12 hours of each board due (they keep their hot members), then Redis loses its
  // data, then every hour due: the last 12 archive from the cold tier alone, and the streams
  // are fed again from PostgreSQL (the notices they had held included).
  kill_a_wave("2027-01-11T12:00:00Z", 3 * 12);
  EXPECT_EQ(archived(), 3 * 12);
  lose_redis_data();
  kill_a_wave("2027-01-14T00:00:00Z", kPeriods);
  finish("2027-01-14T00:00:00Z");
  int kills = 0;
  for (const auto& points : {kArchivePoints, kPublishPoints}) {
    for (const std::string& point : points) {
      std::cerr << "kills at " << point << ": " << landed[point] << "\n";
      EXPECT_EQ(landed[point], 2 * kRounds) << point;
      kills += landed[point];
    }
  }
  EXPECT_GE(kills, 20);
  EXPECT_EQ(archived(), kPeriods);
  EXPECT_EQ(notices("hot_lost"), 3 * 12);  // the second half's: their hot members went
  expect_exactly_once(c);
}

// The kill test's variable, malformed, is refused before anything runs, naming it (exit 2).
TEST_F(ClosesTest, AMalformedStopPointIsRefusedBeforeTheTickRuns) {
  const std::string path = test::write_config(prefix, boards_yaml(prefix));
  const auto r = test::run_cli({"--config", path, "tick"},
                               {std::string(kStopAtVariable) + "=notice.written:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("BK_TEST_STOP_AT='notice.written:0'"), std::string::npos) << r.err;
  EXPECT_EQ(count("SELECT count(*) FROM " + prefix + ".periods"), 0);
}

TEST_F(ClosesTest, TheClosesCommandListsNoticesByBoardAndSince) {
  for (int h = 0; h < 2; ++h) {
    fill(conn, "arena", h, 4);
    fill(conn, "cup:3", h, 4);
  }
  tick(conn, kDay + std::chrono::hours{3});
  const std::string path = test::write_config(prefix, boards_yaml(prefix));
  auto r = test::run_cli({"--config", path, "closes", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4u);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_LT(lines[i - 1]["seq"].get<std::int64_t>(), lines[i]["seq"].get<std::int64_t>());
  }
  EXPECT_EQ(lines[0]["members"], 4);
  EXPECT_EQ(lines[0]["tiers"], nlohmann::json::object());
  EXPECT_FALSE(lines[0]["published_at"].is_null());
  const std::int64_t first = lines[0]["seq"];
  r = test::run_cli(
      {"--config", path, "closes", "--board", "cup:*", "--since", std::to_string(first), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  EXPECT_EQ(r.out.find("\"arena\""), std::string::npos) << r.out;
  r = test::run_cli(
      {"--config", path, "closes", "--since", "2020-01-01T00:00:00Z", "--limit", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" arena hourly "), std::string::npos) << r.out;
  r = test::run_cli({"--config", path, "closes", "--board", "nobody"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(none)"), std::string::npos) << r.out;
  r = test::run_cli({"--config", path, "closes", "--since", "yesterday"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--since 'yesterday'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace bk
