// The config's redis and postgres sections: URLs (checked by redis/url's rules), cluster
// seeds, TLS files, the key prefix and the schema.
#include <algorithm>
#include <cctype>
#include <tuple>

#include "config/loader.h"
#include "core/redact.h"
#include "core/text.h"
#include "redis/url.h"

namespace bk::config_detail {
namespace {

bool is_sql_identifier(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (!((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

const std::vector<std::string_view> kRedisKeys{"url", "key_prefix", "cluster", "nodes", "tls"};
const std::vector<std::string_view> kTlsKeys{"ca_file", "cert_file", "key_file", "server_name"};
const std::vector<std::string_view> kPostgresKeys{"url", "schema", "read_url"};

}  // namespace

std::optional<std::string> postgres_url_problem(std::string_view url) {
  for (const std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (starts_with(url, scheme) && url.size() > scheme.size()) return std::nullopt;
  }
  return "is not a PostgreSQL URL (" + describe_url_scheme(url) +
         "); expected postgresql://[user[:password]@]host[:port]/dbname";
}

void Loader::parse_redis(const Entry& entry, RedisConfig& redis, const ConfigOverrides& overrides) {
  const auto map = read_map(entry, "redis");
  if (!map) return;
  const Fields f = fields(*map, "in the redis section", kRedisKeys);
  parse_redis_url(f, redis, overrides);
  // The URL connected to: the override's when there is one (checked after the file).
  const std::string effective_url = overrides.redis_url ? *overrides.redis_url : redis.url;
  if (const auto e = f.get("tls")) parse_tls(*e, redis.tls);
  if (const auto e = f.get("cluster")) {
    if (const auto v = read_choice<bool>(*e, "redis.cluster", {{"true", true}, {"false", false}})) {
      redis.cluster = *v;
    }
  }
  if (const auto e = f.get("nodes")) parse_nodes(*e, effective_url, redis);
  if (redis.cluster) check_cluster_url(f, entry, redis);
  parse_key_prefix(f, redis);
}

void Loader::parse_redis_url(const Fields& f, RedisConfig& redis,
                             const ConfigOverrides& overrides) {
  const auto e = f.get("url");
  if (!e) return;
  const auto url = read_string(*e, "redis.url");
  if (url) add_url_secrets(*url);
  // An overridden URL need not be valid in the file (it may be a placeholder).
  if (!url || overrides.redis_url) return;
  if (const auto problem = redis::scheme_problem(*url)) {
    report(*e, "redis.url " + *problem);
  } else {
    redis.url = *url;
  }
}

// The seeds of a Redis Cluster, each reached like `effective_url`.
void Loader::parse_nodes(const Entry& entry, const std::string& effective_url, RedisConfig& redis) {
  if (!entry.value.is_sequence()) {
    report(entry, "redis.nodes must be a list of seed URLs (e.g. [redis://10.0.0.2:6379]), not " +
                      kind_of(entry.value));
  } else {
    for (const auto item : entry.value.items()) {
      if (!item.is_scalar()) {
        report(item, "redis.nodes must hold URLs, not " + kind_of(item));
        continue;
      }
      const std::string& url = item.scalar();
      add_url_secrets(url);
      if (const auto problem = redis::seed_problem(url, effective_url)) {
        report(item, "redis.nodes: " + *problem);
        continue;
      }
      redis.nodes.push_back(url);
    }
  }
  if (!redis.nodes.empty() && !redis.cluster) {
    report(entry, "redis.nodes lists seeds of a Redis Cluster: set redis.cluster: true too");
  }
}

// The file's url must reach a cluster (shown at the url, else at the section).
void Loader::check_cluster_url(const Fields& f, const Entry& section, const RedisConfig& redis) {
  if (const auto problem = redis::cluster_url_problem(redis.url)) {
    const auto url_entry = f.get("url");
    report(url_entry ? *url_entry : section, "redis.url: " + *problem);
  }
}

void Loader::parse_key_prefix(const Fields& f, RedisConfig& redis) {
  const auto e = f.get("key_prefix");
  if (!e) return;
  const auto prefix = read_string(*e, "redis.key_prefix");
  if (!prefix) return;
  const bool bad = std::any_of(prefix->begin(), prefix->end(), [](char c) {
    return c == '{' || c == '}' || std::isspace(static_cast<unsigned char>(c)) != 0 ||
           std::iscntrl(static_cast<unsigned char>(c)) != 0;
  });
  if (prefix->empty() || bad) {
    report(*e, "redis.key_prefix " + quoted(*prefix) +
                   " must be non-empty and contain no '{', '}' or whitespace (braces would "
                   "break the boards' Redis Cluster hash tags)");
  } else {
    redis.key_prefix = *prefix;
  }
}

void Loader::parse_tls(const Entry& entry, RedisTlsConfig& tls) {
  const auto map = read_map(entry, "redis.tls");
  if (!map) return;
  const Fields f = fields(*map, "in redis.tls", kTlsKeys);
  const std::pair<std::string_view, std::string*> keys[] = {{"ca_file", &tls.ca_file},
                                                            {"cert_file", &tls.cert_file},
                                                            {"key_file", &tls.key_file},
                                                            {"server_name", &tls.server_name}};
  for (const auto& [key, out] : keys) {
    if (const auto e = f.get(key)) {
      if (auto v = read_string(*e, "redis.tls." + std::string(key))) *out = std::move(*v);
    }
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    report(entry,
           "redis.tls: cert_file and key_file go together (the client certificate of "
           "mutual TLS and its key); set both or neither");
  }
}

void Loader::parse_postgres(const Entry& entry, PostgresConfig& postgres,
                            const ConfigOverrides& overrides) {
  const auto map = read_map(entry, "postgres");
  if (!map) return;
  const Fields f = fields(*map, "in the postgres section", kPostgresKeys);
  for (const auto& [key, into, overridden] :
       {std::tuple{"url", &postgres.url, overrides.postgres_url.has_value()},
        {"read_url", &postgres.read_url, overrides.postgres_read_url.has_value()}}) {
    const auto e = f.get(key);
    if (!e) continue;
    const std::string name = std::string("postgres.") + key;
    const auto url = read_string(*e, name);
    if (url) add_url_secrets(*url);
    if (!url || overridden) continue;
    const bool none = url->empty() && into == &postgres.read_url;  // "": no replica
    if (const auto problem = none ? std::nullopt : postgres_url_problem(*url)) {
      report(*e, name + " " + *problem);
    } else {
      *into = *url;
    }
  }
  if (const auto e = f.get("schema")) {
    if (const auto schema = read_string(*e, "postgres.schema")) {
      if (!is_sql_identifier(*schema)) {
        report(*e, "postgres.schema " + quoted(*schema) +
                       " must be a plain SQL identifier: lower-case letters, digits and _, "
                       "not starting with a digit, at most 63 bytes");
      } else {
        postgres.schema = *schema;
      }
    }
  }
}

}  // namespace bk::config_detail
