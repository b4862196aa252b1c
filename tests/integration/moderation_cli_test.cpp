// The moderation commands' exit codes and output (cli/moderation.cpp) against the real
// binary, Redis and PostgreSQL: reset and drop without --yes exit 2 naming --yes and change
// nothing; remove exits 1 "not on the board" when the member was on none of the periods, 0
// with a line per period it was removed from (text or JSON); bad arguments exit 2.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"
#include "service/leaderboards.h"

namespace bk {
namespace {

const char* kBoards = R"(  - name: points
    periods: [daily, weekly]
    max_points: 1000000
    hot_keep: 100
    display: 5
    retention: {default: 30d}
)";

constexpr const char* kNow = "2026-11-25T12:00:00Z";

class ModerationCliTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(prefix, kBoards);

  void SetUp() override {
    ASSERT_EQ(cli({"migrate"}).exit_code, 0);
    ASSERT_EQ(cli({"add", "points", "alice", "10"}).exit_code, 0);
    ASSERT_EQ(cli({"add", "points", "bob", "20"}).exit_code, 0);
  }
  test::RunResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path, "--now", kNow});
    return test::run_cli(args);
  }
  std::string top() { return cli({"top", "points", "daily"}).out; }
};

TEST_F(ModerationCliTest, ResetAndDropWithoutYesExit2NamingYesAndChangeNothing) {
  const std::string before = top();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"reset", "points", "daily"},
        std::vector<std::string>{"reset", "points", "daily", "--json"},
        std::vector<std::string>{"drop", "points"},
        std::vector<std::string>{"drop", "points", "--history"}}) {
    const test::RunResult r = cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("--yes"), std::string::npos) << r.err;
  }
  EXPECT_EQ(top(), before);
  EXPECT_NE(before.find("alice"), std::string::npos) << before;
}

TEST_F(ModerationCliTest, RemoveExits1NotOnTheBoardWhenOnNoneOfThePeriods) {
  const test::RunResult r = cli({"remove", "points", "nobody"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("not on the board"), std::string::npos) << r.err;
  const test::RunResult one = cli({"remove", "points", "nobody", "--period", "daily"});
  EXPECT_EQ(one.exit_code, 1) << one.err;
  const test::RunResult json = cli({"remove", "points", "nobody", "--json"});
  EXPECT_EQ(json.exit_code, 1) << json.err;
  EXPECT_NE(json.out.find(R"("removed":false)"), std::string::npos) << json.out;
}

TEST_F(ModerationCliTest, RemoveSaysWhatItRemovedPerPeriodThenIsNotOnTheBoard) {
  const test::RunResult r = cli({"remove", "points", "alice"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("removed alice from points daily 2026-11-25: hot 1, cold 0, history 0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("removed alice from points weekly "), std::string::npos) << r.out;
  EXPECT_EQ(top().find("alice"), std::string::npos) << top();
  EXPECT_EQ(cli({"remove", "points", "alice"}).exit_code, 1) << "removed already";
  const test::RunResult json = cli({"remove", "points", "bob", "--period", "daily", "--json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find(R"("removed":true)"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find(R"("period":"daily","period_id":"2026-11-25")"), std::string::npos)
      << json.out;
  EXPECT_EQ(json.out.find("weekly"), std::string::npos) << "only the period named" << json.out;
}

TEST_F(ModerationCliTest, ResetAndDropWithYesSayWhatTheyRemoved) {
  const test::RunResult reset = cli({"reset", "points", "daily", "--yes"});
  EXPECT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_EQ(reset.out, "reset points daily 2026-11-25: hot 2, cold 0, history 0\n");
  EXPECT_EQ(top().find("alice"), std::string::npos) << top();
  const test::RunResult again = cli({"reset", "points", "daily", "--yes", "--json"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find(R"("period":"daily","period_id":"2026-11-25","archived":false,)"
                           R"("hot":0,"cold":0,"history":0)"),
            std::string::npos)
      << again.out;
  const test::RunResult drop = cli({"drop", "points", "--yes"});
  EXPECT_EQ(drop.exit_code, 0) << drop.err;
  EXPECT_NE(drop.out.find("dropped points weekly "), std::string::npos) << drop.out;
  EXPECT_NE(drop.out.find(": hot 2, cold 0, history 0\n"), std::string::npos) << drop.out;
  EXPECT_NE(drop.out.find("dropped points: profiles "), std::string::npos) << drop.out;
  const test::RunResult json = cli({"drop", "points", "--yes", "--json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find(R"({"board":"points","history":false,"periods":[],)"), std::string::npos)
      << json.out;
}

TEST_F(ModerationCliTest, BanUnbanAndBansSayWhatTheyDid) {
  const test::RunResult ban = cli({"ban", "points", "bob", "--reason", "aimbot"});
  EXPECT_EQ(ban.exit_code, 0) << ban.err;
  EXPECT_NE(ban.out.find("banned bob from points (reason: aimbot)\n"), std::string::npos)
      << ban.out;
  EXPECT_NE(ban.out.find("removed bob from points daily 2026-11-25: hot 1, cold 0, history 0"),
            std::string::npos)
      << ban.out;
  const test::RunResult add = cli({"add", "points", "bob", "5"});
  EXPECT_EQ(add.exit_code, 1) << "a banned member's event is refused: " << add.out << add.err;
  const test::RunResult again = cli({"ban", "points", "bob", "--json"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find(R"("newly_banned":false)"), std::string::npos) << again.out;
  const test::RunResult list = cli({"bans", "points"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("points: 1 ban\n"), std::string::npos) << list.out;
  const test::RunResult json = cli({"bans", "points", "--json"});
  EXPECT_NE(json.out.find(R"({"board":"points","member":"bob","reason":"",)"), std::string::npos)
      << "the second ban set the reason to none: " << json.out;
  EXPECT_EQ(cli({"unban", "points", "bob"}).out, "unbanned bob on points\n");
  EXPECT_EQ(cli({"unban", "points", "bob"}).out, "was not banned: bob on points\n");
  EXPECT_EQ(cli({"bans", "points"}).out, "points: 0 bans\n");
  EXPECT_EQ(cli({"add", "points", "bob", "5"}).exit_code, 0) << "unbanned: applied again";
}

TEST_F(ModerationCliTest, BadArgumentsExit2) {
  EXPECT_EQ(cli({"remove", "nope", "alice"}).exit_code, 2);
  EXPECT_EQ(cli({"remove", "points", "alice", "--period", "monthly"}).exit_code, 2);
  EXPECT_EQ(cli({"remove", "points", "alice", "--period-id", "2026-11-25"}).exit_code, 2);
  EXPECT_EQ(cli({"ban", "points", "alice", "--reason", std::string(513, 'r')}).exit_code, 2);
  EXPECT_EQ(cli({"reset", "points", "monthly", "--yes"}).exit_code, 2);
  EXPECT_EQ(cli({"bans", "nope"}).exit_code, 2);
  EXPECT_NE(top().find("alice"), std::string::npos) << "nothing was removed";
}

}  // namespace
}  // namespace bk
