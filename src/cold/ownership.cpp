// The schema's deployment row and shared keys (see ownership.h). Claims are an INSERT that does
// nothing on conflict followed by a read: every process gets the first that was stored.
#include "cold/ownership.h"

#include "cold/pg.h"
#include "cold/rows.h"
#include "core/error.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

std::string to_hex(std::string_view bytes) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string from_hex(std::string_view hex) {
  const auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1]));
  }
  return out;
}

namespace {

// Rethrows a missing table or schema as the advice to migrate; anything else as it is.
[[noreturn]] void throw_unless_missing(const Link& l, const pqxx::sql_error& e) {
  if (e.sqlstate() != "42P01" && e.sqlstate() != "3F000") throw;  // no table, no schema
  throw UsageError("schema " + l.schema + " (" + l.where +
                   ") is not migrated to this version of boardkeeper: run `boardkeeper "
                   "migrate` first");
}

}  // namespace

Ownership::Ownership(std::shared_ptr<Link> link) : link_(std::move(link)) {}

std::optional<Deployment> Ownership::owner() {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading the schema's deployment",
                 [&]() -> std::optional<Deployment> {
                   pqxx::nontransaction n(*session.conn);
                   pqxx::result r;
                   try {
                     r = n.exec("SELECT id, key_prefix, redis_address FROM " + l.q + ".deployment");
                   } catch (const pqxx::sql_error& e) {
                     throw_unless_missing(l, e);
                   }
                   if (r.empty()) return std::nullopt;
                   return Deployment{r[0][0].as<std::string>(), r[0][1].as<std::string>(),
                                     r[0][2].as<std::string>()};
                 });
}

Deployment Ownership::claim(const Deployment& me) {
  Link& l = *link_;
  check_text("deployment", me.id + me.key_prefix + me.redis_address);
  Session& session = l.use();
  guarded(l, &session, "claiming the schema", [&] {
    // Two statements, each with its own snapshot: the SELECT sees the row of a claimer
    // that committed while the INSERT waited for it.
    pqxx::nontransaction n(*session.conn);
    n.exec_params("INSERT INTO " + l.q +
                      ".deployment (id, key_prefix, redis_address) VALUES ($1, $2, $3)"
                      " ON CONFLICT (one_row) DO NOTHING",
                  me.id, me.key_prefix, me.redis_address);
    return 0;
  });
  const auto found = owner();
  if (!found) throw PostgresError(l.where + ": the claim of schema " + l.schema + " vanished");
  return *found;
}

bool Ownership::update(const std::string& owner_id, const Deployment& me) {
  Link& l = *link_;
  check_text("deployment", me.id + me.key_prefix + me.redis_address);
  Session& session = l.use();
  return guarded(l, &session, "updating the schema's deployment", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::result r = n.exec_params(
        "UPDATE " + l.q +
            ".deployment SET id = $2, key_prefix = $3, redis_address = $4 WHERE id IN ($1, $2)",
        owner_id, me.id, me.key_prefix, me.redis_address);
    return r.affected_rows() == 1;
  });
}

std::string Ownership::shared_key(const std::string& name, const std::string& candidate) {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading the deployment's " + name + " key", [&] {
    // Two statements, each with its own snapshot: the SELECT sees the key of a process that
    // committed while the INSERT waited for it. Hex on the wire: no binary parameters.
    pqxx::nontransaction n(*session.conn);
    try {
      n.exec_params("INSERT INTO " + l.q +
                        ".serve_keys (name, key) VALUES ($1, decode($2, 'hex'))"
                        " ON CONFLICT (name) DO NOTHING",
                    name, to_hex(candidate));
    } catch (const pqxx::sql_error& e) {
      throw_unless_missing(l, e);
    }
    const pqxx::row r = n.exec_params1(
        "SELECT encode(key, 'hex') FROM " + l.q + ".serve_keys WHERE name = $1", name);
    return from_hex(r[0].as<std::string>());
  });
}

}  // namespace bk::cold
