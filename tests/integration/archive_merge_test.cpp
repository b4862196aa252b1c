// The archive's merge against real Redis and PostgreSQL: random boards of every order and
// tie-break archive as the contract's listing computed from their events, row for row.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "archive_fixture.h"
#include "hot/keys.h"

namespace bk {
namespace {

using namespace archive_test;  // NOLINT(google-build-using-namespace): the suite's fixture

struct Kind {
  std::string name, order, tie, resolution;
};
const std::vector<Kind> kKinds{{"dese", "desc", "earliest", "s"},
                               {"desl", "desc", "latest", "ms"},
                               {"ascn", "asc", "none", "ms"},
                               {"asce", "asc", "earliest", "s"},
                               {"ascl", "asc", "latest", "s"}};
// Members whose ids differ in bytes that collations order differently.
const std::vector<std::string> kNames{"a",   "B",   "b",  "_x", "Z9", "z",  "é", "e", "10", "9",
                                      "a b", "a-b", "ab", "A",  "ß",  "ss", "m", "n", "o",  "p",
                                      "q",   "r",   "s",  "t",  "u",  "v",  "w", "x", "y",  "00"};
const std::string kDay = "2027-02-10";

std::string kinds_yaml() {
  std::string yaml;
  for (const Kind& k : kKinds) {
    yaml += "  - name: " + k.name + "\n    periods: [daily]\n    order: " + k.order +
            "\n    tie_break: " + k.tie + "\n    time_resolution: " + k.resolution +
            "\n    max_points: 1000\n    hot_keep: 6\n    display: 3\n"
            "    archive: {grace: 1m}\n    retention: {default: 3650d}\n";
  }
  return yaml;
}

// A member of the listing as the contract orders it.
struct Row {
  std::string member;
  std::int64_t points;
  Instant when;
};

// Strictly better on board kind `k`, ignoring the member.
bool better(const Kind& k, const Row& a, const Row& b) {
  const bool desc = k.order == "desc";
  if (a.points != b.points) return desc ? a.points > b.points : a.points < b.points;
  if (k.tie == "none" || a.when == b.when) return false;
  return k.tie == "earliest" ? a.when < b.when : a.when > b.when;
}

// The five boards, their events and the model of what each member holds.
class MergeRun {
 public:
  explicit MergeRun(bool large) : large_(large) {
    if (large) archive.set_large_period_rows(1);
  }

  // Events in time order, many within one second (ties at 1 s resolution); values small
  // (ties in points).
  void play(int n) {
    for (int i = 0; i < n; ++i) {
      if (rng() % 12 == 0) t += Millis{1000 + rng() % 1500};
      const Kind& k = kKinds[rng() % kKinds.size()];
      const std::string& member = kNames[rng() % kNames.size()];
      const std::int64_t value = 1 + static_cast<std::int64_t>(rng() % 3);
      Leaderboards lb(config, conn, Clock(t + Millis{10}), &cold);
      const auto r = lb.apply(Update{k.name, member, value, t, ""});
      ASSERT_EQ(r.status, UpdateStatus::applied) << r.reason;
      Member& m = model[k.name][member];
      m.points += value;
      const Millis res{k.resolution == "s" ? 1000 : 1};
      m.when = start + (t - start) / res * res;
    }
  }

  void tick(Instant now) {
    ASSERT_FALSE(lifecycle::Tick(config, conn, cold, archive, Clock(now)).run({}).any_failed());
  }

  // Stale cold rows: rows for members that are hot now, with scores they no longer have.
  void add_stale_rows() {
    for (const Kind& k : kKinds) {
      const auto hot_members =
          conn.command({"ZRANGE", hot::BoardKeys(prefix, k.name).live("daily", kDay), "0", "2"});
      std::vector<cold::ColdRow> stale;
      for (const auto& e : hot_members.elements) {
        stale.push_back({e.as_string(), 0, k.order == "desc" ? 1000 : 0, start});
      }
      ASSERT_FALSE(stale.empty());
      cold.upsert({k.name, "daily", kDay}, stale);
    }
  }

  // The contract's listing of board kind `k` from the model.
  std::vector<Row> listing(const Kind& k) {
    std::vector<Row> want;
    for (const auto& [member, m] : model[k.name]) want.push_back({member, m.points, m.when});
    std::sort(want.begin(), want.end(), [&](const Row& a, const Row& b) {
      if (better(k, a, b)) return true;
      if (better(k, b, a)) return false;
      return a.member < b.member;  // bytewise
    });
    return want;
  }

  void expect_archived_as_listing(const Kind& k) {
    const std::vector<Row> want = listing(k);
    const auto got = archive.history({k.name, "daily", kDay}, 1000);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_NO_FATAL_FAILURE(expect_rows(k, got, want));
    expect_reads_agree(k, got, want.size());
  }

