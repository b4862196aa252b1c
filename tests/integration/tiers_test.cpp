// Tiers against real Redis and PostgreSQL: every read of a tiered board (top and its pages,
// top_at, ranks, members, around, the write answer, the CLI) carries the tier an independent
// computation from the full listing gives, for hot and spilled members, on desc and asc boards,
// by rank, percentile and points, with ties on the cut-offs; the archive freezes the same tiers
// into history (the view's tier column, the history reads, the counts per tier); untiered boards
// keep null; check-config refuses bad rules with file:line:column.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cold/cold_store.h"
#include "cold/history.h"
#include "cold/member_rows.h"
#include "harness.h"
#include "lifecycle/tick.h"
#include "served.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

using service::Leaderboards;
using service::Standing;

Instant at(const char* text) {
  return *parse_rfc3339(text);
}

// tie_break: none, so equal points share a competition rank (1, 1, 3, ...).
const char* kBoards = R"(  - name: desc
    periods: [daily]
    tie_break: none
    max_points: 1000
    hot_keep: 5
    display: 3
    archive: {grace: 1m}
    retention: {default: 3650d}
    tiers:
      - {name: champion, top: 1}
      - {name: gold, top: "20%"}
      - {name: silver, min_points: 500}
  - name: asc
    periods: [daily]
    order: asc
    tie_break: none
    max_points: 100000
    hot_keep: 4
    display: 2
    archive: {grace: 1m}
    retention: {default: 3650d}
    tiers:
      - {name: podium, top: 3}
      - {name: fast, max_points: 60}
      - {name: quick, top: "60%"}
  - name: plain
    periods: [daily]
    max_points: 1000
    archive: {grace: 1m}
    retention: {default: 3650d}
)";

const Instant kDay = at("2027-06-10T10:00:00Z");
const Instant kNoon = at("2027-06-10T12:00:00Z");
const Instant kNextDay = at("2027-06-11T00:05:00Z");  // past the end plus grace

// The tiers written above, computed here on their own from a row of the full listing and the
// listing's length (floating point ceil, not the product's integer arithmetic).
using Oracle = std::optional<std::string> (*)(const Standing&, std::size_t members);

std::optional<std::string> desc_tier(const Standing& s, std::size_t members) {
  if (s.rank <= 1) return "champion";
  if (s.rank <= static_cast<std::int64_t>(std::ceil(static_cast<double>(members) * 0.20)))
    return "gold";
  if (s.points >= 500) return "silver";
  return std::nullopt;
}

std::optional<std::string> asc_tier(const Standing& s, std::size_t members) {
  if (s.rank <= 3) return "podium";
  if (s.points <= 60) return "fast";
  if (s.rank <= static_cast<std::int64_t>(std::ceil(static_cast<double>(members) * 0.60)))
    return "quick";
  return std::nullopt;
}

std::string shown(const std::optional<std::string>& tier) {
  return tier ? *tier : "(none)";
}

class TiersTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kBoards);
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  cold::History archive{test::postgres_url(), prefix};

  void SetUp() override { cold.migrate(); }

  void fill(const std::string& board, const std::vector<std::int64_t>& points) {
    Leaderboards lb(config, conn, Clock(kNoon), &cold);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto r = lb.apply({board, "m" + std::to_string(i), points[i],
                               kDay + std::chrono::seconds{static_cast<int>(i)}, ""});
      ASSERT_EQ(r.status, service::UpdateStatus::applied) << r.reason;
    }
  }

  lifecycle::TickReport tick(Instant now) {
    return lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({});
  }

  // The whole listing of today, and member -> the tier the oracle gives it.
  std::map<std::string, std::optional<std::string>> expected(Leaderboards& lb,
                                                             const std::string& board,
                                                             Oracle oracle) {
    const auto all = lb.reads().top_at({lb.resolve(board, "daily", std::nullopt)}, 0, 1000);
    std::map<std::string, std::optional<std::string>> out;
    for (const Standing& s : all) out[s.member] = oracle(s, all.size());
    return out;
  }

  // Every open read of today's period against the oracle.
  void expect_open_reads(const std::string& board, Oracle oracle) {
    Leaderboards lb(config, conn, Clock(kNoon), &cold);
    service::Reads& reads = lb.reads();
    const service::PeriodView view{lb.resolve(board, "daily", std::nullopt)};
    const auto want = expected(lb, board, oracle);
    ASSERT_GT(reads.count(view), lb.reads().periods(board).at(0).hot_members) << "not spilled";
    for (const Standing& s : reads.top_at(view, 0, 1000)) {
      EXPECT_EQ(shown(s.tier), shown(want.at(s.member))) << "top_at " << s.member;
      EXPECT_TRUE(s.unavailable.empty());
    }
    std::optional<service::PageMark> mark;
    std::size_t paged = 0;
    do {  // pages of 4 along the cursors, hot and cold
      const service::Page page = reads.top(view, mark, 4);
      for (const Standing& s : page.rows) {
        EXPECT_EQ(shown(s.tier), shown(want.at(s.member))) << "page " << s.member;
      }
      paged += page.rows.size();
      mark = page.next;
    } while (mark);
    EXPECT_EQ(paged, want.size());
    std::vector<std::string> members;
    for (const auto& [m, tier] : want) members.push_back(m);
    const auto ranked = reads.ranks(view, members);
    for (std::size_t i = 0; i < members.size(); ++i) {
      ASSERT_TRUE(ranked[i]) << members[i];
      EXPECT_EQ(shown(ranked[i]->tier), shown(want.at(members[i]))) << "ranks " << members[i];
    }
    for (const Standing& s : reads.around(view, "m9", 3)) {
      EXPECT_EQ(shown(s.tier), shown(want.at(s.member))) << "around " << s.member;
    }
  }

  // The archive of today: history rows, the history view and the archived reads carry the
  // tiers of the final listing; the tick reports the counts per tier.
  void expect_archived(const std::string& board, Oracle oracle,
                       const std::vector<std::string>& tier_names) {
    std::map<std::string, std::optional<std::string>> want;
    {
      Leaderboards lb(config, conn, Clock(kNoon), &cold);
      want = expected(lb, board, oracle);
    }
    const auto report = tick(kNextDay);
    ASSERT_FALSE(report.any_failed());
    std::map<std::string, std::int64_t> counted;
    for (const auto& b : report.boards) {
      for (const auto& p : b.periods) {
        if (b.board != board || !p.archived) continue;
        ASSERT_EQ(p.archived_tiers.size(), tier_names.size());
        for (std::size_t i = 0; i < tier_names.size(); ++i) {
          EXPECT_EQ(p.archived_tiers[i].tier, tier_names[i]);
          counted[p.archived_tiers[i].tier] = p.archived_tiers[i].members;
        }
      }
    }
    std::map<std::string, std::int64_t> by_oracle;
    for (const auto& [m, tier] : want) {
      if (tier) ++by_oracle[*tier];
    }
    for (const std::string& t : tier_names) EXPECT_EQ(counted[t], by_oracle[t]) << t;
    const cold::PeriodKey key{board, "daily", "2027-06-10"};
    const auto rows = archive.history(key, 1000);
    ASSERT_EQ(rows.size(), want.size());
    for (const auto& h : rows) EXPECT_EQ(shown(h.tier), shown(want.at(h.member))) << h.member;
    // The view's column, as SQL users read it.
    const std::string listed = test::psql(
        "SELECT string_agg(member || '=' || coalesce(tier, '(none)'), ',' ORDER BY member) FROM " +
        prefix + ".history WHERE board = '" + board + "'");
    std::string oracle_list;
    for (const auto& [m, tier] : want) {
      oracle_list += (oracle_list.empty() ? "" : ",") + m + "=" + shown(tier);
    }
    EXPECT_EQ(listed, oracle_list + "\n");
    // Archived reads answer the frozen tier.
    Leaderboards lb(config, conn, Clock(kNextDay), &cold);
    lb.reads().read_history_from([&]() -> cold::History& { return archive; });
    const service::PeriodView view = lb.reads().locate(board, "daily", "2027-06-10");
    ASSERT_EQ(view.state, service::PeriodState::archived);
    for (const Standing& s : lb.reads().top_at(view, 0, 1000)) {
      EXPECT_EQ(shown(s.tier), shown(want.at(s.member))) << "archived " << s.member;
    }
    EXPECT_EQ(shown(lb.reads().member(view, "m3")->tier), shown(want.at("m3")));
  }
};

