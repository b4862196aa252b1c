// Helpers for integration tests: the test servers, a key prefix of each test's own (so
// tests run in parallel on one Redis), configs from text, and running the real binary.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"
#include "redis/connection.h"

namespace bk::test {

// BK_TEST_REDIS_URL as tests/run.sh sets it; fails the test when it is missing.
std::string redis_url();
redis::Connection connect_redis();

// A prefix no other test uses, e.g. "t3f9a1c".
std::string unique_prefix();

// A config whose redis section points at the test server with this prefix and whose
// boards section is `boards_yaml` (a YAML sequence, indented by two spaces).
std::string config_text(const std::string& prefix, const std::string& boards_yaml);
Config make_config(const std::string& prefix, const std::string& boards_yaml);
// Writes config_text to a temp file and returns its path.
std::string write_config(const std::string& prefix, const std::string& boards_yaml);

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs the boardkeeper binary with these arguments (no shell interpretation of them).
RunResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// Every key that starts with prefix (SCAN; for tests only: the product never scans).
std::vector<std::string> keys_with_prefix(redis::Connection& conn, const std::string& prefix);

}  // namespace bk::test
