// deploy/cron/boardkeeper.crontab, an /etc/cron.d file: every line is a comment, an
// environment assignment or an entry whose five time fields the project's own cron parser
// accepts, run as the boardkeeper user, with a boardkeeper command line that the built
// binary accepts. BK_CRONTAB=FILE checks another file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/cron.h"
#include "core/error.h"

namespace bk {
namespace {

const char* const kBinaryPath = "/usr/local/bin/boardkeeper";

std::string crontab_path() {
  const char* env = std::getenv("BK_CRONTAB");
  return env != nullptr && *env != '\0' ? env : BK_SOURCE_DIR "/deploy/cron/boardkeeper.crontab";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

struct Entry {
  int line = 0;
  std::string schedule;  // the five time fields
  std::string user;
  std::string command;
};

// NAME=value (spaces around = allowed), as cron reads environment settings. (No std::regex:
// GCC 12 warns inside it under -fsanitize, and the build uses -Werror.)
bool is_assignment(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos ||
      !(std::isalpha(static_cast<unsigned char>(line[i])) || line[i] == '_'))
    return false;
  while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
    ++i;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i < line.size() && line[i] == '=';
}

// Characters that need no shell quoting.
bool is_plain_word(const std::string& w) {
  if (w.empty()) return false;
  for (const char c : w) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("_./:=@,+-").find(c) == std::string_view::npos)
      return false;
  }
  return true;
}

// Comments, blank lines and NAME=value lines are not entries; everything else must be one.
std::vector<Entry> entries(const std::string& text) {
  std::vector<Entry> out;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (is_assignment(line)) continue;
    const auto words = split_words(line);
    Entry e;
    e.line = n;
    if (words.size() < 7) {
      ADD_FAILURE() << "line " << n << ": want 5 time fields, a user and a command: " << line;
      continue;
    }
    for (int i = 0; i < 5; ++i) e.schedule += (i ? " " : "") + words[static_cast<std::size_t>(i)];
    e.user = words[5];
    for (std::size_t i = 6; i < words.size(); ++i) e.command += (i > 6 ? " " : "") + words[i];
    out.push_back(e);
  }
  return out;
}

// The arguments given to boardkeeper in an entry's command, up to the first shell operator.
std::vector<std::string> boardkeeper_args(const Entry& e) {
  const auto words = split_words(e.command);
  std::vector<std::string> args;
  bool in = false;
  for (const auto& w : words) {
    if (!in) {
      in = w == kBinaryPath;
      continue;
    }
    if (w == "|" || w == "||" || w == "&&" || w == ";" || w[0] == '>' || w[0] == '<' ||
        w.rfind("2>", 0) == 0 || w.rfind("1>", 0) == 0)
      break;
    args.push_back(w);
  }
  return args;
}

class Crontab : public ::testing::Test {
 protected:
  void SetUp() override {
    text_ = read_file(crontab_path());
    entries_ = entries(text_);
  }
  std::string text_;
  std::vector<Entry> entries_;
};

TEST_F(Crontab, EndsWithANewline) {
  // cron ignores (or refuses) a last line without one.
  ASSERT_FALSE(text_.empty());
  EXPECT_EQ(text_.back(), '\n');
}

TEST_F(Crontab, EveryEntryHasValidTimeFieldsAUserAndAnAbsoluteBoardkeeper) {
  ASSERT_FALSE(entries_.empty()) << crontab_path() << " has no entry";
  bool ticks = false;
  for (const auto& e : entries_) {
    SCOPED_TRACE("line " + std::to_string(e.line));
    try {
      CronSchedule::parse(e.schedule);
    } catch (const UsageError& err) {
      ADD_FAILURE() << "time fields '" << e.schedule << "': " << err.what();
    }
    EXPECT_EQ(e.user, "boardkeeper") << "the user field: entries run as boardkeeper";
    EXPECT_NE(e.command.find(kBinaryPath), std::string::npos)
        << "the command runs " << kBinaryPath << ": " << e.command;
    // An unescaped % ends the command for cron and feeds the rest to its stdin.
    for (std::size_t i = 0; i < e.command.size(); ++i) {
      if (e.command[i] == '%' && (i == 0 || e.command[i - 1] != '\\'))
        ADD_FAILURE() << "unescaped % in the command: " << e.command;
    }
    const auto args = boardkeeper_args(e);
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "tick" && (i == 0 || args[i - 1] != "--config")) ticks = true;
    }
  }
  EXPECT_TRUE(ticks) << "no entry runs boardkeeper tick";
}

// Each entry's boardkeeper command line, run by the built binary with the example config and
// Redis and PostgreSQL pointed at a closed loopback port, gets past the command line: exit
// 3 (unreachable). A misspelt flag or a global option after the command would be exit 2.
TEST_F(Crontab, CommandLinesAreAcceptedByTheBinary) {
  ASSERT_EQ(setenv("BOARDKEEPER_REDIS_URL", "redis://127.0.0.1:1/0", 1), 0);
  ASSERT_EQ(setenv("BOARDKEEPER_POSTGRES_URL", "postgresql://boardkeeper@127.0.0.1:1/boards", 1),
            0);
  for (const auto& e : entries_) {
    SCOPED_TRACE("line " + std::to_string(e.line));
    auto args = boardkeeper_args(e);
    ASSERT_FALSE(args.empty()) << "no boardkeeper arguments in: " << e.command;
    std::string cmd = BK_BINARY;
    for (std::size_t i = 0; i < args.size(); ++i) {
      ASSERT_TRUE(is_plain_word(args[i]))
          << "argument '" << args[i] << "' needs shell quoting, which this test does not read";
      if (i > 0 && args[i - 1] == "--config") args[i] = BK_SOURCE_DIR "/config/boardkeeper.yaml";
      cmd += " '" + args[i] + "'";
    }
    cmd += " >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << cmd;
    EXPECT_EQ(WEXITSTATUS(status), 3) << cmd;
  }
}

}  // namespace
}  // namespace bk
