// remove, ban, unban and bans against real Redis and PostgreSQL: hot, spilled and rehydrated
// members, one period or all, counts and ranks afterwards, idempotence; bans refusing `add`
// and stream entries, surviving FLUSHALL; and the protocol's races driven step by step (a
// look-up made before R1 sent after it, a remove killed after R1, an archive before R2, a
// spill racing R1).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "harness.h"
#include "hot/board_scripts.h"
#include "hot/keys.h"
#include "hot/moderation.h"
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

const char* kBoards = R"(  - name: rb
    periods: [daily, weekly]
    max_points: 1000000
    hot_keep: 3
    display: 3
    retention: {default: 3650d}
  - name: arc
    periods: [daily]
    max_points: 1000000
    hot_keep: 2
    display: 2
    archive: {grace: 1m}
    retention: {default: 3650d}
)";

class RemoveBanTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  Instant now = at("2026-11-22T12:00:00Z");
  Leaderboards lb{config, conn, Clock(now), &cold};

  void SetUp() override { cold.migrate(); }

  void add(const std::string& board, const std::string& member, std::int64_t value,
           const char* when = "2026-11-22T10:00:00Z") {
    const auto r = lb.apply(Update{board, member, value, at(when), ""});
    ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
  }
  // "member:points:rank" in listing order.
  std::vector<std::string> listing(const std::string& board, const std::string& period) {
    std::vector<std::string> out;
    for (const auto& s : lb.reads().top_at({lb.resolve(board, period, std::nullopt)}, 0, 100)) {
      out.push_back(s.member + ":" + std::to_string(s.points) + ":" + std::to_string(s.rank));
    }
    return out;
  }
  void tick(Instant when) {
    cold::History archive(test::postgres_url(), prefix);
    lifecycle::Tick(config, conn, cold, archive, Clock(when)).run({});
  }
  // One value, without psql's line end.
  std::string sql(const std::string& text) {
    std::string out = test::psql(text);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }
  std::int64_t cold_rows(const std::string& board, const std::string& member) {
    return std::stoll(sql("SELECT count(*) FROM " + prefix + ".cold_members WHERE board = '" +
                          board + "' AND member = '" + member + "'"));
  }
  std::int64_t page_rows(const std::string& board, const std::string& period,
                         const std::string& id) {
    return std::stoll(sql("SELECT coalesce(sum(rows), 0) FROM " + prefix +
                          ".cold_pages WHERE board = '" + board + "' AND period = '" + period +
                          "' AND period_id = '" + id + "'"));
  }
  // Six members a..f, a best; with hot_keep 3 a tick spills d, e, f.
  void six_members() {
    const std::vector<std::pair<std::string, std::int64_t>> points{{"a", 60}, {"b", 50}, {"c", 40},
                                                                   {"d", 30}, {"e", 20}, {"f", 10}};
    for (const auto& [m, p] : points) add("rb", m, p);
  }

  // A standalone Redis of the test's own (to flush), the test's boards on it.
  struct OwnRedis {
    explicit OwnRedis(RemoveBanTest& t)
        : config(load_config(test::write_text_config(
                                 t.prefix, test::config_text_for(server.url(), t.prefix, kBoards)),
                             {})),
          conn(server.connect()),
          boards(config, conn, Clock(t.now), &t.cold) {}
    test::RedisServer server;
    Config config;
    redis::Connection conn;
    Leaderboards boards;
  };
};

