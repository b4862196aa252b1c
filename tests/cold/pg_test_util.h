// Helpers for the cold tier tests: the test PostgreSQL, a schema of each test's own (so
// tests run in parallel on one database) and plain SQL to inspect it.
#pragma once
#include <cstdint>
#include <string>

namespace bk::cold::test {

// BK_TEST_POSTGRES_URL as tests/run.sh sets it; throws (the test fails) when it is missing.
std::string postgres_url();

// A schema name no other test uses, e.g. "t_3f9a1c0b2d4e".
std::string unique_schema();

// Plain SQL on a connection of its own.
void exec_sql(const std::string& sql);
std::int64_t query_int(const std::string& sql);

// A unique schema, dropped (CASCADE) when the test ends.
class TempSchema {
 public:
  TempSchema();
  explicit TempSchema(std::string name);  // a fixed name, dropped first if left over
  ~TempSchema();
  TempSchema(const TempSchema&) = delete;
  TempSchema& operator=(const TempSchema&) = delete;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace bk::cold::test
