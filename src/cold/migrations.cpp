// Schema migrations (see migrations.h): an advisory lock per schema serialises concurrent
// callers, and each migration commits with its row in schema_migrations.
#include "cold/migrations.h"

#include <algorithm>
#include <vector>

#include "cold/pg.h"
#include "embedded/cold_migrations.h"

namespace bk::cold {

using pg::guarded;
using pg::Link;
using pg::Session;

std::int64_t migration_lock_key(const std::string& schema) {
  // FNV-1a of a fixed prefix and the schema.
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : "boardkeeper.migrate." + schema) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<std::int64_t>(h);
}

Migrations::Migrations(std::shared_ptr<Link> link) : link_(std::move(link)) {}

int Migrations::apply() {
  int applied = 0;
  while (apply_next()) ++applied;
  return applied;
}

bool Migrations::apply_next() {
  Link& l = *link_;
  Session& session = l.use();
  const std::int64_t lock_key = migration_lock_key(l.schema);
  return guarded(l, &session, "migrating schema " + l.schema, [&] {
    pqxx::work w(*session.conn);
    // A migration may rightly wait long for its locks (behind another migrate, or a
    // running archive): no lock_timeout here (see pg::Link::use).
    w.exec0("SET LOCAL lock_timeout = 0");
    // Serialises concurrent migrate() calls for this schema, before anything is created.
    w.exec_params("SELECT pg_advisory_xact_lock($1)", lock_key);
    w.exec0("CREATE SCHEMA IF NOT EXISTS " + l.q);
    w.exec0("CREATE TABLE IF NOT EXISTS " + l.q +
            ".schema_migrations (version int PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())");
    std::vector<int> done;
    for (const auto& r : w.exec("SELECT version FROM " + l.q + ".schema_migrations")) {
      done.push_back(r[0].as<int>());
    }
    for (const embedded::Migration& m : embedded::kMigrations) {
      if (std::find(done.begin(), done.end(), m.version) != done.end()) continue;
      w.exec(pg::replace_all(std::string(m.text), "{{schema}}", l.q), std::string(m.name));
      w.exec_params0("INSERT INTO " + l.q + ".schema_migrations (version, name) VALUES ($1, $2)",
                     m.version, std::string(m.name));
      w.commit();
      return true;
    }
    w.commit();
    return false;
  });
}

int Migrations::version() {
  Link& l = *link_;
  Session& session = l.use();
  return guarded(l, &session, "reading the schema version", [&] {
    pqxx::nontransaction n(*session.conn);
    const pqxx::row r =
        n.exec_params1("SELECT to_regclass($1) IS NOT NULL", l.q + ".schema_migrations");
    if (!r[0].as<bool>()) return 0;
    return n.exec1("SELECT coalesce(max(version), 0) FROM " + l.q + ".schema_migrations")[0]
        .as<int>();
  });
}

}  // namespace bk::cold