TEST_F(RemoveBanTest, RemovingAHotMemberMovesTheRanksBelowUpAndALaterEventStartsFromZero) {
  six_members();
  const service::Removal r = lb.moderation().remove("rb", "b");
  ASSERT_TRUE(r.found());
  ASSERT_EQ(r.periods.size(), 2U);  // daily and weekly
  for (const auto& p : r.periods) EXPECT_EQ(p.hot, 1) << p.period;
  const std::vector<std::string> want{"a:60:1", "c:40:2", "d:30:3", "e:20:4", "f:10:5"};
  EXPECT_EQ(listing("rb", "daily"), want);
  EXPECT_EQ(listing("rb", "weekly"), want);
  EXPECT_EQ(lb.reads().periods("rb").at(0).current_members, 5);
  EXPECT_FALSE(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "b"));
  // Idempotent: nothing left to remove.
  EXPECT_FALSE(lb.moderation().remove("rb", "b").found());
  // Removed, not banned: a later event starts it again from zero.
  add("rb", "b", 5);
  EXPECT_EQ(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "b")->points, 5);
}

TEST_F(RemoveBanTest, RemovingFromOnePeriodLeavesTheOthers) {
  six_members();
  const service::Removal r = lb.moderation().remove("rb", "c", std::string("daily"));
  ASSERT_EQ(r.periods.size(), 1U);
  EXPECT_EQ(r.periods[0].period, "daily");
  EXPECT_EQ(r.periods[0].hot, 1);
  EXPECT_FALSE(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "c"));
  EXPECT_EQ(lb.reads().member({lb.resolve("rb", "weekly", std::nullopt)}, "c")->rank, 3);
  // Not on the named period any more: not found there.
  EXPECT_FALSE(lb.moderation().remove("rb", "c", std::string("daily")).found());
}

// A registry entry of a period the config no longer has (tick leaves it alone) is left alone
// by a removal of every period too.
TEST_F(RemoveBanTest, ARegistryEntryOfAPeriodTheConfigDoesNotKnowIsLeftAlone) {
  six_members();
  conn.command({"ZADD", hot::BoardKeys(prefix, "rb").registry(), "1", "retired:2026-11-22"})
      .checked();
  const service::Removal r = lb.moderation().remove("rb", "a");
  EXPECT_EQ(r.periods.size(), 2U);
  EXPECT_TRUE(r.found());
  EXPECT_FALSE(lb.reads().member({lb.resolve("rb", "weekly", std::nullopt)}, "a"));
}

TEST_F(RemoveBanTest, RemovingASpilledMemberDeletesItsColdRowAndItsPageCount) {
  six_members();
  tick(now);
  const std::string day = lb.resolve("rb", "daily", std::nullopt).period.id;
  ASSERT_EQ(cold_rows("rb", "e"), 2);  // daily and weekly
  ASSERT_EQ(page_rows("rb", "daily", day), 3);
  const service::Removal r = lb.moderation().remove("rb", "e");
  ASSERT_TRUE(r.found());
  for (const auto& p : r.periods) {
    EXPECT_EQ(p.hot, 0) << p.period;
    EXPECT_EQ(p.cold, 1) << p.period;
  }
  EXPECT_EQ(cold_rows("rb", "e"), 0);
  EXPECT_EQ(page_rows("rb", "daily", day), 2);
  const std::vector<std::string> want{"a:60:1", "b:50:2", "c:40:3", "d:30:4", "f:10:5"};
  EXPECT_EQ(listing("rb", "daily"), want);
  const auto periods = lb.reads().periods("rb");
  EXPECT_EQ(periods.at(0).current_members, 5);
  EXPECT_EQ(periods.at(0).cold_members, 2);
  EXPECT_EQ(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "f")->rank, 5);
  EXPECT_FALSE(lb.moderation().remove("rb", "e").found());
  // A later event starts from zero, not from the deleted cold row's 20.
  add("rb", "e", 1);
  EXPECT_EQ(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "e")->points, 1);
}

