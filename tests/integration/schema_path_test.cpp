// The schema keeps the way to a distributed PostgreSQL open (docs/operations.md, "Beyond one
// PostgreSQL"): with `board` as the distribution column (Citus), a table can be distributed
// only when every primary key and unique constraint of it includes that column. Checked on
// a freshly migrated schema, so that a migration that breaks the rule fails here; the tables
// without a `board` column are the deployment's own (reference or local tables), listed so
// that a new one is a decision, not an accident.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "harness.h"

namespace bk {
namespace {

std::set<std::string> lines_of(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

// "table:index" of every unique index (primary keys and unique constraints included) of a
// table in `schema` that has a board column, where the index leaves that column out.
std::set<std::string> unique_indexes_without_board(const std::string& schema) {
  return lines_of(test::psql(
      "SELECT c.relname || ':' || i.relname FROM pg_index x"
      " JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid"
      " JOIN pg_namespace n ON n.oid = c.relnamespace"
      " JOIN pg_attribute b ON b.attrelid = c.oid AND b.attname = 'board' AND NOT b.attisdropped"
      " WHERE n.nspname = '" +
      schema + "' AND x.indisunique AND NOT (b.attnum = ANY (x.indkey)) ORDER BY 1"));
}

// Tables (partitions included) of `schema`, with or without a board column.
std::set<std::string> tables(const std::string& schema, bool with_board) {
  return lines_of(test::psql(
      "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
      " WHERE n.nspname = '" +
      schema + "' AND c.relkind IN ('r', 'p') AND " + (with_board ? "" : "NOT ") +
      "EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'board'"
      " AND NOT a.attisdropped) ORDER BY 1"));
}

class SchemaPathTest : public ::testing::Test {
 protected:
  std::string prefix = test::unique_prefix();
  std::string config_path = test::write_config(
      prefix,
      "  - name: pts\n    periods: [daily]\n    max_points: 100\n    retention: {default: 30d}\n");

  void SetUp() override {
    ASSERT_EQ(test::run_cli({"--config", config_path, "migrate"}).exit_code, 0);
  }
  void TearDown() override { test::psql("DROP SCHEMA IF EXISTS " + prefix + " CASCADE"); }
};

TEST_F(SchemaPathTest, EveryUniqueConstraintOfAPerBoardTableIncludesTheBoard) {
  const std::set<std::string> per_board = tables(prefix, true);
  for (const char* table : {"cold_members", "cold_pages", "periods", "history_rows",
                            "history_large", "profiles", "bans"}) {
    EXPECT_EQ(per_board.count(table), 1U) << table << " is not among " << per_board.size();
  }
  const std::set<std::string> wrong = unique_indexes_without_board(prefix);
  EXPECT_TRUE(wrong.empty()) << "unique without board: " << *wrong.begin();
  // The deployment's own tables: the reference (or coordinator-local) ones.
  EXPECT_EQ(tables(prefix, false),
            (std::set<std::string>{"deployment", "erasures", "schema_migrations", "serve_keys"}));
}

// The check finds what it looks for: a per-board table with a key that leaves board out.
TEST_F(SchemaPathTest, TheCheckFindsAUniqueConstraintWithoutTheBoard) {
  test::psql("CREATE TABLE " + prefix +
             ".bad (board text NOT NULL, member text NOT NULL, PRIMARY KEY (member))");
  test::psql("CREATE TABLE " + prefix +
             ".good (board text NOT NULL, member text NOT NULL, UNIQUE (member, board))");
  EXPECT_EQ(unique_indexes_without_board(prefix), (std::set<std::string>{"bad:bad_pkey"}));
}

}  // namespace
}  // namespace bk
