// Who owns a schema: the deployment row (sql/003_deployment.sql) that ties it to one Redis data
// set, and the keys that deployment shares (sql/010_serve_keys.sql). Part of cold::ColdStore.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cold/types.h"

namespace bk::cold {

namespace pg {
struct Link;
}

// Bytes as lower-case hex and back: keys travel as text (no binary parameters in libpqxx 6).
std::string to_hex(std::string_view bytes);
std::string from_hex(std::string_view hex);

class Ownership {
 public:
  explicit Ownership(std::shared_ptr<pg::Link> link);

  // See ColdStore::deployment, claim_deployment, update_deployment and shared_key.
  std::optional<Deployment> owner();
  Deployment claim(const Deployment& me);
  bool update(const std::string& owner_id, const Deployment& me);
  std::string shared_key(const std::string& name, const std::string& candidate);

 private:
  std::shared_ptr<pg::Link> link_;
};

}  // namespace bk::cold