TEST_F(RemoveBanTest, RemovingARehydratedMemberRemovesItsHotEntryAndItsStaleColdRow) {
  six_members();
  tick(now);
  add("rb", "d", 100);  // rehydrated: hot with 130, its cold row (30) stale
  ASSERT_EQ(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "d")->points, 130);
  ASSERT_EQ(cold_rows("rb", "d"), 2);
  const service::Removal r = lb.moderation().remove("rb", "d");
  for (const auto& p : r.periods) {
    EXPECT_EQ(p.hot, 1) << p.period;
    EXPECT_EQ(p.cold, 1) << p.period;
  }
  EXPECT_EQ(cold_rows("rb", "d"), 0);
  const std::vector<std::string> want{"a:60:1", "b:50:2", "c:40:3", "e:20:4", "f:10:5"};
  EXPECT_EQ(listing("rb", "daily"), want);
  EXPECT_EQ(listing("rb", "weekly"), want);
  EXPECT_EQ(lb.reads().periods("rb").at(0).current_members, 5);
}

TEST_F(RemoveBanTest, ABanRefusesAddAndStreamEntriesUntilUnbanned) {
  six_members();
  const std::string path = test::write_config(prefix, kBoards);
  const service::BanResult b = lb.moderation().ban("rb", "a", "aimbot");
  EXPECT_TRUE(b.newly_banned);
  EXPECT_TRUE(b.removed.found());
  EXPECT_FALSE(lb.moderation().ban("rb", "a", "aimbot, again").newly_banned);
  const auto bans = lb.moderation().bans("rb");
  ASSERT_EQ(bans.size(), 1U);
  EXPECT_EQ(bans[0].member, "a");
  EXPECT_EQ(bans[0].reason, "aimbot, again");
  // The library: refused with its label and reason.
  const auto refused = lb.apply(Update{"rb", "a", 5, at("2026-11-22T10:00:00Z"), ""});
  EXPECT_EQ(refused.status, UpdateStatus::refused);
  EXPECT_EQ(refused.refusal, service::Refusal::banned);
  EXPECT_EQ(refused.reason, "member 'a' is banned from board 'rb'");
  // Other members' events of the same call still apply.
  const auto mixed = lb.apply(std::vector<Update>{{"rb", "b", 1, at("2026-11-22T10:00:00Z"), ""},
                                                  {"rb", "a", 1, at("2026-11-22T10:00:00Z"), ""}});
  EXPECT_EQ(mixed[0].status, UpdateStatus::applied);
  EXPECT_EQ(mixed[1].refusal, service::Refusal::banned);
  // The CLI: add exits 1.
  const auto cli =
      test::run_cli({"--config", path, "--now=2026-11-22T12:00:00Z", "add", "rb", "a", "5"});
  EXPECT_EQ(cli.exit_code, 1) << cli.out << cli.err;
  EXPECT_NE((cli.out + cli.err).find("banned"), std::string::npos) << cli.out << cli.err;
  // A stream entry: a dead letter with the reason.
  const std::string stream = test::events_stream(prefix);
  conn.command({"XADD", stream, "*", "board", "rb", "member", "a", "value", "7"}).checked();
  conn.command({"XADD", stream, "*", "board", "rb", "member", "c", "value", "7"}).checked();
  const auto run =
      test::run_cli({"--config", path, "--now=2026-11-22T12:00:00Z", "ingest", "--drain"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const redis::Reply dead = conn.command({"XRANGE", stream + ":dead", "-", "+"}).checked();
  ASSERT_EQ(dead.elements.size(), 1U);
  EXPECT_EQ(dead.at(0).at(1).at(0).as_string(), "reason");
  EXPECT_NE(dead.at(0).at(1).at(1).as_string().find("member 'a' is banned from board 'rb'"),
            std::string::npos)
      << dead.at(0).at(1).at(1).as_string();
  EXPECT_FALSE(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "a"));
  EXPECT_EQ(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "c")->points, 47);
  // Unbanned: let in again, from zero.
  EXPECT_TRUE(lb.moderation().unban("rb", "a"));
  EXPECT_FALSE(lb.moderation().unban("rb", "a"));
  EXPECT_TRUE(lb.moderation().bans("rb").empty());
  add("rb", "a", 3);
  EXPECT_EQ(lb.reads().member({lb.resolve("rb", "daily", std::nullopt)}, "a")->points, 3);
}

