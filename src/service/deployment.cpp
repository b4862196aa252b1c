// The deployment check: Redis marker against the schema's owner, four cases.
#include "service/deployment.h"

#include <spdlog/spdlog.h>

#include <cstdint>
#include <optional>
#include <random>

#include "core/error.h"
#include "hot/deployment.h"
#include "redis/url.h"

namespace bk::service {

redis::Options redis_options(const RedisConfig& config) {
  redis::Options o = redis::parse_url(config.url);
  o.tls.ca_file = config.tls.ca_file;  // used with rediss:// (o.tls.enabled)
  o.tls.cert_file = config.tls.cert_file;
  o.tls.key_file = config.tls.key_file;
  o.tls.server_name = config.tls.server_name;
  o.cluster = config.cluster;
  for (const std::string& node : config.nodes) {
    const redis::Options seed = redis::parse_url(node);
    o.seeds.emplace_back(seed.host, seed.port);
  }
  return o;
}

namespace {

std::string new_id() {
  std::random_device rd;
  std::uniform_int_distribution<std::uint64_t> any;
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(any(rd)),
                static_cast<unsigned long long>(any(rd)));
  return text;
}

std::string sql_literal(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

std::string who(const std::string& address, const std::string& prefix) {
  return "Redis " + address + " with key prefix '" + prefix + "'";
}

// The schema's owner has another id than this data set's marker.
UsageError another_deployment(const std::string& schema, const cold::Deployment& owner,
                              const cold::Deployment& me) {
  return UsageError(
      "schema " + schema + " belongs to another deployment: " +
      who(owner.redis_address, owner.key_prefix) + ". This deployment is " +
      who(me.redis_address, me.key_prefix) + ", a different data set (its " + me.key_prefix +
      ":deployment marker is not the schema's). Two data sets in one schema would archive and "
      "delete each other's rows, so nothing was written. Give this deployment a schema of its "
      "own (postgres.schema), or point redis.url and redis.key_prefix at the other "
      "deployment's data. To hand the schema over on purpose (the other deployment is gone "
      "for good), run: UPDATE \"" +
      schema + "\".deployment SET id = " + sql_literal(me.id) + ", key_prefix = " +
      sql_literal(me.key_prefix) + ", redis_address = " + sql_literal(me.redis_address) + ";");
}

// The schema has an owner elsewhere, and this data set has no marker.
UsageError unknown_data_set(const std::string& schema, const cold::Deployment& owner,
                            const cold::Deployment& me) {
  return UsageError(
      "schema " + schema + " belongs to the deployment of " +
      who(owner.redis_address, owner.key_prefix) + ", and " + who(me.redis_address, me.key_prefix) +
      " has no deployment marker (" + me.key_prefix +
      ":deployment): nothing was written. If this Redis now holds that deployment's data "
      "(it moved, or was restored or replaced), hand the schema over on purpose, then run "
      "again: UPDATE \"" +
      schema + "\".deployment SET key_prefix = " + sql_literal(me.key_prefix) +
      ", redis_address = " + sql_literal(me.redis_address) +
      "; Otherwise give this deployment a schema of its own (postgres.schema).");
}

}  // namespace

std::string redis_address(const redis::Options& options) {
  const std::string db = std::to_string(options.db);
  if (!options.unix_path.empty()) return "unix://" + options.unix_path + "?db=" + db;
  const bool v6 = options.host.find(':') != std::string::npos;
  return (v6 ? "[" + options.host + "]" : options.host) + ":" + std::to_string(options.port) + "/" +
         db;
}

void verify_deployment(redis::Connection& redis, const std::string& key_prefix,
                       cold::ColdStore& cold, const std::string& schema) {
  cold::Deployment me{"", key_prefix, redis_address(redis.options())};
  std::optional<std::string> marker = hot::read_deployment_marker(redis, key_prefix);
  std::optional<cold::Deployment> owner = cold.deployment();
  if (!owner) {
    // Nobody has claimed the schema: this data set does, under its marker (made if missing).
    if (!marker) marker = hot::set_deployment_marker(redis, key_prefix, new_id());
    me.id = *marker;
    owner = cold.claim_deployment(me);
    if (owner->id == me.id) {
      spdlog::info("schema {} now belongs to this deployment ({})", schema,
                   who(me.redis_address, me.key_prefix));
      return;
    }
  }
  if (marker) {
    me.id = *marker;
    if (owner->id != me.id) throw another_deployment(schema, *owner, me);
    if (owner->redis_address != me.redis_address || owner->key_prefix != me.key_prefix) {
      // The same data set, moved (restored elsewhere, a new address): keep the record true.
      cold.update_deployment(owner->id, me);
      spdlog::info("schema {}: its deployment's data is now at {} (was {})", schema,
                   who(me.redis_address, me.key_prefix),
                   who(owner->redis_address, owner->key_prefix));
    }
    return;
  }
  // The schema has an owner and this data set has no marker: either the owner's Redis lost
  // its data (then PostgreSQL holds what survived, and this process must get to it), or this
  // is another Redis, refused unless an operator handed the schema over to its address.
  if (owner->redis_address != me.redis_address || owner->key_prefix != me.key_prefix) {
    throw unknown_data_set(schema, *owner, me);
  }
  // Taken back under a fresh id rather than the old one: should the old data set still be
  // around somewhere (a hand-over while it runs), it is refused from now on.
  me.id = hot::set_deployment_marker(redis, key_prefix, new_id());
  if (!cold.update_deployment(owner->id, me)) {
    const std::optional<cold::Deployment> now = cold.deployment();
    throw another_deployment(schema, now ? *now : *owner, me);
  }
  spdlog::warn(
      "{} had no deployment marker (its data was lost or flushed?) and is where schema {}'s "
      "deployment lives: it takes the schema back under a new marker",
      who(me.redis_address, me.key_prefix), schema);
}

}  // namespace bk::service
