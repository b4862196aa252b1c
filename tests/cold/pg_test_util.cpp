#include "pg_test_util.h"

#include <cstdlib>
#include <random>
#include <stdexcept>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <pqxx/pqxx>
#pragma GCC diagnostic pop

namespace bk::cold::test {

std::string postgres_url() {
  const char* url = std::getenv("BK_TEST_POSTGRES_URL");
  if (url == nullptr || *url == '\0') {
    throw std::runtime_error(
        "BK_TEST_POSTGRES_URL is not set: run the tests through tests/run.sh, or start a "
        "PostgreSQL (deploy/local/setup.sh: bk_start_postgres) and export its URL");
  }
  return url;
}

std::string unique_schema() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "t_";
  for (int i = 0; i < 12; ++i) out += kHex[rng() % 16];
  return out;
}

void exec_sql(const std::string& sql) {
  pqxx::connection c(postgres_url());
  pqxx::quiet_errorhandler quiet(c);
  pqxx::nontransaction n(c);
  n.exec(sql);
}

std::int64_t query_int(const std::string& sql) {
  pqxx::connection c(postgres_url());
  pqxx::nontransaction n(c);
  return n.exec1(sql)[0].as<std::int64_t>();
}

TempSchema::TempSchema() : name_(unique_schema()) {}

TempSchema::TempSchema(std::string name) : name_(std::move(name)) {
  exec_sql("DROP SCHEMA IF EXISTS \"" + name_ + "\" CASCADE");
}

TempSchema::~TempSchema() {
  try {
    exec_sql("DROP SCHEMA IF EXISTS \"" + name_ + "\" CASCADE");
  } catch (const std::exception&) {  // the test itself reports what went wrong
  }
}

}  // namespace bk::cold::test

// libpqxx 6.4 leaks a libpq result when the connection breaks in the middle of a statement
// (its error path, not ours); the tests that kill connections on purpose would otherwise
// fail under LeakSanitizer (BK_SANITIZE=ON). Unused in other builds.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpqxx-6.4.so\n";
}