TEST_F(RemoveBanTest, ABanSurvivesFlushall) {
  if (test::on_cluster()) GTEST_SKIP() << "flushes a Redis of its own (standalone)";
  OwnRedis own(*this);
  redis::Connection& c = own.conn;
  Leaderboards& l = own.boards;
  ASSERT_EQ(l.apply(Update{"rb", "x", 5, at("2026-11-22T10:00:00Z"), ""}).status,
            UpdateStatus::applied);
  l.moderation().ban("rb", "x", "");
  c.command({"FLUSHALL"}).checked();
  // The next update finds no sync marker: it syncs (bans included) and still refuses.
  const auto r = l.apply(Update{"rb", "x", 5, at("2026-11-22T10:00:00Z"), ""});
  EXPECT_EQ(r.refusal, service::Refusal::banned) << r.reason;
  EXPECT_EQ(l.apply(Update{"rb", "y", 5, at("2026-11-22T10:00:00Z"), ""}).status,
            UpdateStatus::applied);
  EXPECT_EQ(c.command({"HGET", hot::BoardKeys(prefix, "rb").bans(), "x"}).as_string(), "1");
}

// A board sync reads the bans generation (S1), then PostgreSQL's bans, then writes them if
// the generation has not moved. Redis lost its data in between and a ban made afterwards
// started the generation again: had it started from 1 again (as it did), the sync's stale
// list (without that ban) matched it and was written, and the banned member's events were
// applied until the next sync. A generation started from the server's clock does not repeat.
TEST_F(RemoveBanTest, ASyncThatReadTheBansBeforeRedisLostItsDataDoesNotDropALaterBan) {
  if (test::on_cluster()) GTEST_SKIP() << "flushes a Redis of its own (standalone)";
  OwnRedis own(*this);
  redis::Connection& c = own.conn;
  Leaderboards& l = own.boards;
  l.moderation().ban("rb", "x", "");
  hot::BoardBans stale{hot::Moderation(prefix).bans_generation(c, "rb"), {"x"}};  // S1, S2
  ASSERT_NE(stale.generation, "");
  c.command({"FLUSHALL"}).checked();
  l.moderation().ban("rb", "y", "");
  hot::BoardScripts scripts(prefix, true);
  EXPECT_FALSE(scripts.sync(c, hot::BoardKeys(prefix, "rb"), {}, stale))
      << "the stale list was written over the ban made after it was read";
  EXPECT_EQ(c.command({"HGET", hot::BoardKeys(prefix, "rb").bans(), "y"}).as_string(), "1");
  const auto r = l.apply(Update{"rb", "y", 5, at("2026-11-22T10:00:00Z"), ""});
  EXPECT_EQ(r.refusal, service::Refusal::banned) << r.reason;
}

// A writer looked the member's cold row up before R1 and sends its update after it: the
// update script ignores the looked-up value (the member is a tombstone) and starts from zero.
TEST_F(RemoveBanTest, ALookUpMadeBeforeTheRemovalDoesNotResurrectItsPoints) {
  six_members();
  tick(now);
  const service::PeriodRef ref = lb.resolve("rb", "daily", std::nullopt);
  const hot::PeriodKeys keys(hot::BoardKeys(prefix, "rb"), "daily", ref.period.id);
  const std::string gen =
      conn.command({"HGET", keys.meta, "gen"}).checked().as_string();  // the look-up's
  const auto row = cold.lookup({{{"rb", "daily", ref.period.id}, "e"}}).at(0);
  ASSERT_TRUE(row);
  // R1 alone (a removal whose PostgreSQL step has not run yet).
  hot::Moderation mod(prefix);
  mod.remove(conn, {"rb",
                    "e",
                    {{"daily", ref.period.id, ref.period.end + std::chrono::hours{24 * 3650}}},
                    false,
                    false,
                    {}});
  hot::BoardScripts scripts(prefix, true);
  hot::HotBatch batch;
  batch.board = "rb";
  batch.slots.push_back({"daily", ref.period, config.board_for("rb")->layout_for(*ref.spec),
                         ref.period.end + std::chrono::hours{24 * 3650}});
  hot::HotEvent e;
  e.member = "e";
  e.value = 1;
  e.at = at("2026-11-22T10:00:00Z");
  e.slots = {0};
  e.cold = {hot::ColdValue{hot::ColdValue::State::present, row->encoded, gen}};
  batch.events.push_back(e);
  const auto results = scripts.apply(conn, {batch});
  ASSERT_EQ(results.at(0).at(0).outcome, hot::HotOutcome::applied);
  EXPECT_EQ(results.at(0).at(0).points.at(0), 1);  // not 21
  EXPECT_EQ(lb.reads().member({ref}, "e")->points, 1);
}

