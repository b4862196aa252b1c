// Schema migrations: the embedded sql/NNN_*.sql files applied in order, each in its own
// transaction, recorded in <schema>.schema_migrations. Part of cold::ColdStore.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace bk::cold {

namespace pg {
struct Link;
}

// The advisory lock key that serialises migrations of `schema`: the same in every process.
std::int64_t migration_lock_key(const std::string& schema);

class Migrations {
 public:
  explicit Migrations(std::shared_ptr<pg::Link> link);

  // See ColdStore::migrate and schema_version.
  int apply();
  int version();

 private:
  // Applies the first migration not yet applied; false when there was none.
  bool apply_next();
  std::shared_ptr<pg::Link> link_;
};

}  // namespace bk::cold
