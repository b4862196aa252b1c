// The cursor key from the environment or from the deployment's PostgreSQL schema.
#include "cli/cursor_key.h"

#include <openssl/rand.h>

#include <cstdlib>

#include "api/cursor.h"
#include "cold/cold_store.h"
#include "core/error.h"
#include "core/redact.h"

namespace bk::cli {
namespace {

constexpr const char* kEnv = "BOARDKEEPER_CURSOR_KEY";

std::string random_key() {
  std::string key(api::kMinCursorKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    throw Error("cursor key: OpenSSL's RAND_bytes failed");
  }
  return key;
}

}  // namespace

std::function<std::string()> cursor_key_provider(const PostgresConfig& postgres) {
  if (const char* env = std::getenv(kEnv)) {
    std::string key(env);
    add_secret(key);  // never printed, whatever happens
    if (key.size() < api::kMinCursorKeyBytes) {
      throw UsageError(std::string(kEnv) + " is " + std::to_string(key.size()) +
                       " bytes; it must be at least " + std::to_string(api::kMinCursorKeyBytes) +
                       " (the same on every replica of the deployment)");
    }
    return [key] { return key; };
  }
  return [url = postgres.url, schema = postgres.schema] {
    cold::ColdStore store(url, schema);
    std::string key = store.shared_key("cursor", random_key());
    add_secret(key);
    return key;
  };
}

}  // namespace bk::cli