// A remove killed after R1: the member is hidden at once; the next tick deletes its cold row
// and the archive does not hold it.
TEST_F(RemoveBanTest, ARemoveKilledAfterItsRedisStepIsFinishedByTheNextTick) {
  for (const auto& [m, p] : std::vector<std::pair<std::string, std::int64_t>>{
           {"a", 40}, {"b", 30}, {"c", 20}, {"d", 10}}) {
    add("arc", m, p);
  }
  tick(now);  // hot_keep 2: c and d spill
  const service::PeriodRef ref = lb.resolve("arc", "daily", std::nullopt);
  ASSERT_EQ(cold_rows("arc", "c"), 1);
  hot::Moderation mod(prefix);
  const auto r1 =
      mod.remove(conn, {"arc",
                        "c",
                        {{"daily", ref.period.id, ref.period.end + std::chrono::hours{24 * 3650}}},
                        false,
                        true,
                        {}});
  ASSERT_TRUE(r1.again.empty());
  ASSERT_TRUE(r1.periods.at(0).tombstoned);
  // Hidden at once.
  EXPECT_EQ(listing("arc", "daily"), (std::vector<std::string>{"a:40:1", "b:30:2", "d:10:3"}));
  EXPECT_EQ(lb.reads().periods("arc").at(0).current_members, 3);
  tick(now);
  EXPECT_EQ(cold_rows("arc", "c"), 0);
  EXPECT_EQ(listing("arc", "daily"), (std::vector<std::string>{"a:40:1", "b:30:2", "d:10:3"}));
  // Another member removed by R1 only, then the archive: not in the history.
  mod.remove(conn, {"arc",
                    "d",
                    {{"daily", ref.period.id, ref.period.end + std::chrono::hours{24 * 3650}}},
                    false,
                    true,
                    {}});
  tick(ref.period.end + std::chrono::hours{1});
  EXPECT_EQ(sql("SELECT string_agg(member || ':' || rank, ',' ORDER BY rank, member) FROM " +
                prefix + ".history WHERE board = 'arc'"),
            "a:1,b:2");
  EXPECT_EQ(sql("SELECT members FROM " + prefix + ".periods WHERE board = 'arc'"), "2");
}

// The next spill deletes a removed member's cold row and then its tombstone: the stale set
// keeps only members that may be hot and cold at once (merged reads skip no more than those),
// and the member's next event still starts from zero.
TEST_F(RemoveBanTest, TheNextSpillClearsTheTombstoneAndALaterEventStartsFromZero) {
  for (const auto& [m, p] : std::vector<std::pair<std::string, std::int64_t>>{
           {"a", 40}, {"b", 30}, {"c", 20}, {"d", 10}}) {
    add("arc", m, p);
  }
  tick(now);  // hot_keep 2: c and d spill
  const service::PeriodRef ref = lb.resolve("arc", "daily", std::nullopt);
  const hot::PeriodKeys keys(hot::BoardKeys(prefix, "arc"), "daily", ref.period.id);
  ASSERT_TRUE(lb.moderation().remove("arc", "c").found());
  EXPECT_EQ(conn.command({"SISMEMBER", keys.stale, "c"}).as_int(), 1);  // the tombstone
  tick(now);
  EXPECT_EQ(conn.command({"SISMEMBER", keys.stale, "c"}).as_int(), 0);
  EXPECT_EQ(listing("arc", "daily"), (std::vector<std::string>{"a:40:1", "b:30:2", "d:10:3"}));
  add("arc", "c", 5);
  EXPECT_EQ(listing("arc", "daily"),
            (std::vector<std::string>{"a:40:1", "b:30:2", "d:10:3", "c:5:4"}));
  EXPECT_EQ(lb.reads().periods("arc").at(0).current_members, 4);
}

