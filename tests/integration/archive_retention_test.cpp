// History retention against real Redis and PostgreSQL: periods past their period name's
// retention lose their rows (whole partitions or tables where they can), the rest stays.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "archive_fixture.h"

namespace bk {
namespace {

using namespace archive_test;  // NOLINT(google-build-using-namespace): the suite's fixture

// Boards with a history retention (`retention`: the config's history section), their
// servers, and the tick that archives and prunes them.
class RetentionRun {
 public:
  RetentionRun(const std::string& boards, const std::string& retention)
      : text(test::config_text(prefix, boards) + retention) {}

  // `members` (5 points each) on `board` at `when`.
  void add(const std::string& board, const char* when,
           const std::vector<const char*>& members = {"ann", "bob", "cy"}) {
    Leaderboards lb(config, conn, Clock(at(when)), &cold);
    for (const char* m : members) {
      ASSERT_EQ(lb.apply(Update{board, m, 5, at(when), ""}).status, UpdateStatus::applied);
    }
  }

  std::int64_t count(const std::string& sql) { return std::stoll(test::psql(sql)); }

  std::int64_t rows_of(const std::string& board, const std::string& period, const std::string& id) {
    return count("SELECT count(*) FROM " + q + "history_rows WHERE board = '" + board +
                 "' AND period = '" + period + "' AND period_id = '" + id + "'");
  }

  auto tick(const char* now, bool dry_run = false) {
    lifecycle::TickOptions o;
    o.dry_run = dry_run;
    const auto report = lifecycle::Tick(config, conn, cold, archive, Clock(at(now))).run(o);
    EXPECT_FALSE(report.any_failed()) << report.history.error;
    return report.history;
  }

  std::string prefix = test::unique_prefix();
  std::string q = prefix + ".";
  std::string text;
  Config config = parse_config(text, "test.yaml", {});
  redis::Connection conn = test::connect_redis();
  cold::ColdStore cold{test::postgres_url(), prefix};
  bool migrated = (cold.migrate(), true);  // the schema first, then History's connection
  cold::History archive{test::postgres_url(), prefix};
};

// The boards' events of the test below: 3 members each.
const std::vector<std::pair<std::string, const char*>> kEvents{
    {"keep", "2026-12-10T10:00:00Z"}, {"keep", "2026-12-11T10:00:00Z"},
    {"keep", "2027-01-05T10:00:00Z"}, {"ret", "2027-01-06T10:00:00Z"},
    {"ret", "2027-01-07T10:00:00Z"},  {"other", "2027-01-05T10:00:00Z"},
    {"keep", "2027-02-25T10:00:00Z"}, {"ret", "2027-02-25T10:00:00Z"}};

// Mar 1 of the test below: the January days go row by row, as the month also holds periods
// kept forever (ret's January, other's first week); the February days are not due.
void expect_january_days_pruned(RetentionRun& run) {
  const auto h = run.tick("2027-03-01T00:30:00Z");
  EXPECT_EQ(h.periods, 3);
  EXPECT_EQ(h.rows, 9);
  EXPECT_EQ(h.partitions, 0);
  for (const auto& [board, id] : std::vector<std::pair<std::string, std::string>>{
           {"keep", "2027-01-05"}, {"ret", "2027-01-06"}, {"ret", "2027-01-07"}}) {
    EXPECT_EQ(run.rows_of(board, "daily", id), 0) << board << " " << id;
  }
  EXPECT_EQ(run.rows_of("ret", "monthly", "2027-01"), 3);
  EXPECT_EQ(run.rows_of("other", "weekly", "2027-W01"), 3);
  EXPECT_EQ(run.rows_of("keep", "daily", "2027-02-25"), 3);
  EXPECT_EQ(run.rows_of("ret", "daily", "2027-02-25"), 3);
  EXPECT_EQ(run.rows_of("ret", "monthly", "2027-02"), 3);
  EXPECT_EQ(test::psql("SELECT to_regclass('" + run.q + "history_rows_y2027m01') IS NOT NULL"),
            "t\n");
  EXPECT_EQ(run.count("SELECT count(*) FROM " + run.q + "periods WHERE pruned_at IS NOT NULL"), 5);
}

// History retention: periods past their period name's retention lose their rows (a month
// partition whose periods are all due is dropped whole), keep their periods row (pruned_at
// set); other periods, names kept forever and other boards are untouched; a dry run and a
// re-run change nothing.
TEST(HistoryRetentionTest, DuePeriodsArePrunedWholeMonthsDroppedTheRestUntouched) {
  RetentionRun run(R"(  - name: keep
    periods: [daily]
    max_points: 1000
    retention: {default: 3650d}
  - name: ret
    periods: [daily, monthly]
    max_points: 1000
    retention: {default: 3650d}
  - name: other
    periods: [weekly]
    max_points: 1000
    retention: {default: 3650d}
)",
                   "history:\n  retention:\n    daily: 30d\n");
  for (const auto& [board, when] : kEvents) run.add(board, when);
  const std::string& q = run.q;

  // Feb 1: everything up to January is archived; the December days are past 30 days and
  // alone in their month: the partition goes whole.
  auto h = run.tick("2027-02-01T00:30:00Z");
  EXPECT_EQ(h.periods, 2);
  EXPECT_EQ(h.rows, 6);
  EXPECT_EQ(h.partitions, 1);
  EXPECT_EQ(test::psql("SELECT to_regclass('" + q + "history_rows_y2026m12') IS NULL"), "t\n");
  EXPECT_EQ(
      run.count("SELECT count(*) FROM " + q +
                "periods WHERE period_id IN ('2026-12-10', '2026-12-11') AND pruned_at IS NOT "
                "NULL AND status = 'archived' AND members = 3"),
      2);
  EXPECT_EQ(run.rows_of("keep", "daily", "2027-01-05"), 3);  // not due yet (ended Jan 6)