TEST_F(TiersTest, DescBoardTiersByRankPercentileAndPointsForHotAndSpilledMembers) {
  // 30 members: m0 and m1 tie on rank 1 (both champion); 20% (ceil(6.0) = 6) admits ranks 3
  // to 6 (m2..m5), so a count off by one (31: 7) would put m6 in gold; then points down to 500
  // (silver), 499 and below none. The write below leaves a stale cold row the archive's count
  // must leave out.
  std::vector<std::int64_t> points{900, 900, 800, 800, 700, 650, 600, 550, 500, 500};
  for (int i = 0; i < 20; ++i) points.push_back(499 - i);
  fill("desc", points);
  ASSERT_FALSE(tick(kNoon).any_failed());  // spills all but 5
  {
    Leaderboards lb(config, conn, Clock(kNoon), &cold);
    const auto want = expected(lb, "desc", desc_tier);
    EXPECT_EQ(shown(want.at("m0")), "champion");
    EXPECT_EQ(shown(want.at("m1")), "champion");
    EXPECT_EQ(shown(want.at("m2")), "gold");
    EXPECT_EQ(shown(want.at("m5")), "gold");
    EXPECT_EQ(shown(want.at("m6")), "silver");
    EXPECT_EQ(shown(want.at("m9")), "silver");
    EXPECT_EQ(shown(want.at("m10")), "(none)");
  }
  expect_open_reads("desc", desc_tier);
  // The write answer: a spilled member moves up a tier.
  {
    Leaderboards lb(config, conn, Clock(kNoon), &cold);
    const service::Written w = lb.write({"desc", "m29", 100, kNoon, ""});  // 480 -> 580
    ASSERT_EQ(w.periods.size(), 1U);
    EXPECT_TRUE(w.periods[0].tiered);
    ASSERT_TRUE(w.periods[0].after);
    EXPECT_EQ(shown(w.periods[0].after->tier), "silver");
    ASSERT_TRUE(w.periods[0].before);
    EXPECT_EQ(shown(w.periods[0].before->tier), "(none)");
  }
  expect_open_reads("desc", desc_tier);
  expect_archived("desc", desc_tier, {"champion", "gold", "silver"});
}

// The write answers take the tier from the write's own standings (the update script's call, for
// a hot member one Redis round trip) and a batch's from its read after the batch: each equal to
// what the full listing says afterwards; an untiered board's carry none.
TEST_F(TiersTest, TheWriteAnswersCarryTheTierTheListingGivesAfterwards) {
  std::vector<std::int64_t> points{900, 900, 800, 800, 700, 650, 600, 550, 500, 500};
  for (int i = 0; i < 20; ++i) points.push_back(499 - i);
  fill("desc", points);
  fill("plain", {10, 20});
  ASSERT_FALSE(tick(kNoon).any_failed());  // spills all but m0..m4
  Leaderboards lb(config, conn, Clock(kNoon), &cold);
  const auto after_is = [&](const service::PeriodStanding& p, const std::string& member,
                            const std::string& tier) {
    EXPECT_TRUE(p.tiered);
    ASSERT_TRUE(p.after) << member;
    EXPECT_EQ(shown(p.after->tier), tier) << member;
    EXPECT_EQ(shown(p.after->tier), shown(expected(lb, "desc", desc_tier).at(member))) << member;
  };
  // m4 (700, hot, rank 5 of 30: gold) to 1000: rank 1 alone, champion.
  service::Written w = lb.write({"desc", "m4", 300, kNoon, ""});
  ASSERT_EQ(w.periods.size(), 1U);
  after_is(w.periods[0], "m4", "champion");
  ASSERT_TRUE(w.periods[0].before);
  EXPECT_EQ(shown(w.periods[0].before->tier), "gold");
  // m12 (497, spilled: none) to 547, 9th: silver.
  w = lb.write({"desc", "m12", 50, kNoon, ""});
  ASSERT_EQ(w.periods.size(), 1U);
  after_is(w.periods[0], "m12", "silver");
  // A batch with standings: m13 (496, spilled) to 506, m2 (800, hot) to 801, 4th.
  const auto batch = lb.write_batch(
      {{"desc", "m13", 10, kNoon, ""}, {"desc", "m2", 1, kNoon, ""}, {"plain", "m0", 5, kNoon, ""}},
      true);
  ASSERT_EQ(batch.size(), 3U);
  ASSERT_EQ(batch[0].periods.size(), 1U);
  after_is(batch[0].periods[0], "m13", "silver");
  ASSERT_EQ(batch[1].periods.size(), 1U);
  after_is(batch[1].periods[0], "m2", "gold");
  ASSERT_EQ(batch[2].periods.size(), 1U);
  EXPECT_FALSE(batch[2].periods[0].tiered);
  ASSERT_TRUE(batch[2].periods[0].after);
  EXPECT_FALSE(batch[2].periods[0].after->tier);
  w = lb.write({"plain", "m1", 1, kNoon, ""});
  ASSERT_EQ(w.periods.size(), 1U);
  EXPECT_FALSE(w.periods[0].tiered);
  ASSERT_TRUE(w.periods[0].after);
  EXPECT_FALSE(w.periods[0].after->tier);
}