// An archive that ran before R2 holds the member: R2 deletes its history rows (the period's
// member count drops; the others keep their ranks as archived).
TEST_F(RemoveBanTest, RemovingFromAPeriodArchivedMeanwhileDeletesItsHistoryRows) {
  for (const auto& [m, p] :
       std::vector<std::pair<std::string, std::int64_t>>{{"a", 40}, {"b", 30}, {"c", 20}}) {
    add("arc", m, p);
  }
  const service::PeriodRef ref = lb.resolve("arc", "daily", std::nullopt);
  tick(ref.period.end + std::chrono::hours{1});
  ASSERT_EQ(sql("SELECT members FROM " + prefix + ".periods WHERE board = 'arc'"), "3");
  const service::Removal r =
      lb.moderation().remove("arc", "b", std::string("daily"), ref.period.id);
  ASSERT_EQ(r.periods.size(), 1U);
  EXPECT_TRUE(r.periods[0].archived);
  EXPECT_EQ(r.periods[0].history, 1);
  EXPECT_EQ(sql("SELECT string_agg(member || ':' || rank, ',' ORDER BY rank, member) FROM " +
                prefix + ".history WHERE board = 'arc'"),
            "a:1,c:3");
  EXPECT_EQ(sql("SELECT members FROM " + prefix + ".periods WHERE board = 'arc'"), "2");
  EXPECT_FALSE(lb.moderation().remove("arc", "b", std::string("daily"), ref.period.id).found());
}

// A spill took the member (its cold row on the way) when R1 removed it: the spill's last step
// must leave the tombstone, else the committed row would list the member again (and stay,
// were the removal killed before R2).
TEST_F(RemoveBanTest, ASpillRacingTheRemovalKeepsTheTombstone) {
  six_members();
  const service::PeriodRef ref = lb.resolve("rb", "daily", std::nullopt);
  const hot::PeriodKeys keys(hot::BoardKeys(prefix, "rb"), "daily", ref.period.id);
  const Instant expire = ref.period.end + std::chrono::hours{24 * 3650};
  hot::BoardScripts scripts(prefix, true);
  ASSERT_GE(scripts.mark_spilled(conn, keys, expire), 0);
  const auto taken = scripts.take_for_spill(conn, keys, 3, 3, expire);  // d, e, f
  ASSERT_EQ(taken.members.size(), 3U);
  hot::Moderation mod(prefix);
  mod.remove(conn, {"rb", "e", {{"daily", ref.period.id, expire}}, false, false, {}});  // R1 only
  std::vector<cold::ColdRow> rows;
  for (const auto& m : taken.members) rows.push_back({m.member, m.encoded, 0, std::nullopt});
  cold.upsert({"rb", "daily", ref.period.id}, rows);
  scripts.remove_spilled(conn, keys, 3, taken.members);
  EXPECT_EQ(conn.command({"SISMEMBER", keys.stale, "e"}).as_int(), 1);
  EXPECT_FALSE(lb.reads().member({ref}, "e"));
  EXPECT_EQ(lb.reads().periods("rb").at(0).current_members, 5);
}

}  // namespace
}  // namespace bk
