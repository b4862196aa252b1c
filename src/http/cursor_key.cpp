// The cursor key from the environment or from the deployment's PostgreSQL schema (with a
// copy in Redis for when PostgreSQL is down).
#include "http/cursor_key.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <optional>

#include "api/cursor.h"
#include "cold/cold_store.h"
#include "core/error.h"
#include "core/redact.h"
#include "hot/deployment.h"
#include "redis/connection.h"
#include "service/deployment.h"

namespace bk::http {
namespace {

constexpr const char* kEnv = "BOARDKEEPER_CURSOR_KEY";

std::string random_key() {
  std::string key(api::kMinCursorKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    throw Error("cursor key: OpenSSL's RAND_bytes failed");
  }
  return key;
}

// The copy Redis keeps of the key, for when PostgreSQL is down; nullopt when Redis has none
// or cannot be asked either.
std::optional<std::string> copy_in_redis(const redis::Options& options, const std::string& prefix) {
  try {
    redis::Connection conn(options);
    auto copy = hot::read_cursor_key_copy(conn, prefix);
    if (copy && copy->size() >= api::kMinCursorKeyBytes) {
      add_secret(*copy);
      return copy;
    }
  } catch (const Error& e) {
    spdlog::warn("cursor key: Redis's copy cannot be read either: {}", e.what());
  }
  return std::nullopt;
}

// Best effort: a process that cannot write the copy now leaves it to the next one.
void keep_in_redis(const redis::Options& options, const std::string& prefix,
                   const std::string& key) {
  try {
    redis::Connection conn(options);
    if (hot::read_cursor_key_copy(conn, prefix) != key)
      hot::keep_cursor_key_copy(conn, prefix, key);
  } catch (const Error& e) {
    spdlog::warn("cursor key: cannot keep its copy in Redis: {}", e.what());
  }
}

}  // namespace

std::function<std::string()> cursor_key_provider(const Config& config) {
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
  return [url = config.postgres.url, schema = config.postgres.schema,
          redis = service::redis_options(config.redis), prefix = config.redis.key_prefix] {
    std::string key;
    try {
      cold::ColdStore store(url, schema);
      key = store.shared_key("cursor", random_key());
    } catch (const Error& e) {
      if (!e.transient() || e.backend() != Backend::postgres) throw;
      if (auto copy = copy_in_redis(redis, prefix)) return *copy;
      throw;  // PostgreSQL's failure: the request is a 503 naming it
    }
    add_secret(key);
    keep_in_redis(redis, prefix, key);
    return key;
  };
}

}  // namespace bk::http
