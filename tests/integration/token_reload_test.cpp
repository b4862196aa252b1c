// serve re-reads its tokens on SIGHUP (docs/operations.md, rotation): a rotated write token
// holds from the next request on, the old one is refused; a reload whose sources are bad keeps
// the old tokens, names the file's line in the log and never a token; both counted in
// boardkeeper_token_reloads_total. Real Redis and PostgreSQL behind a running serve.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "harness.h"
#include "served.h"

namespace bk {
namespace {

using test::Answer;
using test::Served;

const char* const kBoards = test::kOneBoard;

constexpr const char* kNow = "2026-11-25T12:00:00Z";
const std::string kOld = "old-writer-3c9e";
const std::string kNew = "new-writer-a71d";
const std::string kReader = "reader-token-55f0";
const std::string kNewReader = "new-reader-0d2b";

class TokenReloadTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string write_file = "/tmp/" + prefix + "-write-tokens";
  std::string read_file = "/tmp/" + prefix + "-read-tokens";
  std::string config_path;
  std::string log = "/tmp/" + prefix + "-serve.log";

  void SetUp() override {
    std::ofstream(write_file) << "# game servers\n" << kOld << "\n";
    std::ofstream(read_file) << kReader << "\n";
    config_path = test::write_text_config(prefix, test::config_text(prefix, kBoards) +
                                                      "serve:\n  write_tokens_file: " + write_file +
                                                      "\n  tokens_file: " + read_file + "\n");
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  static int write(Served& s, const std::string& token) {
    return s
        .post("/v1/boards/pts/members/ann/scores", R"({"value": 1})",
              {{"Authorization", "Bearer " + token}})
        .status;
  }
  static int read(Served& s, const std::string& token) {
    return s.get("/v1/boards/pts/daily/top", {{"Authorization", "Bearer " + token}}).status;
  }
  // Sends SIGHUP and waits (up to 10 s) for the log's `count`-th line containing `phrase`.
  void reload(Served& s, const std::string& phrase, int count) {
    ASSERT_EQ(kill(s.pid(), SIGHUP), 0);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (occurrences(phrase) < count) {
      ASSERT_LT(std::chrono::steady_clock::now(), until) << "no '" << phrase << "' in\n"
                                                         << test::read_file(log);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  int occurrences(const std::string& phrase) const {
    const std::string text = test::read_file(log);
    int n = 0;
    for (auto at = text.find(phrase); at != std::string::npos; at = text.find(phrase, at + 1)) ++n;
    return n;
  }
  std::string metrics(Served& s) const { return s.get("/metrics").text; }
};

TEST_F(TokenReloadTest, ARotatedWriteTokenHoldsAfterSighupAndTheOldOneIsRefused) {
  Served s(config_path, log, kNow);
  ASSERT_EQ(write(s, kOld), 200);
  ASSERT_EQ(write(s, kNew), 401);
  std::ofstream(write_file) << "# rotated\n" << kNew << " boards=pts\n";
  std::ofstream(read_file) << kNewReader << "\n";
  reload(s, "tokens reloaded", 1);
  EXPECT_EQ(write(s, kOld), 401);
  EXPECT_EQ(write(s, kNew), 200);
  EXPECT_EQ(read(s, kReader), 401) << "every source is read again";
  EXPECT_EQ(read(s, kNewReader), 200);
  EXPECT_NE(test::read_file(log).find("tokens reloaded on SIGHUP: 1 read, 0 admin, 1 write"),
            std::string::npos)
      << test::read_file(log);
  EXPECT_NE(metrics(s).find(R"(boardkeeper_token_reloads_total{result="ok"} 1)"), std::string::npos)
      << metrics(s);
}

TEST_F(TokenReloadTest, ABadSourceOnReloadKeepsTheOldTokensAndNamesItsLine) {
  Served s(config_path, log, kNow);
  ASSERT_EQ(write(s, kOld), 200);
  // A scope that is not boards= on line 3; a file of comments alone; a write token that is
  // also the read token; the read file gone: each refused whole, the old tokens kept.
  std::ofstream(write_file) << "# rotated\n" << kOld << "\n" << kNew << " scope=pts\n";
  reload(s, "tokens not reloaded", 1);
  EXPECT_NE(test::read_file(log).find(write_file + ":3: after the token, only boards="),
            std::string::npos)
      << test::read_file(log);
  std::ofstream(write_file) << "# nothing yet\n";
  reload(s, "tokens not reloaded", 2);
  EXPECT_NE(test::read_file(log).find("names no token"), std::string::npos);
  std::ofstream(write_file) << kNew << "\n" << kReader << "\n";
  reload(s, "tokens not reloaded", 3);
  EXPECT_NE(test::read_file(log).find(write_file + ":2: this write token is also a read token (" +
                                      read_file + ":1)"),
            std::string::npos)
      << test::read_file(log);
  std::ofstream(write_file) << kNew << "\n";
  std::remove(read_file.c_str());
  reload(s, "tokens not reloaded", 4);
  EXPECT_EQ(write(s, kOld), 200) << "the old tokens stay";
  EXPECT_EQ(write(s, kNew), 401);
  EXPECT_EQ(read(s, kReader), 200);
  EXPECT_NE(metrics(s).find(R"(boardkeeper_token_reloads_total{result="failed"} 4)"),
            std::string::npos)
      << metrics(s);
  std::ofstream(read_file) << kReader << "\n";
  reload(s, "tokens reloaded", 1);
  EXPECT_EQ(write(s, kNew), 200) << "a good reload after bad ones";
  EXPECT_EQ(write(s, kOld), 401);
  const std::string text = test::read_file(log);
  for (const std::string& secret : {kOld, kNew, kReader, kNewReader}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in\n" << text;
  }
}

}  // namespace
}  // namespace bk