TEST_F(TiersTest, AscBoardTiersWithATieOnTheTopCutoff) {
  // Ranks 1, 1, 3, 3, 5, 6, 6, 8, 8, 10, ...: top 3 admits four members (the tie on rank 3);
  // points <= 60 the next three; 60% of 12 (ceil(7.2) = 8) admits both members ranked 8, the
  // second listed 9th.
  fill("asc", {30, 30, 40, 40, 50, 60, 60, 70, 70, 90, 100, 110});
  ASSERT_FALSE(tick(kNoon).any_failed());
  {
    Leaderboards lb(config, conn, Clock(kNoon), &cold);
    const auto want = expected(lb, "asc", asc_tier);
    EXPECT_EQ(shown(want.at("m3")), "podium");
    EXPECT_EQ(shown(want.at("m6")), "fast");
    EXPECT_EQ(shown(want.at("m7")), "quick");
    EXPECT_EQ(shown(want.at("m8")), "quick");  // listed 9th, ranked 8th: in the better tier
    EXPECT_EQ(shown(want.at("m9")), "(none)");
  }
  expect_open_reads("asc", asc_tier);
  archive.set_large_period_rows(5);  // archived into a table of its own (history_large)
  expect_archived("asc", asc_tier, {"podium", "fast", "quick"});
  EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix +
                       ".periods WHERE board = 'asc' AND history_part IS NOT NULL"),
            "1\n");
}

TEST_F(TiersTest, UntieredBoardsHaveNoTierAndTheViewSaysNull) {
  fill("plain", {10, 20, 30});
  {
    Leaderboards lb(config, conn, Clock(kNoon), &cold);
    for (const Standing& s :
         lb.reads().top_at({lb.resolve("plain", "daily", std::nullopt)}, 0, 10)) {
      EXPECT_FALSE(s.tier) << s.member;
    }
  }
  ASSERT_FALSE(tick(kNextDay).any_failed());
  EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix +
                       ".history WHERE board = 'plain' AND tier IS NULL"),
            "3\n");
  for (const auto& h : archive.history({"plain", "daily", "2027-06-10"}, 10)) EXPECT_FALSE(h.tier);
}

