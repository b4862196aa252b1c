// A config for the service's server-free tests: Redis and PostgreSQL at addresses nothing
// listens on (the tests' tiers are in-memory fakes), and the boards given.
#pragma once
#include <string>

#include "config/config.h"

namespace bk::service::testing {

inline Config server_free_config(const std::string& boards_yaml) {
  return parse_config(R"(redis:
  url: redis://127.0.0.1:1/0
  key_prefix: t
postgres:
  url: postgresql://boardkeeper@127.0.0.1:1/boards
boards:
)" + boards_yaml,
                      "test.yaml", {});
}

}  // namespace bk::service::testing
