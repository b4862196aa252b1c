// The command layer's decisions that need no server: add's reading of its arguments and
// what it prints (and exits with) for each outcome, and the standings table and JSON lines
// the read commands print.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/add.h"

#include "api/write.h"
#include "cli/output.h"
#include "config/config.h"
#include "core/error.h"

namespace bk::cli {
namespace {

service::Update update_of(const std::string& value, std::optional<std::string> at = {}) {
  AddArgs args;
  args.board = "points";
  args.member = "alice";
  args.value = value;
  args.at = std::move(at);
  args.event_id = "e1";
  return update_from(args);
}

std::string usage_error_of(const std::string& value, std::optional<std::string> at = {}) {
  try {
    update_of(value, std::move(at));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AddCommandTest, AddReadsAWholeNumberAndAnRfc3339Time) {
  const service::Update u = update_of("-42", "2026-11-22T14:03:00Z");
  EXPECT_EQ(u.board, "points");
  EXPECT_EQ(u.member, "alice");
  EXPECT_EQ(u.event_id, "e1");
  EXPECT_EQ(u.value, -42);
  ASSERT_TRUE(u.at.has_value());
  EXPECT_EQ(format_rfc3339(*u.at), "2026-11-22T14:03:00.000Z");
  EXPECT_FALSE(update_of("7").at.has_value());
}

TEST(AddCommandTest, AddRefusesAValueThatIsNotAWholeNumberNamingIt) {
  for (const char* bad : {"", "1.5", "12x", "x", " 1", "99999999999999999999"}) {
    EXPECT_EQ(usage_error_of(bad), "value '" + std::string(bad) + "' is not a whole number");
  }
  EXPECT_EQ(usage_error_of("1", "yesterday"),
            "--at 'yesterday' is not an RFC 3339 time (2026-11-22T14:03:00Z)");
}

service::UpdateResult result(service::UpdateStatus status, std::string reason = "") {
  service::UpdateResult r;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

service::Standing standing(std::int64_t rank, std::int64_t points) {
  return service::Standing{rank, "alice", points, std::nullopt};
}

TEST(AddCommandTest, AddPrintsAnAppliedUpdatePerPeriodAsTextOrJsonAsTheHttpWriteAnswers) {
  const service::Update u = update_of("5");
  service::Written w{result(service::UpdateStatus::applied), {}};
  w.result.points = {{"daily", "2026-11-22", 15}, {"alltime", "alltime", 40}};
  w.periods = {{"daily", "2026-11-22", standing(4, 10), standing(2, 15), false},
               {"alltime", "alltime", std::nullopt, standing(9, 40), true}};
  const AddReport text = report_of(u, w, false);
  EXPECT_EQ(text.out, "applied to points / alice:  daily 2026-11-22 = 15  alltime alltime = 40\n");
  EXPECT_EQ(text.err, "");
  EXPECT_EQ(text.exit_code, 0);
  const AddReport json = report_of(u, w, true);
  EXPECT_EQ(json.out,
            "{\"board\":\"points\",\"member\":\"alice\",\"applied\":true,\"periods\":["
            "{\"period\":\"daily\",\"period_id\":\"2026-11-22\",\"points\":15,\"rank\":2,"
            "\"previous_rank\":4},"
            "{\"period\":\"alltime\",\"period_id\":\"alltime\",\"points\":40,\"rank\":9,"
            "\"improved\":true}]}\n");
  EXPECT_EQ(json.out, api::written_json("points", "alice", w) + "\n");
  EXPECT_EQ(json.exit_code, 0);
}

TEST(AddCommandTest, AddPrintsADuplicateAsDoneAndARefusalOrFailureAsExitOne) {
  const service::Update u = update_of("5");
  service::Written dup{result(service::UpdateStatus::duplicate, "event e1 was applied before"),
                       {{"daily", "2026-11-22", std::nullopt, standing(1, 5), false}}};
  EXPECT_EQ(report_of(u, dup, false).out, "not applied again: event e1 was applied before\n");
  EXPECT_EQ(report_of(u, dup, true).out,
            "{\"board\":\"points\",\"member\":\"alice\",\"applied\":false,\"duplicate\":"
            "true,\"periods\":[{\"period\":\"daily\",\"period_id\":\"2026-11-22\",\"points\":"
            "5,\"rank\":1}]}\n");
  EXPECT_EQ(report_of(u, dup, true).exit_code, 0);
  for (const auto& [status, word] : {std::pair{service::UpdateStatus::refused, "refused"},
                                     std::pair{service::UpdateStatus::failed, "failed"}}) {
    const service::Written r{result(status, "because"), {}};
    const AddReport text = report_of(u, r, false);
    EXPECT_EQ(text.out, "");
    EXPECT_EQ(text.err, std::string(word) + ": because\n");
    EXPECT_EQ(text.exit_code, 1);
    const AddReport json = report_of(u, r, true);
    EXPECT_EQ(json.out, "{\"status\":\"" + std::string(word) +
                            "\",\"board\":\"points\",\"member\":\"alice\",\"reason\":"
                            "\"because\"}\n");
    EXPECT_EQ(json.err, text.err);
    EXPECT_EQ(json.exit_code, 1);
  }
}

TEST(AddCommandTest, AddThrowsUnavailableWhenTheOutcomeIsNotLasting) {
  const service::Update u = update_of("5");
  for (const auto status : {service::UpdateStatus::unavailable, service::UpdateStatus::waiting}) {
    EXPECT_THROW(report_of(u, service::Written{result(status, "redis down"), {}}, false),
                 UnavailableError);
  }
}

TEST(ArgumentCheckTest, CheckRangeNamesTheFlagTheValueTheRangeAndTheHint) {
  EXPECT_NO_THROW(check_range("-n", 1, 1, 1000));
  EXPECT_NO_THROW(check_range("-n", 1000, 1, 1000));
  try {
    check_range("-n", 0, 1, 1000, "how many to show");
    FAIL() << "0 is outside [1, 1000]";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "-n 0 is outside [1, 1000]: how many to show");
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
  }
  try {
    check_range("-k", 1001, 0, 1000);
    FAIL() << "1001 is outside [0, 1000]";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "-k 1001 is outside [0, 1000]");
  }
}

constexpr const char* kConfig = R"(
boards:
  - name: points
    periods: [daily]
    timezone: Asia/Shanghai
    max_points: 1000000
    retention: {default: 30d}
)";

class StandingsOutputTest : public ::testing::Test {
 protected:
  Config config = parse_config(kConfig, "cli_test.yaml", {});
  service::PeriodRef ref() const {
    service::PeriodRef r;
    r.config = &config.boards.front();
    r.spec = &r.config->periods.front();
    r.board = "points";
    r.period = Period{"2026-11-22", *parse_rfc3339("2026-11-21T16:00:00Z"),
                      *parse_rfc3339("2026-11-22T16:00:00Z")};
    return r;
  }
};

TEST_F(StandingsOutputTest, TextHasAHeaderInTheBoardsZoneAndAlignedRowsWithControlCharsEscaped) {
  service::Standing a{1, "al\nice", 30, parse_rfc3339("2026-11-22T01:00:00Z")};
  // The name given at construction: assigning it afterwards makes GCC 12 warn
  // (maybe-uninitialized, inside std::optional) in the sanitizer build.
  const service::Standing b{2, "bob", 7, std::nullopt, std::string("Bob")};
  std::ostringstream out;
  const auto r = ref();
  print_standings(out, false, r, {a, b});
  EXPECT_EQ(out.str(),
            "points daily 2026-11-22  (2026-11-22T00:00:00+08:00 .. 2026-11-23T00:00:00+08:00)\n"
            "  rank  member         points  achieved_at               name\n"
            "     1  al\\nice            30  2026-11-22T01:00:00.000Z\n"
            "     2  bob                 7  -                         Bob\n");
}

TEST_F(StandingsOutputTest, TextSaysSoWhenThereAreNoMembersAndJsonPrintsNothing) {
  std::ostringstream text;
  std::ostringstream json;
  const auto r = ref();
  print_standings(text, false, r, {});
  print_standings(json, true, r, {});
  EXPECT_EQ(text.str(),
            "points daily 2026-11-22  (2026-11-22T00:00:00+08:00 .. 2026-11-23T00:00:00+08:00)\n"
            "  (no members)\n");
  EXPECT_EQ(json.str(), "");
}

TEST_F(StandingsOutputTest, JsonIsOneObjectPerMemberWithThePeriod) {
  service::Standing a{1, "alice", 30, std::nullopt};
  std::ostringstream out;
  const auto r = ref();
  print_standings(out, true, r, {a});
  EXPECT_EQ(out.str(),
            "{\"board\":\"points\",\"period\":\"daily\",\"period_id\":\"2026-11-22\","
            "\"period_start\":\"2026-11-21T16:00:00.000Z\",\"period_end\":"
            "\"2026-11-22T16:00:00.000Z\",\"rank\":1,\"member\":\"alice\",\"points\":30,"
            "\"achieved_at\":null}\n");
}

}  // namespace
}  // namespace bk::cli