TEST_F(TiersTest, TheCommandsShowTiersOnTieredBoardsOnly) {
  fill("desc", {900, 800, 100});
  fill("plain", {10});
  const std::string path = test::write_config(prefix, kBoards);
  const auto bk = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", path, "--now=2027-06-10T12:00:00Z"});
    return test::run_cli(args);
  };
  auto r = bk({"top", "desc", "daily", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("member":"m0","points":900,"achieved_at":null,"tier":"champion")"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"("member":"m2","points":100,"achieved_at":null,"tier":null)"),
            std::string::npos)
      << r.out;
  r = bk({"rank", "desc", "daily", "m1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" tier "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" silver "), std::string::npos) << r.out;
  r = bk({"top", "plain", "daily", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("tier"), std::string::npos) << r.out;
  ASSERT_FALSE(tick(kNextDay).any_failed());
  r = test::run_cli({"--config", path, "--now=2027-06-11T12:00:00Z", "history", "desc", "daily",
                     "2027-06-10", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("member":"m1","points":800,"achieved_at":null,"tier":"silver")"),
            std::string::npos)
      << r.out;
}

// The JSON "tier" of a record: its name, "(none)" for null, "(absent)" without the field.
std::string tier_in(const nlohmann::json& record) {
  if (!record.contains("tier")) return "(absent)";
  return record["tier"].is_null() ? "(none)" : record["tier"].get<std::string>();
}

TEST_F(TiersTest, TheHttpApiCarriesTiersInEveryReadAndTheWriteAnswer) {
  std::vector<std::int64_t> points{900, 900, 800, 800, 700, 650, 600, 550, 500, 500};
  for (int i = 0; i < 20; ++i) points.push_back(499 - i);
  fill("desc", points);
  fill("plain", {10});
  ASSERT_FALSE(tick(kNoon).any_failed());
  std::map<std::string, std::optional<std::string>> want;
  {
    Leaderboards lb(config, conn, Clock(kNoon), &cold);
    want = expected(lb, "desc", desc_tier);
  }
  const std::string writer = "tiers-writer-5e1";
  test::Served s(test::write_config(prefix, kBoards), "/tmp/bk-tiers-" + prefix + ".log",
                 "2027-06-10T12:00:00Z", {{"BOARDKEEPER_SERVE_WRITE_TOKENS", writer}});
  const auto expect_records = [&](const test::Answer& a, const nlohmann::json& records) {
    ASSERT_EQ(a.status, 200) << a.text;
    ASSERT_FALSE(records.empty()) << a.text;
    for (const auto& r : records) {
      const std::string m = r["member"].get<std::string>();
      EXPECT_EQ(tier_in(r), shown(want.at(m))) << m << " in " << a.text;
    }
  };
  test::Answer a = s.get("/v1/boards/desc/daily/top?limit=1000");
  expect_records(a, a.body["records"]);
  EXPECT_EQ(a.body["records"].size(), want.size());
  a = s.get("/v1/boards/desc/daily/top?limit=4");  // the first page alone, hot members
  expect_records(a, a.body["records"]);
  a = s.get("/v1/boards/desc/daily/members?ids=m0,m3,m9,m29");  // m9 and m29 spilled
  expect_records(a, a.body["records"]);
  a = s.get("/v1/boards/desc/daily/members/m20/around?k=2");
  expect_records(a, a.body["records"]);
  a = s.get("/v1/boards/desc/daily/members/m3");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(tier_in(a.body), "gold") << a.text;
  a = s.post("/v1/boards/desc/members/m29/scores", R"({"value": 100})",
             {{"Authorization", "Bearer " + writer}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(tier_in(a.body["periods"][0]), "silver") << a.text;  // 480 + 100
  a = s.post("/v1/events?standings=true",
             R"({"events": [{"board": "desc", "member": "m27", "value": 100},)"
             R"( {"board": "plain", "member": "m0", "value": 1}]})",
             {{"Authorization", "Bearer " + writer}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(tier_in(a.body["results"][0]["periods"][0]), "silver") << a.text;  // 482 + 100
  EXPECT_EQ(tier_in(a.body["results"][1]["periods"][0]), "(absent)") << a.text;
  a = s.get("/v1/boards/plain/daily/top");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(tier_in(a.body["records"][0]), "(absent)") << a.text;
}

// `line` is "[boardkeeper: ]PATH:LINE:COLUMN: " (what precedes a config problem's message).
bool positioned(std::string line, const std::string& path) {
  const std::string program = "boardkeeper: ";
  if (line.rfind(program, 0) == 0) line.erase(0, program.size());
  if (line.rfind(path + ":", 0) != 0) return false;
  line.erase(0, path.size() + 1);
  int numbers = 0;
  for (std::size_t i = 0; i < line.size(); ++numbers) {
    const std::size_t digits = line.find_first_not_of("0123456789", i);
    if (digits == i || digits == std::string::npos || line[digits] != ':') return false;
    i = digits + 1;
    if (numbers == 1) return line.substr(i) == " ";
  }
  return false;
}

TEST_F(TiersTest, CheckConfigRefusesBadRulesWithFileLineAndColumn) {
  const std::string path = test::write_config(prefix, R"(  - name: bad
    periods: [daily]
    order: asc
    max_points: 1000
    retention: {default: 2d}
    tiers:
      - {name: gold, top: 100}
      - {name: gold2, top: 10}
      - {name: rich, min_points: 5}
      - {name: odd, top: "0%", bonus: 1}
)");
  const auto r = test::run_cli({"--config", path, "check-config"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string text = r.out + r.err;
  // Each problem on a line of its own: "[boardkeeper: ]FILE:LINE:COLUMN: message".
  for (const std::string& phrase : {std::string("tier 'gold2' (top 10) can never match"),
                                    std::string("min_points does not fit board 'bad', ordered asc"),
                                    std::string("top '0%' is not a percentile"),
                                    std::string("unknown key 'bonus' in a tier")}) {
    const auto found = text.find(phrase);
    ASSERT_NE(found, std::string::npos) << phrase << "\n" << text;
    const auto line_start = text.rfind('\n', found) + 1;  // npos + 1 = 0 on the first line
    const std::string line = text.substr(line_start, found - line_start);
    EXPECT_TRUE(positioned(line, path))
        << "no file:line:column before " << phrase << ": '" << line << "'";
  }
}

// The counts per tier of the archived period as the view's rows give them: "gold=6,silver=3"
// (tiers with no member left out).
std::string view_counts(const std::string& prefix, const std::string& board) {
  return test::psql(
      "SELECT string_agg(tier || '=' || n, ',' ORDER BY tier) FROM (SELECT tier,"
      " count(*) AS n FROM " +
      prefix + ".history WHERE board = '" + board + "' AND tier IS NOT NULL GROUP BY tier) t");
}

// A period's "tiers" from the history page, as view_counts writes them, every rule's tier
// present (zeros included).
std::string page_counts(const nlohmann::json& period, const std::vector<std::string>& tiers) {
  std::string out;
  std::map<std::string, std::int64_t> counts;
  for (const auto& [tier, n] : period.at("tiers").items()) counts[tier] = n.get<std::int64_t>();
  for (const std::string& t : tiers) EXPECT_TRUE(counts.count(t)) << t << " in " << period;
  for (const auto& [tier, n] : counts) {
    if (n > 0) out += (out.empty() ? "" : ",") + tier + "=" + std::to_string(n);
  }
  return out + "\n";
}

// GET .../history counts each tier as the period's history rows hold them, also after a
// member's rows went (removed from the archived period, erased); untiered: null.
TEST_F(TiersTest, TheHistoryPageCountsEachTierAsTheRowsDoThroughRemovalAndErasure) {
  std::vector<std::int64_t> points{900, 900, 800, 800, 700, 650, 600, 550, 500, 500};
  for (int i = 0; i < 20; ++i) points.push_back(499 - i);
  fill("desc", points);
  fill("plain", {10, 20});
  ASSERT_FALSE(tick(kNoon).any_failed());  // spilled, then archived
  ASSERT_FALSE(tick(kNextDay).any_failed());
  const std::vector<std::string> tiers{"champion", "gold", "silver"};
  EXPECT_EQ(view_counts(prefix, "desc"), "champion=2,gold=4,silver=4\n");  // m0, m1 tie on 900
  const std::string path = test::write_config(prefix, kBoards);
  const auto page = [&](const std::string& board) {
    const test::RunResult r = test::run_cli(
        {"--config", path, "--now=2027-06-11T12:00:00Z", "periods", board, "--archived", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  {
    test::Served s(path, "/tmp/bk-tiers-history-" + prefix + ".log", "2027-06-11T12:00:00Z");
    test::Answer a = s.get("/v1/boards/desc/daily/history");
    ASSERT_EQ(a.status, 200) << a.text;
    EXPECT_EQ(page_counts(a.body["periods"][0], tiers), view_counts(prefix, "desc")) << a.text;
    EXPECT_EQ(a.body["periods"][0]["members"], 30) << a.text;
    a = s.get("/v1/boards/plain/daily/history");
    ASSERT_EQ(a.status, 200) << a.text;
    EXPECT_TRUE(a.body["periods"][0]["tiers"].is_null()) << a.text;
  }
  // m3 (gold) removed from the archived period, as `remove` does for a period archived during
  // it; m0 (champion) erased.
  const cold::PeriodKey key{"desc", "daily", "2027-06-10"};
  ASSERT_EQ(cold::MemberRows(cold.link()).remove("m3", {key}).at(0).history, 1);
  const test::RunResult erased = test::run_cli({"--config", path, "erase", "m0"});
  ASSERT_EQ(erased.exit_code, 0) << erased.err;
  EXPECT_EQ(view_counts(prefix, "desc"), "champion=1,gold=3,silver=4\n");
  const nlohmann::json after = page("desc");
  EXPECT_EQ(page_counts(after, tiers), view_counts(prefix, "desc")) << after;
  EXPECT_EQ(after["members"], 28) << after;
  EXPECT_TRUE(page("plain")["tiers"].is_null());
}

}  // namespace
}  // namespace bk