  // A dry run says what would go and removes nothing.
  h = run.tick("2027-03-01T00:30:00Z", true);
  EXPECT_EQ(h.periods, 3);
  EXPECT_EQ(h.rows, 9);
  EXPECT_EQ(run.rows_of("keep", "daily", "2027-01-05"), 3);

  expect_january_days_pruned(run);

  // Again: nothing more.
  const std::int64_t before = run.count("SELECT count(*) FROM " + q + "history_rows");
  h = run.tick("2027-03-01T00:40:00Z");
  EXPECT_EQ(h.periods, 0);
  EXPECT_EQ(run.count("SELECT count(*) FROM " + q + "history_rows"), before);

  // The history command says the rows are gone rather than showing an empty period.
  const auto r =
      test::run_cli({"--config", test::write_text_config(run.prefix, run.text),
                     "--now=2027-03-01T00:40:00Z", "history", "keep", "daily", "2027-01-05"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("history.retention"), std::string::npos) << r.err;
}

// Each period name keeps its history for its own retention, counted from the period's end:
// with daily 30d and weekly 400d, a tick removes only the daily period that ended more than
// 30 days ago. (Pruning a period as soon as it ended would remove all four here: the two
// weeks and the daily period that were not due.)
TEST(HistoryRetentionTest, EachPeriodIsKeptForItsOwnRetentionFromItsEnd) {
  RetentionRun run(R"(  - name: mixed
    periods: [daily, weekly]
    max_points: 1000
    retention: {default: 3650d}
)",
                   "history:\n  retention:\n    daily: 30d\n    weekly: 400d\n");
  for (const char* when : {"2027-01-05T10:00:00Z", "2027-01-20T10:00:00Z"}) {
    ASSERT_NO_FATAL_FAILURE(run.add("mixed", when, {"ann"}));
  }
  std::int64_t pruned = 0;
  for (const char* now : {"2027-02-01T00:30:00Z", "2027-02-10T00:30:00Z"}) {
    pruned += run.tick(now).periods;
  }
  EXPECT_EQ(pruned, 1);
  const auto rows_of = [&](const std::string& period, const std::string& id) {
    return test::psql("SELECT count(*) FROM " + run.prefix +
                      ".history_rows WHERE board = 'mixed' AND period = '" + period +
                      "' AND period_id = '" + id + "'");
  };
  EXPECT_EQ(rows_of("daily", "2027-01-05"), "0\n");  // ended Jan 6: past 30 days on Feb 10
  EXPECT_EQ(rows_of("daily", "2027-01-20"), "1\n");  // ended Jan 21: 20 days
  EXPECT_EQ(rows_of("weekly", "2027-W01"), "1\n");   // 400 days
  EXPECT_EQ(rows_of("weekly", "2027-W03"), "1\n");
}

// A large period's history is a table of its own: retention drops it whole, and leaves the
// shared month partition's other periods (and the tables of periods not due) alone.
TEST(HistoryRetentionTest, ALargePeriodsTableIsDroppedWhole) {
  RetentionRun run(R"(  - name: ret
    periods: [daily]
    max_points: 1000
    retention: {default: 3650d}
  - name: keep
    periods: [weekly]
    max_points: 1000
    retention: {default: 3650d}
)",
                   "history:\n  retention:\n    daily: 30d\n");
  run.archive.set_large_period_rows(3);
  run.add("ret", "2027-01-05T10:00:00Z", {"ann", "bob", "cy"});   // large
  run.add("ret", "2027-01-06T10:00:00Z", {"ann", "bob"});         // shared partition
  run.add("ret", "2027-01-20T10:00:00Z", {"ann", "bob", "cy"});   // large, not due yet
  run.add("keep", "2027-01-05T10:00:00Z", {"ann", "bob", "cy"});  // large, kept
  const std::string& q = run.q;
  auto rows_of = [&](const std::string& id) {
    return run.count("SELECT count(*) FROM " + q + "history WHERE board = 'ret' AND period_id = '" +
                     id + "'");
  };
  run.tick("2027-02-01T00:30:00Z");  // archives everything
  const std::string part_of_first = test::psql(
      "SELECT history_part FROM " + q + "periods WHERE board = 'ret' AND period_id = '2027-01-05'");
  ASSERT_NE(part_of_first, "\n");
  const std::string table =
      q + "history_large_" + part_of_first.substr(0, part_of_first.size() - 1);
  EXPECT_EQ(test::psql("SELECT to_regclass('" + table + "') IS NOT NULL"), "t\n");

  auto h = run.tick("2027-02-10T00:30:00Z");  // Jan 5 and 6 are past 30 days
  EXPECT_EQ(h.periods, 2);
  EXPECT_EQ(h.rows, 5);
  EXPECT_EQ(h.partitions, 1);  // the large period's table; the month keeps `keep`
  EXPECT_EQ(test::psql("SELECT to_regclass('" + table + "') IS NULL"), "t\n");
  EXPECT_EQ(rows_of("2027-01-05"), 0);
  EXPECT_EQ(rows_of("2027-01-06"), 0);
  EXPECT_EQ(rows_of("2027-01-20"), 3);
  EXPECT_EQ(run.count("SELECT count(*) FROM " + q + "history WHERE board = 'keep'"), 3);
  EXPECT_EQ(run.count("SELECT count(*) FROM " + q + "periods WHERE pruned_at IS NOT NULL"), 2);

  h = run.tick("2027-02-10T00:40:00Z");  // again: nothing more
  EXPECT_EQ(h.periods, 0);
  EXPECT_EQ(rows_of("2027-01-20"), 3);
}

}  // namespace
}  // namespace bk
