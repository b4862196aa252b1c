// The cold store's pure parts, without a server: its statement tables (complete, well formed),
// how a spill orders and splits its rows, the hex of shared keys and the migration lock key.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "cold/cold_tier.h"
#include "cold/migrations.h"
#include "cold/ownership.h"
#include "cold/statements.h"
#include "core/error.h"

namespace bk::cold {
namespace {

const std::string kSchema = "\"bk_test\"";

// Every literal "<prefix>..." in src/cold/*.cpp, with how often it occurs.
std::map<std::string, int> statement_names_in_sources(const std::string& prefix) {
  std::map<std::string, int> names;
  for (const auto& entry : std::filesystem::directory_iterator(BK_SOURCE_DIR "/src/cold")) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    // "<prefix>[a-z_]+" (scanned by hand: GCC 12 warns inside std::regex under ASan).
    const std::string open = "\"" + prefix;
    for (std::size_t at = s.find(open); at != std::string::npos; at = s.find(open, at + 1)) {
      std::size_t end = at + open.size();
      while (end < s.size() &&
             (std::islower(static_cast<unsigned char>(s[end])) || s[end] == '_')) {
        ++end;
      }
      if (end > at + open.size() && end < s.size() && s[end] == '"') {
        ++names[s.substr(at + 1, end - at - 1)];
      }
    }
  }
  return names;
}

// The tables of one connection kind and the prefix of their statement names.
struct Prepared {
  const char* prefix;
  StatementTable table;
};

std::vector<Prepared> connections() {
  return {{"bk_cold_", cold_store_statements(kSchema)},
          {"bk_archive_", history_statements(kSchema)}};
}

TEST(ColdStatementTables, NamesAreUniqueAndPrefixed) {
  for (const Prepared& c : connections()) {
    std::set<std::string> seen;
    for (const Statement& s : c.table) {
      EXPECT_EQ(s.name.rfind(c.prefix, 0), 0U) << s.name;
      EXPECT_TRUE(seen.insert(s.name).second) << s.name << " is registered twice";
    }
  }
}

TEST(ColdStatementTables, EveryStatementRunAnywhereIsRegisteredAndEveryRegisteredOneIsRun) {
  for (const Prepared& c : connections()) {
    std::set<std::string> registered;
    for (const Statement& s : c.table) registered.insert(s.name);
    const std::map<std::string, int> in_sources = statement_names_in_sources(c.prefix);
    ASSERT_FALSE(in_sources.empty()) << "no " << c.prefix << " names under " BK_SOURCE_DIR;
    for (const auto& [name, count] : in_sources) {
      EXPECT_EQ(registered.count(name), 1U) << name << " is run but never prepared";
    }
    for (const std::string& name : registered) {
      // Once in its table, at least once where it runs.
      const auto it = in_sources.find(name);
      EXPECT_TRUE(it != in_sources.end() && it->second >= 2)
          << name << " is prepared but never run";
    }
  }
}

TEST(ColdStatementTables, ParametersRunFromOneWithoutGapsAndTablesAreInTheSchema) {
  // PostgreSQL cannot prepare a statement whose parameter numbers have a gap (it cannot infer
  // the missing one's type).
  for (const Prepared& c : connections()) {
    for (const Statement& s : c.table) {
      std::set<int> numbers;
      for (std::size_t at = s.sql.find('$'); at != std::string::npos;
           at = s.sql.find('$', at + 1)) {
        std::size_t end = at + 1;
        while (end < s.sql.size() && std::isdigit(static_cast<unsigned char>(s.sql[end]))) ++end;
        if (end > at + 1) numbers.insert(std::stoi(s.sql.substr(at + 1, end - at - 1)));
      }
      if (!numbers.empty()) {
        EXPECT_EQ(*numbers.begin(), 1) << s.name;
        EXPECT_EQ(*numbers.rbegin(), static_cast<int>(numbers.size())) << s.name << ": " << s.sql;
      }
      const bool advisory_lock = s.sql.find("_advisory_") != std::string::npos;
      EXPECT_TRUE(advisory_lock || s.sql.find(kSchema + ".") != std::string::npos)
          << s.name << " names no table of the schema";
    }
  }
}

TEST(ColdStatementTables, TheVersionSequenceIsNamedAsAStringConstant) {
  for (const Statement& s : spill_statements(kSchema)) {
    if (s.name != "bk_cold_next_version") continue;
    EXPECT_NE(s.sql.find("nextval('\"bk_test\".cold_version')"), std::string::npos) << s.sql;
    return;
  }
  FAIL() << "bk_cold_next_version is not in the spill table";
}

ColdRow row(const std::string& member, std::int64_t encoded) {
  return ColdRow{member, encoded, encoded, std::nullopt};
}

TEST(SpillRows, SortedByMemberWithTheLastRowOfAMemberWinning) {
  const std::vector<ColdRow> rows{row("b", 1), row("a", 2), row("b", 3), row("c", 4)};
  const SpillRows spill = spill_rows(rows, {});
  ASSERT_EQ(spill.all.size(), 3U);
  EXPECT_EQ(spill.all[0]->member, "a");
  EXPECT_EQ(spill.all[1]->member, "b");
  EXPECT_EQ(spill.all[1]->encoded, 3);
  EXPECT_EQ(spill.all[2]->member, "c");
  EXPECT_TRUE(spill.fresh.empty());
  EXPECT_EQ(spill.upserted.size(), 3U);
}

TEST(SpillRows, RowsPromisedAbsentAreFreshAndMissingPromisesAreNone) {
  const std::vector<ColdRow> rows{row("x", 1), row("y", 2), row("z", 3)};
  const SpillRows spill = spill_rows(rows, {true, false});
  ASSERT_EQ(spill.fresh.size(), 1U);
  EXPECT_EQ(spill.fresh[0]->member, "x");
  ASSERT_EQ(spill.upserted.size(), 2U);
  EXPECT_EQ(spill.upserted[0]->member, "y");
  EXPECT_EQ(spill.upserted[1]->member, "z");
}

TEST(SpillRows, AMemberWithANulByteIsRefusedByName) {
  const std::vector<ColdRow> rows{row(std::string("a\0b", 3), 1)};
  try {
    spill_rows(rows, {});
    FAIL() << "a NUL byte was accepted";
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find("member"), std::string::npos) << e.what();
  }
}

TEST(SharedKeyHex, EveryByteRoundTrips) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
  const std::string hex = to_hex(bytes);
  EXPECT_EQ(hex.size(), 512U);
  EXPECT_EQ(hex.substr(0, 8), "00010203");
  EXPECT_EQ(hex.substr(504), "fcfdfeff");
  EXPECT_EQ(from_hex(hex), bytes);
}

TEST(MigrationLockKey, IsTheSameInEveryProcessAndDiffersBySchema) {
  // FNV-1a of "boardkeeper.migrate.bk_test": a change would let an old and a new binary
  // migrate one schema at once.
  EXPECT_EQ(migration_lock_key("bk_test"), 8873406952123222288);
  EXPECT_NE(migration_lock_key("bk_test"), migration_lock_key("bk_test2"));
}

}  // namespace
}  // namespace bk::cold