  std::int64_t cold_rows() {
    return std::stoll(test::psql("SELECT count(*) FROM " + prefix + ".cold_members"));
  }

 private:
  struct Member {
    std::int64_t points = 0;
    Instant when;
  };

  void expect_rows(const Kind& k, const std::vector<cold::HistoryRow>& got,
                   const std::vector<Row>& want) {
    const bool tied = k.tie != "none";
    std::int64_t rank = 0;
    std::size_t same_points = 0, ties = 0;  // next to the one before: equal points; equal rank
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (i > 0 && want[i - 1].points == want[i].points) ++same_points;
      if (i == 0 || better(k, want[i - 1], want[i])) {
        rank = static_cast<std::int64_t>(i + 1);
      } else {
        ++ties;
      }
      EXPECT_EQ(got[i].position, static_cast<std::int64_t>(i + 1));
      EXPECT_EQ(got[i].member, want[i].member) << "position " << i + 1;
      EXPECT_EQ(got[i].points, want[i].points) << want[i].member;
      EXPECT_EQ(got[i].rank, rank) << want[i].member;
      if (tied) {
        ASSERT_TRUE(got[i].achieved_at.has_value());
        EXPECT_EQ(*got[i].achieved_at, want[i].when) << want[i].member;
      } else {
        EXPECT_FALSE(got[i].achieved_at.has_value());
      }
    }
    // Otherwise the test would not see the order the tie-break gives, or ranks shared.
    EXPECT_GT(same_points, 0U) << "the events made no equal points";
    if (k.resolution == "s" || !tied) {
      EXPECT_GT(ties, 0U) << "the events made no full ties";
    }
  }

  // The view and the SQL functions read the same rows, wherever they live.
  void expect_reads_agree(const Kind& k, const std::vector<cold::HistoryRow>& got,
                          std::size_t rows) {
    const std::string where =
        " WHERE board = '" + k.name + "' AND period = 'daily' AND period_id = '" + kDay + "'";
    EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".history" + where),
              std::to_string(rows) + "\n");
    EXPECT_EQ(test::psql("SELECT string_agg(member || ':' || rank, ',') FROM " + prefix + ".top('" +
                         k.name + "', 'daily', '" + kDay + "', 3)"),
              got[0].member + ":" + std::to_string(got[0].rank) + "," + got[1].member + ":" +
                  std::to_string(got[1].rank) + "," + got[2].member + ":" +
                  std::to_string(got[2].rank) + "\n");
    EXPECT_EQ(test::psql("SELECT count(*) FROM " + prefix + ".history_large" + where),
              large_ ? std::to_string(rows) + "\n" : "0\n");
    EXPECT_EQ(test::psql("SELECT history_part IS NOT NULL FROM " + prefix + ".periods" + where),
              large_ ? "t\n" : "f\n");
  }

  bool large_;
  std::string prefix = test::unique_prefix();
  Config config = test::make_config(prefix, kinds_yaml());
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  bool migrated = (cold.migrate(), true);  // the schema first, then History's connection
  cold::History archive{test::postgres_url(), prefix};
  Instant start = at("2027-02-10T00:00:00Z");
  std::mt19937 rng{12};
  std::map<std::string, std::map<std::string, Member>> model;  // board -> member -> state

 public:
  Instant t = start + std::chrono::hours{1};  // the time of the last event
};

// The archive's merge runs in PostgreSQL (only the hot members travel). On random boards of
// every order and tie-break, with ties, members spilled and rehydrated, and stale cold rows
// (a cold row of a member that is hot: the hot value wins), the history equals the
// contract's listing computed here from the events, row for row. Run twice: into the shared
// month partition, and as large periods (each into a table of its own, indexed after).
class ArchiveMergeTest : public ::testing::TestWithParam<bool> {};

TEST_P(ArchiveMergeTest, RandomBoardsOfEveryOrderAndTieBreakArchiveAsTheirListing) {
  MergeRun run(GetParam());
  run.play(300);
  run.tick(run.t + Millis{1000});  // each board spills down to 6
  run.play(300);                   // rehydrates some, spills again below
  run.tick(run.t + Millis{1000});
  run.play(100);
  ASSERT_NO_FATAL_FAILURE(run.add_stale_rows());
  run.tick(at("2027-02-11T00:05:00Z"));
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    ASSERT_NO_FATAL_FAILURE(run.expect_archived_as_listing(k));
  }
  EXPECT_EQ(run.cold_rows(), 0);
}

INSTANTIATE_TEST_SUITE_P(SharedOrOwnTable, ArchiveMergeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Large" : "Shared";
                         });

}  // namespace
}  // namespace bk
